package studylayout

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/envgap/envgap/schemas"
)

// Names inside a project folder of a study.
const (
	MetaFile     = "meta.json"
	WrittenDir   = "written"
	RepairedDir  = "repaired"
	PromptFile   = "prompt.txt"
	ProblemsFile = "problems.json"
	// RoundsFile is what envgap study run records of the protocol (see Rounds).
	RoundsFile = "rounds.json"
	// LayersFile holds D2 and D3 measured on the final project (see Layers).
	LayersFile = "layers.json"
)

// Limits on what one project may hold.
const (
	MaxFileBytes    = 2 << 20
	MaxProjectBytes = 16 << 20
	MaxProjectFiles = 2000
)

// Meta is a project's meta.json: what the study recorded about it.
type Meta struct {
	// CreatedAt is when the agent wrote the project (RFC 3339 with an offset).
	CreatedAt string `json:"created_at"`
	// WorkedFirstTime is set when the project ran in the clean container as written.
	WorkedFirstTime *bool `json:"worked_first_time"`
	// MadeToWork is set when the project ran in the end (first time or after repair).
	MadeToWork *bool `json:"made_to_work"`
	// RepairedAt is when the repaired project was saved; required when it was repaired.
	RepairedAt string `json:"repaired_at,omitempty"`
	// SystemPackages are the Debian/Ubuntu packages the repair installed with apt.
	SystemPackages []string `json:"system_packages,omitempty"`
	// RunCommand is the command that was traced; required when it was made to work.
	RunCommand string `json:"run_command,omitempty"`
	// ResolveCommand replaces the ecosystem's default install/build command.
	ResolveCommand string `json:"resolve_command,omitempty"`
	// Error is the line of output the project as written failed with.
	Error string `json:"error,omitempty"`
	// RepairChanges lists the project paths the study's notes say the repair changed.
	RepairChanges []string `json:"repair_changes,omitempty"`
	// Notes is free text from the study.
	Notes string `json:"notes,omitempty"`
	// RepairRounds is how many repair rounds the protocol ran: for a project made to work,
	// the round i* at which it first ran (0 when it worked first time); for one that was
	// not, the rounds spent. Optional (the hand-made study did not always record it);
	// envgap study report needs it for the repair-cycle buckets.
	RepairRounds *int `json:"repair_rounds,omitempty"`
	// ErrorClass is a hand annotation of the first round's error of a C++ project
	// (SystemLib, FetchFail or Other); without it, envgap study report classifies the
	// recorded error itself.
	ErrorClass string `json:"error_class,omitempty"`
}

// The classes of a C++ first-round error (the paper's Table 6).
const (
	ErrorSystemLib = "SystemLib" // a find_package/pkg-config failure for a system library
	ErrorFetchFail = "FetchFail" // a FetchContent network or archive error
	ErrorOther     = "Other"     // compilation, missing header, linker or runtime failures
)

