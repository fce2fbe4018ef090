package submit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// MetadataFile is the bundle's description, at its root.
const MetadataFile = "metadata.yaml"

// MetadataVersion is the version of metadata.yaml's format.
const MetadataVersion = 1

// The leaderboard's setting (the dataset card's): envgap run, one run a task, up to 5
// attempts of 20 minutes each, ranked on the first attempt.
const (
	LeaderboardK           = 1
	LeaderboardMaxAttempts = 5
	LeaderboardTimeout     = 20 * time.Minute
)

// Agent names the agent and its version.
type Agent struct {
	Name    string `yaml:"name"`
	Version string `yaml:"version"`
}

// OpenSource says whether the agent's code and the model's weights are open. Pointers:
// both must be said, false included.
type OpenSource struct {
	Agent *bool `yaml:"agent"`
	Model *bool `yaml:"model"`
}

// Setting is how the results were made: the mode (eval or run), k runs a task, up to
// MaxAttempts attempts, each of AttemptTimeout (run only). Label names a setting other than
// the leaderboard's (shown with the entry); empty for the leaderboard's own.
type Setting struct {
	Mode           string `yaml:"mode"`
	K              int    `yaml:"k"`
	MaxAttempts    int    `yaml:"max_attempts"`
	AttemptTimeout string `yaml:"attempt_timeout,omitempty"`
	Label          string `yaml:"label,omitempty"`
}

// Leaderboard reports whether s is the leaderboard's setting, and if not, how it differs.
func (s Setting) Leaderboard() (bool, string) {
	var diff []string
	if s.Mode != "run" {
		diff = append(diff, fmt.Sprintf("mode %s (the leaderboard's runs are envgap run, with feedback)", s.Mode))
	}
	if s.K != LeaderboardK {
		diff = append(diff, fmt.Sprintf("k %d (the leaderboard's is %d)", s.K, LeaderboardK))
	}
	if s.MaxAttempts != LeaderboardMaxAttempts {
		diff = append(diff, fmt.Sprintf("up to %d attempts (the leaderboard's is %d)", s.MaxAttempts, LeaderboardMaxAttempts))
	}
	if s.Mode == "run" {
		switch d, err := time.ParseDuration(s.AttemptTimeout); {
		case s.AttemptTimeout == "":
			diff = append(diff, fmt.Sprintf("attempt timeout not recorded (the leaderboard's is %s; folders written before envgap recorded it: run again)", LeaderboardTimeout))
		case err != nil:
			diff = append(diff, fmt.Sprintf("attempt timeout %q is not a duration", s.AttemptTimeout))
		case d != LeaderboardTimeout:
			diff = append(diff, fmt.Sprintf("attempt timeout %s (the leaderboard's is %s)", d, LeaderboardTimeout))
		}
	}
	return len(diff) == 0, strings.Join(diff, ", ")
}

// Text says the setting in words: "run, k=1, up to 5 attempts of 20m0s".
func (s Setting) Text() string {
	if s.Mode != "run" {
		return fmt.Sprintf("%s, k=%d, %d attempt", s.Mode, s.K, s.MaxAttempts)
	}
	return fmt.Sprintf("run, k=%d, up to %d attempts of %s", s.K, s.MaxAttempts, s.AttemptTimeout)
}

// Entry is one result folder of the bundle.
type Entry struct {
	// Folder is the result folder's path in the bundle (results/<split>).
	Folder string `yaml:"folder"`
	Split  string `yaml:"split"`
	// Agent is the name the result folder gives the agent.
	Agent string `yaml:"agent"`
	Tasks int    `yaml:"tasks"`
	// ScoredOn is the UTC day the folder was written.
	ScoredOn string `yaml:"scored_on,omitempty"`
}

// Metadata is a bundle's metadata.yaml: what the submitter says (Meta) and what Prepare
// read from the result folders.
type Metadata struct {
	SchemaVersion int `yaml:"schema_version"`
	Meta          `yaml:",inline"`
	Setting       Setting `yaml:"setting"`
	CorpusID      string  `yaml:"corpus_id"`
	// Date is the UTC day the bundle was prepared.
	Date    string  `yaml:"date"`
	Results []Entry `yaml:"results"`
}

