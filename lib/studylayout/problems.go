package studylayout

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Problem is one programming task of the study (the paper's Appendix B), e.g.
// {"number": 11, "id": "p_11", "title": "AES-256 File Encryption", "domain": "Cryptography",
// "complexity": "H"}. Description, when the study has it, is the task text the agents got
// after the title.
type Problem struct {
	Number      int64  `json:"number"`
	ID          string `json:"id,omitempty"`
	Title       string `json:"title"`
	Domain      string `json:"domain"`
	Complexity  string `json:"complexity,omitempty"`
	Description string `json:"description,omitempty"`
	// Requirements are the functional requirements of the prompt (Figure 3), one a line.
	Requirements []string `json:"requirements,omitempty"`
	// StdlibSufficient lists the languages (python, java, javascript, cpp) in which the
	// task needs nothing beyond the standard library (the paper's Section 6.5 set, for
	// UDR). Absent: not marked.
	StdlibSufficient []string `json:"stdlib_sufficient,omitempty"`
}

// ReadProblemsFile reads the problem list at path (ReadProblems, named by the path); an
// error opening it is returned as it is (an *fs.PathError).
func ReadProblemsFile(path string) ([]Problem, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadProblems(path, f)
}

// StudyProblems reads a study folder's own problem list (its ProblemsFile): nil when it
// has none.
func StudyProblems(dir string) ([]Problem, error) {
	ps, err := ReadProblemsFile(filepath.Join(dir, ProblemsFile))
	var pe *fs.PathError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case errors.As(err, &pe):
		return nil, fmt.Errorf("study: %w", err)
	}
	return ps, err
}

// ReadProblems reads a JSON array of problems and checks it: numbers positive and unique,
// title and domain set. name is used in error messages.
func ReadProblems(name string, r io.Reader) ([]Problem, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var ps []Problem
	if err := dec.Decode(&ps); err != nil {
		return nil, fmt.Errorf("problem list %s: %w; want a JSON array of {\"number\", \"title\", \"domain\", ...}", name, err)
	}
	seen := map[int64]int{}
	var errs []string
	for i, p := range ps {
		switch {
		case p.Number <= 0:
			errs = append(errs, fmt.Sprintf("entry %d: number must be a positive integer", i))
		case strings.TrimSpace(p.Title) == "":
			errs = append(errs, fmt.Sprintf("entry %d (problem %d): title is empty", i, p.Number))
		case strings.TrimSpace(p.Domain) == "":
			errs = append(errs, fmt.Sprintf("entry %d (problem %d): domain is empty", i, p.Number))
		}
		for _, l := range p.StdlibSufficient {
			if _, ok := LanguageAliases[l]; !ok {
				errs = append(errs, fmt.Sprintf("entry %d (problem %d): stdlib_sufficient: %q is not one of python, java, javascript, cpp", i, p.Number, l))
			}
		}
		if j, dup := seen[p.Number]; dup && p.Number > 0 {
			errs = append(errs, fmt.Sprintf("entry %d: problem %d repeats entry %d", i, p.Number, j))
		}
		seen[p.Number] = i
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("problem list %s: %s", name, strings.Join(errs, "; "))
	}
	return ps, nil
}

// IndexProblems merges problem lists: later lists fill or override the fields of earlier
// ones, number by number.
func IndexProblems(lists ...[]Problem) map[int64]Problem {
	m := map[int64]Problem{}
	for _, l := range lists {
		for _, p := range l {
			q := m[p.Number]
			q.Number = p.Number
			for _, f := range []struct {
				dst *string
				src string
			}{
				{&q.ID, p.ID}, {&q.Title, p.Title}, {&q.Domain, p.Domain},
				{&q.Complexity, p.Complexity}, {&q.Description, p.Description},
			} {
				if f.src != "" {
					*f.dst = f.src
				}
			}
			if len(p.Requirements) > 0 {
				q.Requirements = p.Requirements
			}
			if p.StdlibSufficient != nil {
				q.StdlibSufficient = p.StdlibSufficient
			}
			m[p.Number] = q
		}
	}
	return m
}

// Statement returns the problem statement of a problem: the title, and after a blank line
// the description when there is one.
func (p Problem) Statement() string {
	if strings.TrimSpace(p.Description) == "" {
		return p.Title
	}
	return p.Title + "\n\n" + p.Description
}
