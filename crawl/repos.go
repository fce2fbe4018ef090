package crawl

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/envgap/envgap/schemas"
)

// repoNameRe is GitHub's owner/name: an owner of letters, digits and single hyphens, a
// name of letters, digits, '.', '_' and '-'.
var repoNameRe = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9]|-[A-Za-z0-9])*/[A-Za-z0-9._-]+$`)

// CheckRepoName checks one owner/name.
func CheckRepoName(s string) error {
	if !repoNameRe.MatchString(s) || len(s) > 140 {
		return fmt.Errorf("%q is not a GitHub repository owner/name (e.g. pallets/flask)", s)
	}
	if name := s[strings.IndexByte(s, '/')+1:]; name == "." || name == ".." || strings.HasSuffix(strings.ToLower(name), ".git") {
		return fmt.Errorf("%q is not a GitHub repository owner/name: give the name without .git", s)
	}
	return nil
}

// ReadRepos reads a repos file: one owner/name per line; blank lines and everything after
// a '#' are ignored. Every malformed or repeated line is reported (schemas.Problems, with
// file and line); the list is only meaningful when there are none.
func ReadRepos(name string, r io.Reader) ([]string, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var (
		out      []string
		problems schemas.Problems
		seen     = map[string]int{}
	)
	for line := 1; sc.Scan(); line++ {
		s := sc.Text()
		if i := strings.IndexByte(s, '#'); i >= 0 {
			s = s[:i]
		}
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if err := CheckRepoName(s); err != nil {
			problems = append(problems, schemas.Problem{File: name, Line: line, Msg: err.Error() + "; write one owner/name per line"})
			continue
		}
		key := strings.ToLower(s)
		if prev, dup := seen[key]; dup {
			problems = append(problems, schemas.Problem{File: name, Line: line, Msg: fmt.Sprintf("%s repeats line %d; list each repository once", s, prev)})
			continue
		}
		seen[key] = line
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if len(problems) > 0 {
		return nil, problems
	}
	if len(out) == 0 {
		return nil, schemas.Problems{{File: name, Msg: "no repositories; write one owner/name per line"}}
	}
	return out, nil
}

// ReadReposFile reads a repos file from disk (see ReadRepos).
func ReadReposFile(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("repos file: %w", err)
	}
	defer f.Close()
	return ReadRepos(path, f)
}