// Meta is what the submitter says of the entry (envgap submit prepare --meta FILE).
type Meta struct {
	Agent        Agent      `yaml:"agent"`
	Models       []string   `yaml:"models"`
	Organisation string     `yaml:"organisation"`
	OpenSource   OpenSource `yaml:"open_source"`
	// Label names a setting other than the leaderboard's (the meta file's setting.label).
	Label string `yaml:"-"`
	// Links are optional pages about the agent (a paper, the code).
	Links []string `yaml:"links,omitempty"`
}

// metaFile is the meta file's form: Meta and the setting's label.
type metaFile struct {
	Meta    `yaml:",inline"`
	Setting *struct {
		Label string `yaml:"label"`
	} `yaml:"setting"`
}

var versionRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+\-]*$`)

// ReadMeta reads and checks a meta file (YAML): agent.name, agent.version, models,
// organisation and open_source.agent / open_source.model are required; setting.label is
// optional; nothing else is allowed. Every problem is named by its field.
func ReadMeta(path string) (*Meta, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--meta: %w", err)
	}
	var mf metaFile
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&mf); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("--meta %s: empty; it needs agent.name, agent.version, models, organisation, open_source.agent and open_source.model (docs/submit.md)", path)
		}
		return nil, fmt.Errorf("--meta %s: %v (fields: agent.name, agent.version, models, organisation, open_source.agent, open_source.model, setting.label, links; docs/submit.md)", path, err)
	}
	m := mf.Meta
	if mf.Setting != nil {
		m.Label = strings.TrimSpace(mf.Setting.Label)
	}
	if probs := m.problems(); len(probs) > 0 {
		return nil, fmt.Errorf("--meta %s:\n  %s", path, strings.Join(probs, "\n  "))
	}
	return &m, nil
}

// problems lists what is wrong with m, each naming its field and what to write.
func (m *Meta) problems() []string {
	var p []string
	need := func(field, v, what string) {
		if strings.TrimSpace(v) == "" {
			p = append(p, fmt.Sprintf("%s: missing (%s)", field, what))
		}
	}
	need("agent.name", m.Agent.Name, "the agent's name as the leaderboard shows it")
	need("agent.version", m.Agent.Version, "the agent's version, e.g. 1.2.0 or a commit")
	if v := m.Agent.Version; strings.TrimSpace(v) != "" && !versionRe.MatchString(v) {
		p = append(p, fmt.Sprintf("agent.version: %q is not a version (letters, digits, '.', '_', '+', '-')", v))
	}
	if len(m.Models) == 0 {
		p = append(p, "models: missing (a list of the model ids the agent used, e.g. [claude-sonnet-4-5])")
	}
	for i, s := range m.Models {
		if strings.TrimSpace(s) == "" {
			p = append(p, fmt.Sprintf("models[%d]: empty (give the model's id)", i))
		}
	}
	need("organisation", m.Organisation, "who made the agent, or your own name")
	if m.OpenSource.Agent == nil {
		p = append(p, "open_source.agent: missing (true when the agent's code is public)")
	}
	if m.OpenSource.Model == nil {
		p = append(p, "open_source.model: missing (true when the model's weights are public)")
	}
	for i, l := range m.Links {
		if !strings.HasPrefix(l, "https://") {
			p = append(p, fmt.Sprintf("links[%d]: %q is not an https link", i, l))
		}
	}
	return p
}

// ReadMetadata reads a bundle's metadata.yaml (strictly: unknown fields are refused) and
// checks its Meta part.
func ReadMetadata(b []byte) (*Metadata, error) {
	var md Metadata
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&md); err != nil {
		return nil, fmt.Errorf("%s: %v", MetadataFile, err)
	}
	if md.SchemaVersion != MetadataVersion {
		return nil, fmt.Errorf("%s: schema_version %d, this envgap reads %d", MetadataFile, md.SchemaVersion, MetadataVersion)
	}
	md.Meta.Label = md.Setting.Label
	if probs := md.Meta.problems(); len(probs) > 0 {
		return nil, fmt.Errorf("%s:\n  %s", MetadataFile, strings.Join(probs, "\n  "))
	}
	return &md, nil
}
