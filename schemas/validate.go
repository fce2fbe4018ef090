package schemas

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Problem is one thing wrong with one input record. Its text names the file, the line, the
// record (instance_id, when it could be read) and the field, and says what to do.
type Problem struct {
	File       string `json:"file"`
	Line       int    `json:"line"`
	InstanceID string `json:"instance_id,omitempty"`
	Field      string `json:"field,omitempty"`
	Msg        string `json:"message"`
}

func (p Problem) Error() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d", p.Line)
	}
	if p.InstanceID != "" {
		fmt.Fprintf(&b, ": %s", p.InstanceID)
	}
	if p.Field != "" {
		fmt.Fprintf(&b, ": field %s", p.Field)
	}
	b.WriteString(": ")
	b.WriteString(p.Msg)
	return b.String()
}

// Problems is every problem found in an input; as an error it lists them one per line.
type Problems []Problem

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.Error()
	}
	return strings.Join(lines, "\n")
}

// FieldProblem is a problem of one field of a decoded record.
type FieldProblem struct {
	Field string
	Msg   string
}

// Validator is a record that can check its own fields.
type Validator interface {
	Validate() []FieldProblem
}

// ReadCandidates reads JSON Lines of candidate records. It reads the whole input and returns
// every problem it found; the records are only meaningful when there are no problems. The
// error is for I/O failures alone.
// A Lite record without base_commit gets the commit made from its project_files
// (LiteBaseCommit).
func ReadCandidates(name string, r io.Reader) ([]Candidate, Problems, error) {
	cs, ps, err := readJSONL[Candidate](name, r, CandidateRequired)
	for i := range cs {
		if ferr := FillLiteBaseCommit(&cs[i]); ferr != nil {
			ps = append(ps, Problem{File: name, InstanceID: cs[i].InstanceID, Field: "base_commit", Msg: ferr.Error()})
		}
	}
	return cs, ps, err
}

// FillLiteBaseCommit gives a Lite candidate without base_commit the commit made from its
// project_files at created_at (LiteBaseCommit). Every way a candidate is stored calls it.
func FillLiteBaseCommit(c *Candidate) error {
	if c.Set != SourceLite || c.BaseCommit != "" {
		return nil
	}
	created, err := time.Parse(time.RFC3339, c.CreatedAt)
	if err != nil {
		return fmt.Errorf("cannot compute the base commit: created_at: %w", err)
	}
	h, err := LiteBaseCommit(c.ProjectFiles, created)
	if err != nil {
		return fmt.Errorf("cannot compute the base commit: %w", err)
	}
	c.BaseCommit = h
	return nil
}

// ReadTasks reads JSON Lines of task rows (every column of the card required).
func ReadTasks(name string, r io.Reader) ([]Task, Problems, error) {
	return readJSONL[Task](name, r, TaskRequired)
}

// maxLine bounds one JSON line (a Lite project with its files can be large).
const maxLine = 256 << 20

