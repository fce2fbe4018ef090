package agent

import "strings"

// Kind is what an agent spec (the --agent of run, propose and study run) names.
type Kind int

// The kinds of agents.
const (
	// KindCommand is an agent command, run with sh -c in the workspace.
	KindCommand Kind = iota
	// KindNoop and KindGold are the built-in agents that check the benchmark itself:
	// noop changes nothing, gold writes the reference fix.
	KindNoop
	KindGold
	// KindOpenAI and KindBedrock are envgap's own model agents (the loop of
	// lib/agent/loop with a model, acting in a box): openai speaks the OpenAI
	// chat-completions wire format (any compatible server with a base URL, the scripted
	// stand-in model too), bedrock Amazon Bedrock's.
	KindOpenAI
	KindBedrock
)

// Names of the agents envgap knows by name.
const (
	NameNoop    = "noop"
	NameGold    = "gold"
	NameOpenAI  = "openai"
	NameBedrock = "bedrock"
)

// Spec is an --agent value, parsed once: its kind, and the value as given (the
// command of an agent command).
type Spec struct {
	Kind Kind
	Raw  string
}

// ParseSpec reads an --agent value: noop, gold, openai, bedrock, or else an agent
// command.
func ParseSpec(s string) Spec {
	k := KindCommand
	switch s {
	case NameNoop:
		k = KindNoop
	case NameGold:
		k = KindGold
	case NameOpenAI:
		k = KindOpenAI
	case NameBedrock:
		k = KindBedrock
	}
	return Spec{Kind: k, Raw: s}
}

// String is the value as given.
func (s Spec) String() string { return s.Raw }

// Empty reports a spec of nothing but white space.
func (s Spec) Empty() bool { return strings.TrimSpace(s.Raw) == "" }

// IsModel reports one of envgap's own model agents (openai, bedrock).
func (s Spec) IsModel() bool { return s.Kind == KindOpenAI || s.Kind == KindBedrock }

// IsBuiltin reports one of the built-in agents that check the benchmark (noop, gold).
func (s Spec) IsBuiltin() bool { return s.Kind == KindNoop || s.Kind == KindGold }

// IsCommand reports an agent command.
func (s Spec) IsCommand() bool { return s.Kind == KindCommand }

// Set parses an --agent value (a flag's Value).
func (s *Spec) Set(v string) error { *s = ParseSpec(v); return nil }

// Type is the flag's type in help.
func (s *Spec) Type() string { return "string" }

// MarshalText is the value as given.
func (s Spec) MarshalText() ([]byte, error) { return []byte(s.Raw), nil }

// UnmarshalText parses the value.
func (s *Spec) UnmarshalText(b []byte) error { *s = ParseSpec(string(b)); return nil }
