package core

import (
	"context"
	"fmt"
	"strings"

	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/schemas"
)

// MemoStage is the store's memo stage of runs: key MemoKey, value the run record's digest.
const MemoStage = "run"

// MemoStore is what the memoised run needs of the store: the memo, and the run records
// with a check that every part a record names (its steps' outputs) is still there.
type MemoStore interface {
	data.Memos
	GetJSON(d schemas.Digest, v any) error
	// Missing lists what is lost at or below d (nil when d is whole); catalog.Catalog
	// has it.
	Missing(d schemas.Digest) []string
}

// RunFunc runs one spec in a fresh container (Core.Run is one).
type RunFunc func(ctx context.Context, spec Spec) (*schemas.Run, schemas.Digest, error)

// MemoKey is the memo key of a run: the spec's key (Key), the id of the image it runs on,
// a salt that keeps runs of different purposes apart ("" for verify's, recheck's and the
// study's; "eval", "agent-repro") and the repeat (verify --repeat's i; 0 otherwise).
func MemoKey(spec Spec, imageID, salt string, repeat int) (schemas.Digest, error) {
	k, err := Key(spec)
	if err != nil {
		return schemas.Digest{}, err
	}
	return schemas.DigestOf(struct {
		Spec    schemas.Digest `json:"spec"`
		ImageID string         `json:"image_id"`
		Salt    string         `json:"salt,omitempty"`
		Repeat  int            `json:"repeat"`
	}{k, imageID, salt, repeat})
}

// Memoised is the one memoised run every stage calls (verify, recheck, eval, run, propose
// and the study): the memo answers when it holds a run of the same key whose record and
// every part it names are in the store (a run with lost parts is run again, and the memo
// then points at the new record); otherwise run runs the spec, and a run on another image
// than imageID (the image was rebuilt during the run) is an infrastructure fault, never
// memoised. cached says whether the memo answered.
func Memoised(ctx context.Context, st MemoStore, run RunFunc, spec Spec, imageID, salt string, repeat int) (r *schemas.Run, d schemas.Digest, cached bool, err error) {
	key, err := MemoKey(spec, imageID, salt, repeat)
	if err != nil {
		return nil, schemas.Digest{}, false, err
	}
	if d, err := st.Memo(MemoStage, key); err == nil {
		var r schemas.Run
		if err := st.GetJSON(d, &r); err == nil && len(st.Missing(d)) == 0 {
			return &r, d, true, nil
		}
	}
	r, d, err = run(ctx, spec)
	if err != nil {
		return nil, d, false, err
	}
	if r.ImageID != "" && r.ImageID != imageID && !strings.HasPrefix(r.ImageID, imageID) && !strings.HasPrefix(imageID, r.ImageID) {
		return nil, d, false, &InfraError{Err: fmt.Errorf("%s: the image changed during the run (%s, then %s): run envgap build-images, then run again", spec.InstanceID, imageID, r.ImageID)}
	}
	if err := st.SetMemo(MemoStage, key, d); err != nil {
		return nil, d, false, err
	}
	return r, d, false, nil
}