func readJSONL[T any, PT interface {
	*T
	Validator
}](name string, r io.Reader, required []string) ([]T, Problems, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	var (
		out      []T
		problems Problems
		ids      = map[string]int{}
	)
	for lineNo := 1; ; lineNo++ {
		line, err := readLine(br)
		if err != nil && !errors.Is(err, io.EOF) {
			if errors.Is(err, errLineTooLong) {
				problems = append(problems, Problem{File: name, Line: lineNo, Msg: fmt.Sprintf("line longer than %d MiB; split the record's files or shorten it", maxLine>>20)})
				return nil, problems, nil
			}
			return nil, problems, fmt.Errorf("reading %s: %w", name, err)
		}
		if len(bytes.TrimSpace(line)) > 0 {
			rec, ps := decodeRecord[T, PT](line, required)
			id := ""
			if rec != nil {
				id = instanceIDOf(any(rec))
			}
			for _, p := range ps {
				p.File, p.Line = name, lineNo
				if p.InstanceID == "" {
					p.InstanceID = id
				}
				problems = append(problems, p)
			}
			if rec != nil && len(ps) == 0 {
				if prev, dup := ids[id]; dup {
					problems = append(problems, Problem{File: name, Line: lineNo, InstanceID: id, Field: "instance_id",
						Msg: fmt.Sprintf("repeats the record on line %d; keep one record per instance_id", prev)})
				} else {
					ids[id] = lineNo
					out = append(out, *rec)
				}
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
	}
	if len(out) == 0 && len(problems) == 0 {
		problems = append(problems, Problem{File: name, Msg: "no records; write one JSON object per line"})
	}
	return out, problems, nil
}

var errLineTooLong = errors.New("line too long")

func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxLine {
			return nil, errLineTooLong
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return line, err
	}
}

func instanceIDOf(v any) string {
	switch r := v.(type) {
	case *Candidate:
		return r.InstanceID
	case *Task:
		return r.InstanceID
	}
	return ""
}

func decodeRecord[T any, PT interface {
	*T
	Validator
}](line []byte, required []string) (*T, []Problem) {
	var rec T
	ps, ok := DecodeRecord(line, PT(&rec), required)
	if !ok {
		return nil, ps
	}
	return &rec, ps
}

// DecodeRecord decodes one JSON object strictly into the record rec points at (a pointer to
// any struct of columns, see ColumnsOf) and validates it: the JSON must be valid UTF-8 and
// an object; every key must be a column; a column must have its type (null only for a
// nullable one); the required columns must be there; then the record's Validate runs, when
// it has one, and its problems are added for the fields not already reported. It is what
// ReadCandidates and ReadTasks do per line; problems carry no file or line. ok is false
// when nothing could be decoded (the line is not a JSON object).
func DecodeRecord(line []byte, rec any, required []string) (ps []Problem, ok bool) {
	if !utf8.Valid(line) {
		off := InvalidUTF8Offset(line)
		return []Problem{{Msg: fmt.Sprintf("invalid UTF-8 at byte %d of the line; the file must be UTF-8 (re-encode it, or escape binary content)", off)}}, false
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(line, &raw); err != nil {
		return []Problem{{Msg: "invalid JSON: " + describeJSONError(line, err) + "; each line must be one JSON object"}}, false
	}
	id := ""
	if rawID, ok := raw["instance_id"]; ok {
		_ = json.Unmarshal(rawID, &id)
	}
	rv := reflect.ValueOf(rec).Elem()
	fields := columnIndex(rv.Type())
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		col, ok := fields[k]
		if !ok {
			msg := fmt.Sprintf("unknown field %q", k)
			if s := suggest(k, fields); s != "" {
				msg += fmt.Sprintf("; did you mean %q?", s)
			} else {
				msg += "; remove it"
			}
			ps = append(ps, Problem{InstanceID: id, Field: k, Msg: msg})
			continue
		}
		f := rv.FieldByIndex(col.Index)
		v := raw[k]
		if string(v) == "null" {
			switch f.Kind() {
			case reflect.Pointer, reflect.Slice:
				continue
			default:
				ps = append(ps, Problem{InstanceID: id, Field: k, Msg: fmt.Sprintf("is null; want %s", typeName(f.Type()))})
				continue
			}
		}
		ptr := reflect.New(f.Type())
		if err := json.Unmarshal(v, ptr.Interface()); err != nil {
			ps = append(ps, Problem{InstanceID: id, Field: k, Msg: fmt.Sprintf("wrong type: want %s, got %s", typeName(f.Type()), jsonKind(v))})
			continue
		}
		f.Set(ptr.Elem())
		for _, fp := range unknownNestedFields(k, f.Type(), v) {
			ps = append(ps, Problem{InstanceID: id, Field: fp.Field, Msg: fp.Msg})
		}
	}
	for _, k := range required {
		if _, ok := raw[k]; !ok {
			ps = append(ps, Problem{InstanceID: id, Field: k, Msg: "missing required field"})
		}
	}
	// Check values too, but say nothing more about a field already reported.
	reported := map[string]bool{}
	for _, p := range ps {
		reported[p.Field] = true
	}
	if v, isV := rec.(Validator); isV {
		for _, fp := range v.Validate() {
			top, _, _ := strings.Cut(fp.Field, "[")
			if reported[top] {
				continue
			}
			ps = append(ps, Problem{InstanceID: id, Field: fp.Field, Msg: fp.Msg})
		}
	}
	return ps, true
}

// columnIndex maps the JSON names of a record type's columns to the columns.
func columnIndex(t reflect.Type) map[string]Column {
	cols := ColumnsOf(t)
	m := make(map[string]Column, len(cols))
	for _, c := range cols {
		m[c.Name] = c
	}
	return m
}

func typeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return typeName(t.Elem()) + " or null"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	case reflect.Float64:
		return "a number"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Struct {
			return "a list of {\"path\", \"content\"} objects"
		}
		return "a list of " + strings.TrimPrefix(typeName(t.Elem()), "a ") + "s"
	case reflect.Struct:
		return "an object"
	}
	return t.String()
}

