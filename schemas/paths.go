package schemas

import (
	"encoding/json"
	"fmt"
	"path"
	"reflect"
	"sort"
	"strings"
)

// Limits of a project path: what every file system and the sandbox take (a component of
// at most NAME_MAX bytes; the whole path, below the sandbox's work dir, within PATH_MAX).
const (
	MaxPathComponentBytes = 255
	MaxPathBytes          = 4000
)

// checkPathLength refuses a path with a component or a total length over the limits.
func checkPathLength(p string) error {
	if len(p) > MaxPathBytes {
		return fmt.Errorf("path of %d bytes is longer than %d bytes; shorten it", len(p), MaxPathBytes)
	}
	for _, part := range strings.Split(p, "/") {
		if len(part) > MaxPathComponentBytes {
			return fmt.Errorf("path %q has a component of %d bytes (%.20q...); no file system takes more than %d", p, len(part), part, MaxPathComponentBytes)
		}
	}
	return nil
}

// fileDirClashes reports entries of one file list where a path is also the directory of
// another (a and a/b): one of them cannot exist. Paths that fail CheckRelPath are skipped
// (reported elsewhere).
func fileDirClashes(field string, files []File) []FieldProblem {
	at := map[string]int{}
	for i, f := range files {
		if CheckRelPath(f.Path) == nil {
			if _, dup := at[f.Path]; !dup {
				at[f.Path] = i
			}
		}
	}
	var ps []FieldProblem
	for i, f := range files {
		if j, ok := at[f.Path]; !ok || j != i {
			continue // a bad path (reported elsewhere) or a repeat
		}
		for d := path.Dir(f.Path); d != "."; d = path.Dir(d) {
			if j, ok := at[d]; ok {
				ps = append(ps, FieldProblem{fmt.Sprintf("%s[%d].path", field, i),
					fmt.Sprintf("%q is below %s[%d] %q, which is a file; a path is a file or a directory, not both", f.Path, field, j, d)})
				break
			}
		}
	}
	return ps
}

// overlayClashes reports gold_files entries that cannot be written over project_files: a
// path below a project file that gold_files keeps (main.py/x over main.py), or a file
// where the project has a directory that stays (dir over dir/a.txt).
func overlayClashes(project, gold []File) []FieldProblem {
	if len(project) == 0 || len(gold) == 0 {
		return nil
	}
	deleted := map[string]bool{}
	for _, g := range gold {
		if g.Content == nil {
			deleted[g.Path] = true
		}
	}
	files := map[string]int{} // project files that stay
	dirs := map[string]int{}  // their directories, to the first file below
	for j, f := range project {
		if CheckRelPath(f.Path) != nil || deleted[f.Path] {
			continue
		}
		if _, ok := files[f.Path]; !ok {
			files[f.Path] = j
		}
		for d := path.Dir(f.Path); d != "."; d = path.Dir(d) {
			if _, ok := dirs[d]; !ok {
				dirs[d] = j
			}
		}
	}
	var ps []FieldProblem
	for i, g := range gold {
		if g.Content == nil || CheckRelPath(g.Path) != nil {
			continue
		}
		fld := fmt.Sprintf("gold_files[%d].path", i)
		if j, ok := dirs[g.Path]; ok {
			ps = append(ps, FieldProblem{fld, fmt.Sprintf("%q is a directory of the project (project_files[%d] %q is below it); a fix cannot write a file there without deleting what is below it (entries with \"content\": null)", g.Path, j, project[j].Path)})
			continue
		}
		for d := path.Dir(g.Path); d != "."; d = path.Dir(d) {
			if j, ok := files[d]; ok {
				ps = append(ps, FieldProblem{fld, fmt.Sprintf("%q is below project_files[%d] %q, which is a file; a path is a file or a directory, not both", g.Path, j, d)})
				break
			}
		}
	}
	return ps
}

// unknownNestedFields reports keys of the objects inside a JSON array field (the entries
// of project_files and gold_files) that the element type does not have: they would be
// dropped silently.
func unknownNestedFields(field string, t reflect.Type, v json.RawMessage) []FieldProblem {
	if t.Kind() != reflect.Slice || t.Elem().Kind() != reflect.Struct {
		return nil
	}
	var entries []map[string]json.RawMessage
	if json.Unmarshal(v, &entries) != nil {
		return nil // not an array of objects: reported as a wrong type
	}
	known := map[string]bool{}
	var names []string
	for i := 0; i < t.Elem().NumField(); i++ {
		if name, _, _ := strings.Cut(t.Elem().Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			known[name] = true
			names = append(names, fmt.Sprintf("%q", name))
		}
	}
	sort.Strings(names)
	var ps []FieldProblem
	for i, e := range entries {
		keys := make([]string, 0, len(e))
		for k := range e {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if known[k] {
				continue
			}
			msg := fmt.Sprintf("unknown field %q; an entry has %s only", k, strings.Join(names, " and "))
			best, bestD := "", 4 // the closest known name, as suggest does for top-level fields
			for name := range known {
				if d := editDistance(strings.ToLower(k), name); d < bestD || (d == bestD && name < best) {
					best, bestD = name, d
				}
			}
			if best != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", best)
			}
			ps = append(ps, FieldProblem{fmt.Sprintf("%s[%d].%s", field, i, k), msg})
		}
	}
	return ps
}
