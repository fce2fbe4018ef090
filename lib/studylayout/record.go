package studylayout

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/envgap/envgap/schemas"
)

// Layers is layers.json: D2 and D3 of a project's final state (the repaired copy, or the
// project as written when it worked first time), as package names of its ecosystem.
// envgap study run writes it from the project's last, successful run; a hand-made study
// may carry the sets it measured itself; envgap study report measures the projects that
// have none through the evaluation core.
type Layers struct {
	D2 []string `json:"d2"`
	D3 []string `json:"d3"`
	// D2Unreadable and D3Unreadable say why a layer could not be measured.
	D2Unreadable string `json:"d2_unreadable,omitempty"`
	D3Unreadable string `json:"d3_unreadable,omitempty"`
	// Run is the digest of the core's run record the sets come from, when there is one.
	Run schemas.Digest `json:"run,omitzero"`
}

// ParseLayers decodes a layers.json; unknown fields are errors.
func ParseLayers(b []byte) (*Layers, error) {
	var l Layers
	if err := strictJSON(b, &l); err != nil {
		return nil, err
	}
	if l.D2 == nil && l.D2Unreadable == "" {
		return nil, errors.New("d2 is missing (a list of package names, or d2_unreadable with the reason)")
	}
	if l.D3 == nil && l.D3Unreadable == "" {
		return nil, errors.New("d3 is missing (a list of package names, or d3_unreadable with the reason)")
	}
	return &l, nil
}

// Rounds is rounds.json: what envgap study run recorded of the protocol for one project.
type Rounds struct {
	Agent      string `json:"agent"`
	Model      string `json:"model,omitempty"`
	Variant    string `json:"variant"`
	MaxRepairs int    `json:"max_repairs"`
	// FirstRan is the round i* at which the project first ran (0: Gen alone); absent when
	// it never ran within the budget.
	FirstRan *int    `json:"first_ran,omitempty"`
	Rounds   []Round `json:"rounds"`
}

// Round is one Gen (round 0) or Repair round.
type Round struct {
	Round int `json:"round"`
	// Ran is set when the project resolved and ran: e(i) is empty.
	Ran bool `json:"ran"`
	// Step is the step that failed (resolve or run); empty when it ran.
	Step string `json:"step,omitempty"`
	// Error is e(i): the failing step's output, verbatim up to MaxErrorBytes (the tail,
	// where the error is), as the agent got it.
	Error string `json:"error,omitempty"`
	// SystemPackages are the Debian packages the project's setup.sh installs at this round.
	SystemPackages []string `json:"system_packages,omitempty"`
	// Run is the core's run record of this round.
	Run schemas.Digest `json:"run,omitzero"`
	// Agent says how the agent's turn ended (its exit, a timeout), in words.
	Agent string `json:"agent,omitempty"`
}

// MaxErrorBytes is how much of a failing step's output a round keeps and feeds back.
const MaxErrorBytes = 16 << 10

// ParseRounds decodes a rounds.json; unknown fields are errors.
func ParseRounds(b []byte) (*Rounds, error) {
	var r Rounds
	if err := strictJSON(b, &r); err != nil {
		return nil, err
	}
	for i, rd := range r.Rounds {
		if rd.Round != i {
			return nil, fmt.Errorf("rounds[%d] is round %d; rounds are numbered 0, 1, 2, ... in order", i, rd.Round)
		}
	}
	if r.FirstRan != nil && (*r.FirstRan >= len(r.Rounds) || *r.FirstRan < 0 || !r.Rounds[*r.FirstRan].Ran) {
		return nil, fmt.Errorf("first_ran is %d but that round did not run", *r.FirstRan)
	}
	return &r, nil
}

func strictJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("is not valid: %w", err)
	}
	if dec.More() {
		return errors.New("has more than one JSON value")
	}
	return nil
}