// ParseMeta decodes and checks a meta.json. Unknown fields, missing required fields and
// contradictions are errors naming the field.
func ParseMeta(b []byte) (*Meta, error) {
	if !utf8.Valid(b) {
		return nil, errors.New("is not UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var m Meta
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("is not a valid meta object: %w", err)
	}
	if dec.More() {
		return nil, errors.New("has more than one JSON value")
	}
	var errs []string
	add := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	if m.CreatedAt == "" {
		add("created_at is missing (when the agent wrote the project, e.g. 2026-03-02T10:15:00Z)")
	} else if err := schemas.CheckTime(m.CreatedAt); err != nil {
		add("created_at: %v", err)
	}
	if m.WorkedFirstTime == nil {
		add("worked_first_time is missing (true or false)")
	}
	if m.MadeToWork == nil {
		add("made_to_work is missing (true or false)")
	}
	if m.RepairedAt != "" {
		if err := schemas.CheckTime(m.RepairedAt); err != nil {
			add("repaired_at: %v", err)
		}
	}
	if m.WorkedFirstTime != nil && m.MadeToWork != nil {
		switch {
		case *m.WorkedFirstTime && !*m.MadeToWork:
			add("worked_first_time is true but made_to_work is false; a project that worked first time was made to work")
		case *m.MadeToWork && !*m.WorkedFirstTime && m.RepairedAt == "":
			add("repaired_at is missing: a repaired project needs the time its repair was saved")
		}
		if *m.MadeToWork && strings.TrimSpace(m.RunCommand) == "" {
			add("run_command is missing: a project that was made to work needs the command that was traced")
		}
	}
	if m.CreatedAt != "" && m.RepairedAt != "" && schemas.CheckTime(m.CreatedAt) == nil && schemas.CheckTime(m.RepairedAt) == nil {
		c, _ := time.Parse(time.RFC3339, m.CreatedAt)
		r, _ := time.Parse(time.RFC3339, m.RepairedAt)
		if r.Before(c) {
			add("repaired_at %s is before created_at %s", m.RepairedAt, m.CreatedAt)
		}
	}
	if m.RepairRounds != nil {
		switch r := *m.RepairRounds; {
		case r < 0:
			add("repair_rounds is %d; it counts rounds (0 or more)", r)
		case m.WorkedFirstTime != nil && *m.WorkedFirstTime && r != 0:
			add("repair_rounds is %d but worked_first_time is true; a project that worked first time used 0 repair rounds", r)
		case m.WorkedFirstTime != nil && !*m.WorkedFirstTime && m.MadeToWork != nil && *m.MadeToWork && r == 0:
			add("repair_rounds is 0 but worked_first_time is false; a repaired project ran at round 1 or later")
		}
	}
	switch m.ErrorClass {
	case "", ErrorSystemLib, ErrorFetchFail, ErrorOther:
	default:
		add("error_class %q is not one of %s, %s, %s", m.ErrorClass, ErrorSystemLib, ErrorFetchFail, ErrorOther)
	}
	for i, p := range m.SystemPackages {
		if err := CheckPackageName(p); err != nil {
			add("system_packages[%d]: %v", i, err)
		}
	}
	for i, p := range m.RepairChanges {
		if err := schemas.CheckRelPath(p); err != nil {
			add("repair_changes[%d]: %v", i, err)
		}
	}
	if len(errs) > 0 {
		return nil, errors.New(strings.Join(errs, "; "))
	}
	return &m, nil
}

var (
	agentRe     = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	langTrialRe = regexp.MustCompile(`^([a-z+]+)-t([1-9][0-9]{0,3})$`)
	problemRe   = regexp.MustCompile(`^p_?0*([1-9][0-9]{0,5})$`)
)

// LanguageAliases maps the language folder names a study may use to ecosystems.
var LanguageAliases = map[string]schemas.Ecosystem{
	"python": schemas.EcosystemPython, "cpp": schemas.EcosystemCPP, "c++": schemas.EcosystemCPP,
	"java": schemas.EcosystemJava, "javascript": schemas.EcosystemJavaScript, "js": schemas.EcosystemJavaScript,
}

// Project locates one project of a study.
type Project struct {
	Rel      string // study-relative folder, slash-separated
	Dir      string // on disk
	Agent    string
	Language string // as in the folder name
	Eco      schemas.Ecosystem
	Trial    int
	Problem  int64
}

// Repo returns the card's repo field of a Lite project: <agent>/<language>-t<trial>,
// with the ecosystem's name as the language.
func (p Project) Repo() string { return fmt.Sprintf("%s/%s-t%d", p.Agent, p.Eco, p.Trial) }

// List walks STUDY/<agent>/<language>-t<trial>/p<N>/ and returns the project
// folders, sorted, and a reject for every folder that does not fit the layout.
func List(study string) ([]Project, []schemas.CrawlReject, error) {
	var out []Project
	var rejects []schemas.CrawlReject
	reject := func(rel, format string, a ...any) {
		rejects = append(rejects, schemas.CrawlReject{Ref: rel, Reason: fmt.Sprintf(format, a...)})
	}
	agents, err := os.ReadDir(study)
	if err != nil {
		return nil, nil, fmt.Errorf("study %s: %w", study, err)
	}
	for _, a := range agents {
		name := a.Name()
		if strings.HasPrefix(name, ".") || !a.IsDir() && a.Type()&fs.ModeSymlink == 0 {
			continue // files at the top (problems.json, README.md) and hidden entries
		}
		if a.Type()&fs.ModeSymlink != 0 {
			reject(name, "is a symbolic link; a study holds its projects in real folders")
			continue
		}
		if !agentRe.MatchString(name) {
			reject(name, "agent folder name %q has characters other than letters, digits, '.', '_' and '-'; rename it (it becomes part of the instance id)", name)
			continue
		}
		langs, err := os.ReadDir(filepath.Join(study, name))
		if err != nil {
			return nil, nil, fmt.Errorf("study %s: %w", study, err)
		}
		for _, l := range langs {
			lrel := name + "/" + l.Name()
			if strings.HasPrefix(l.Name(), ".") || l.Type().IsRegular() {
				continue
			}
			if !l.IsDir() {
				reject(lrel, "is not a folder (a symbolic link or special file); expected <language>-t<trial>/")
				continue
			}
			m := langTrialRe.FindStringSubmatch(l.Name())
			if m == nil {
				reject(lrel, "folder name is not <language>-t<trial> (e.g. cpp-t1, python-t2)")
				continue
			}
			eco, ok := LanguageAliases[m[1]]
			if !ok {
				reject(lrel, "language %q is not one of python, cpp, java, javascript", m[1])
				continue
			}
			trial, _ := strconv.Atoi(m[2])
			probs, err := os.ReadDir(filepath.Join(study, name, l.Name()))
			if err != nil {
				return nil, nil, fmt.Errorf("study %s: %w", study, err)
			}
			for _, p := range probs {
				prel := lrel + "/" + p.Name()
				if strings.HasPrefix(p.Name(), ".") || p.Type().IsRegular() {
					continue
				}
				if !p.IsDir() {
					reject(prel, "is not a folder (a symbolic link or special file); expected p<problem number>/")
					continue
				}
				pm := problemRe.FindStringSubmatch(p.Name())
				if pm == nil {
					reject(prel, "folder name is not p<problem number> (e.g. p07 or p_07)")
					continue
				}
				num, _ := strconv.ParseInt(pm[1], 10, 64)
				out = append(out, Project{Rel: prel, Dir: filepath.Join(study, name, l.Name(), p.Name()),
					Agent: name, Language: m[1], Eco: eco, Trial: trial, Problem: num})
			}
		}
	}
	// Two folders naming the same project (p7 and p07, cpp and c++) would give one id twice.
	sort.Slice(out, func(i, j int) bool { return out[i].Rel < out[j].Rel })
	seen := map[string]string{}
	kept := out[:0]
	for _, p := range out {
		id := schemas.InstanceID(p.Repo(), p.Problem)
		if first, dup := seen[id]; dup {
			reject(p.Rel, "names the same project as %s (%s); keep one folder per agent, language, trial and problem", first, id)
			continue
		}
		seen[id] = p.Rel
		kept = append(kept, p)
	}
	return kept, rejects, nil
}