func jsonKind(v json.RawMessage) string {
	s := bytes.TrimSpace(v)
	if len(s) == 0 {
		return "nothing"
	}
	switch s[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "a list (or a list with elements of the wrong type)"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		if _, err := strconv.ParseInt(string(s), 10, 64); err != nil {
			return "a non-integer number"
		}
		return "a number"
	}
}

func describeJSONError(line []byte, err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%s (at byte %d)", se.Error(), se.Offset)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return "the line is " + jsonKind(line) + ", not an object"
	}
	return err.Error()
}

// InvalidUTF8Offset returns the byte offset of the first invalid UTF-8 sequence in b, or -1.
func InvalidUTF8Offset(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return -1
}

// suggest returns the known field closest to an unknown one (edit distance <= 3).
func suggest(k string, fields map[string]Column) string {
	best, bestD := "", 4
	for f := range fields {
		if d := editDistance(strings.ToLower(k), f); d < bestD || (d == bestD && f < best) {
			best, bestD = f, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

var (
	instanceIDRe = regexp.MustCompile(`^envgap__([A-Za-z0-9][A-Za-z0-9._-]*)__([A-Za-z0-9._-]+)-([0-9]+)$`)
	repoRe       = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9._-]+$`)
	commitRe     = regexp.MustCompile(`^[0-9a-f]{40}$`)
)

// InstanceID builds the card's task id from a repo ("owner/name") and an issue number.
func InstanceID(repo string, issue int64) string {
	return "envgap__" + strings.Replace(repo, "/", "__", 1) + "-" + strconv.FormatInt(issue, 10)
}

// CheckInstanceID checks the card's pattern envgap__<owner>__<repo>-<number>.
func CheckInstanceID(id string) error {
	if !instanceIDRe.MatchString(id) {
		return fmt.Errorf("%q does not follow envgap__<owner>__<repo>-<issue number> (Lite: envgap__<agent>__<language>-t<trial>-<problem>)", id)
	}
	return nil
}

// CheckRelPath checks a project-relative path: not empty, not absolute, no "..", no
// backslash or NUL, already clean (no "./", "//" or trailing slash), no component over
// MaxPathComponentBytes and no more than MaxPathBytes in all.
func CheckRelPath(p string) error {
	switch {
	case p == "":
		return errors.New("empty path")
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("path %q is absolute; give it relative to the project root", p)
	case strings.ContainsAny(p, "\\\x00"):
		return fmt.Errorf("path %q contains a backslash or NUL; use forward slashes", p)
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return fmt.Errorf("path %q contains \"..\"; paths must stay inside the project", p)
		}
	}
	if path.Clean(p) != p || p == "." {
		return fmt.Errorf("path %q is not clean (write it as %q)", p, path.Clean(p))
	}
	return checkPathLength(p)
}

// CheckTime checks an RFC 3339 time with an explicit offset (e.g. 2023-07-30T12:48:33Z).
func CheckTime(s string) error {
	if _, err := time.Parse(time.RFC3339, s); err != nil {
		return fmt.Errorf("%q is not an RFC 3339 time with an offset (e.g. 2023-07-30T12:48:33Z)", s)
	}
	return nil
}

// CompileFailureRegex compiles an expected_failure_regex (Go RE2 syntax, which accepts
// Python's re.escape output).
func CompileFailureRegex(s string) (*regexp.Regexp, error) {
	re, err := regexp.Compile(s)
	if err != nil {
		return nil, fmt.Errorf("expected_failure_regex %q does not compile: %w", s, err)
	}
	return re, nil
}

func checkFiles(field string, files []File, allowNil bool) []FieldProblem {
	var ps []FieldProblem
	seen := map[string]int{}
	for i, f := range files {
		fld := fmt.Sprintf("%s[%d].path", field, i)
		if err := CheckRelPath(f.Path); err != nil {
			ps = append(ps, FieldProblem{fld, err.Error()})
			continue
		}
		if j, dup := seen[f.Path]; dup {
			ps = append(ps, FieldProblem{fld, fmt.Sprintf("path %q repeats %s[%d]; give each path once", f.Path, field, j)})
		}
		seen[f.Path] = i
		if f.Content == nil && !allowNil {
			ps = append(ps, FieldProblem{fmt.Sprintf("%s[%d].content", field, i), "is null; project files must have content"})
		}
	}
	return ps
}

// shared is a record's view of the columns Task and Candidate share (the groups of
// layout.go) together with its set: a candidate's set, a task's source. The rules on shared
// columns are written once, in its validate method; a record's own columns have theirs in
// the record's Validate.
type shared struct {
	set Source
	*Ident
	*Spec
	*Origin
	*License
}

func (c *Candidate) shared() shared { return shared{c.Set, &c.Ident, &c.Spec, &c.Origin, &c.License} }
func (t *Task) shared() shared      { return shared{t.Source, &t.Ident, &t.Spec, &t.Origin, &t.License} }

func (c shared) validate() []FieldProblem {
	var ps []FieldProblem
	add := func(f, m string) { ps = append(ps, FieldProblem{f, m}) }
	if err := CheckInstanceID(c.InstanceID); err != nil {
		add("instance_id", err.Error())
	}
	if !repoRe.MatchString(c.Repo) {
		add("repo", fmt.Sprintf("%q is not owner/name", c.Repo))
	} else if c.IssueNumber > 0 && instanceIDRe.MatchString(c.InstanceID) && c.InstanceID != InstanceID(c.Repo, c.IssueNumber) {
		add("instance_id", fmt.Sprintf("%q does not match repo and issue_number; want %q", c.InstanceID, InstanceID(c.Repo, c.IssueNumber)))
	}
	if c.IssueNumber <= 0 {
		add("issue_number", "must be a positive integer")
	}
	if err := c.set.Valid(); err != nil {
		add("set", err.Error())
	}
	if err := c.Ecosystem.Valid(); err != nil {
		add("ecosystem", err.Error())
	} else if c.Image != "" && c.Image != c.Ecosystem.Image() {
		add("image", fmt.Sprintf("%q does not match ecosystem %s; want %q", c.Image, c.Ecosystem, c.Ecosystem.Image()))
	}
	if err := CheckTime(c.CreatedAt); err != nil {
		add("created_at", err.Error())
	}
	if _, err := ParseCutoff(c.RegistryDate); err != nil {
		add("registry_date", err.Error())
	}
	if c.RegistryDateSource != "" {
		if err := c.RegistryDateSource.Valid(); err != nil {
			add("registry_date_source", err.Error())
		} else if c.set.Valid() == nil && c.RegistryDateSource != DateSourceFor(c.set) && !(c.set == SourceLite && c.RegistryDateSource == DateFromCreatedAt) {
			add("registry_date_source", fmt.Sprintf("%q does not fit set %s; want %q", c.RegistryDateSource, c.set, DateSourceFor(c.set)))
		}
	}
	if c.ExpectedFailureRegex != "" {
		if _, err := CompileFailureRegex(c.ExpectedFailureRegex); err != nil {
			add("expected_failure_regex", err.Error())
		}
	}
	for i, cat := range c.Categories {
		if err := cat.Valid(); err != nil {
			add(fmt.Sprintf("categories[%d]", i), err.Error())
		}
	}
	ps = append(ps, checkFiles("project_files", c.ProjectFiles, false)...)
	ps = append(ps, checkFiles("gold_files", c.GoldFiles, true)...)
	ps = append(ps, fileDirClashes("project_files", c.ProjectFiles)...)
	ps = append(ps, fileDirClashes("gold_files", c.GoldFiles)...)
	ps = append(ps, overlayClashes(c.ProjectFiles, c.GoldFiles)...)
	switch c.set {
	case SourceLite:
		if len(c.ProjectFiles) == 0 {
			add("project_files", "is empty; a lite candidate carries its project's files")
		}
		if c.IssueURL != nil {
			add("issue_url", "must be null for lite candidates")
		}
		if c.BaseCommit != "" && !commitRe.MatchString(c.BaseCommit) {
			add("base_commit", fmt.Sprintf("%q is not a 40-hex commit id (or leave it empty to have it computed)", c.BaseCommit))
		}
	case SourceReported, SourceRepaired:
		if len(c.ProjectFiles) != 0 {
			add("project_files", "must be empty for candidates from GitHub (they start from repo at base_commit)")
		}
		if !commitRe.MatchString(c.BaseCommit) {
			add("base_commit", fmt.Sprintf("%q is not a 40-hex commit id", c.BaseCommit))
		}
		if c.IssueURL == nil || *c.IssueURL == "" {
			add("issue_url", "is required for candidates from GitHub")
		}
	}
	// The card's nulls and "only" columns: crawl_id names the crawl of a Repaired record
	// only; a Lite record has no repository licence, issue or pull request; the pull
	// request columns are a Repaired record's only.
	if c.CrawlID != nil && (c.set == SourceReported || c.set == SourceLite) {
		add("crawl_id", fmt.Sprintf("must be null for %s records (only a repaired record names the crawl it came from)", c.set))
	}
	if c.set == SourceLite && c.RepoLicense != nil {
		add("repo_license", "must be null for lite records (projects coding agents wrote carry no license of their own)")
	}
	if c.set == SourceReported || c.set == SourceLite {
		for _, f := range []struct {
			name string
			set  bool
		}{{"pull_request", c.PullRequest != nil}, {"pr_number", c.PRNumber != nil}, {"pr_head_commit", c.PRHeadCommit != nil}, {"pr_merge_commit", c.PRMergeCommit != nil}} {
			if f.set {
				add(f.name, fmt.Sprintf("must be null for %s records (only repaired records come from a pull request)", c.set))
			}
		}
	}
	// A Lite base_commit is the one commit made from project_files at created_at.
	if c.set == SourceLite && commitRe.MatchString(c.BaseCommit) {
		if created, err := time.Parse(time.RFC3339, c.CreatedAt); err == nil {
			if want, err := LiteBaseCommit(c.ProjectFiles, created); err == nil && want != c.BaseCommit {
				add("base_commit", fmt.Sprintf("%s is not the commit made from project_files at created_at (%s); leave it empty to have it computed", c.BaseCommit, want))
			}
		}
	}
	if c.set == SourceRepaired {
		if c.PRNumber == nil || *c.PRNumber <= 0 {
			add("pr_number", "is required (a positive integer) for repaired candidates")
		}
		if c.PullRequest == nil || *c.PullRequest == "" {
			add("pull_request", "is required for repaired candidates")
		}
		for name, v := range map[string]*string{"pr_head_commit": c.PRHeadCommit, "pr_merge_commit": c.PRMergeCommit} {
			if v == nil || !commitRe.MatchString(*v) {
				add(name, "is required as a 40-hex commit id for repaired candidates")
			}
		}
	}
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Field < ps[j].Field })
	return ps
}

// Validate checks a candidate's values against the card's rules.
func (c *Candidate) Validate() []FieldProblem {
	ps := c.shared().validate()
	if c.Outcome != "" {
		if err := c.Outcome.Valid(); err != nil {
			ps = append(ps, FieldProblem{"outcome", err.Error()})
		} else if c.Outcome == OutcomeTask || c.Outcome == OutcomeVerified {
			ps = append(ps, FieldProblem{"outcome", fmt.Sprintf("%q is decided by verify and admit, not given on input; leave it empty or not_checked", c.Outcome)})
		}
	}
	return ps
}

// Validate checks a task row against the card's rules.
func (t *Task) Validate() []FieldProblem {
	ps := t.shared().validate()
	add := func(f, m string) { ps = append(ps, FieldProblem{f, m}) }
	for i, f := range ps {
		if f.Field == "set" {
			ps[i].Field = "source"
		}
	}
	for _, c := range []struct{ name, v string }{{"resolve_command", t.ResolveCommand}, {"repro_command", t.ReproCommand}, {"run_command", t.RunCommand}} {
		if strings.TrimSpace(c.v) == "" {
			add(c.name, "is empty; a task needs its commands")
		}
	}
	if t.Image == "" {
		add("image", "is empty")
	}
	for i, s := range t.Splits {
		if err := s.Valid(); err != nil {
			add(fmt.Sprintf("splits[%d]", i), err.Error())
		}
	}
	for i, f := range t.SecurityFlags {
		if err := f.Valid(); err != nil {
			add(fmt.Sprintf("security_flags[%d]", i), err.Error())
		}
	}
	if t.IsControl && (t.Patch != "" || len(t.GoldFiles) > 0) {
		add("is_control", "a control has an empty patch and no gold_files")
	}
	if t.ExcludedFromScoring != (t.ExclusionReason != nil) || t.ExcludedFromScoring != (t.ExcludedSince != nil) {
		add("excluded_from_scoring", "exclusion_reason and excluded_since are set exactly when excluded_from_scoring is true")
	}
	if t.ExcludedSince != nil {
		if err := CheckTime(*t.ExcludedSince); err != nil {
			add("excluded_since", err.Error())
		} else if !strings.HasSuffix(*t.ExcludedSince, "Z") {
			add("excluded_since", fmt.Sprintf("%q is not in UTC; write it with Z (e.g. 2026-09-29T00:00:00Z)", *t.ExcludedSince))
		}
	}
	if t.Source == SourceLite && t.BaseCommit == "" {
		add("base_commit", "is empty; a lite task's base_commit is the commit made from project_files")
	}
	return ps
}
