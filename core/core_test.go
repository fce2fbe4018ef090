package core

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/envgap/envgap/schemas"
)

func str(s string) *string { return &s }

func TestApplyOverlay(t *testing.T) {
	project := []File{
		{Path: "setup.py", Content: []byte("old"), Mode: 0o644},
		{Path: "run.sh", Content: []byte("#!/bin/sh"), Mode: 0o755},
		{Path: "vendor", Link: "/usr/lib"},
		{Path: "inside", Link: "src"},
		{Path: "src/a.py", Content: []byte("a")},
	}
	tests := []struct {
		name    string
		overlay []schemas.File
		want    map[string]string
		err     string
	}{
		{"write and delete", []schemas.File{{Path: "setup.py", Content: str("new")}, {Path: "src/a.py"}, {Path: "new/req.txt", Content: str("x")}},
			map[string]string{"setup.py": "new", "run.sh": "#!/bin/sh", "new/req.txt": "x"}, ""},
		{"delete of a missing path is ignored", []schemas.File{{Path: "nope.txt"}}, map[string]string{"setup.py": "old"}, ""},
		{"absolute", []schemas.File{{Path: "/etc/passwd", Content: str("x")}}, nil, "absolute"},
		{"dotdot", []schemas.File{{Path: "a/../../x", Content: str("x")}}, nil, `".."`},
		{"through a symlink out", []schemas.File{{Path: "vendor/evil.so", Content: str("x")}}, nil, "symlink"},
		{"through a symlink in", []schemas.File{{Path: "inside/b.py", Content: str("x")}}, nil, "symlink"},
		{"through a file", []schemas.File{{Path: "setup.py/x", Content: str("x")}}, nil, "file"},
		{"twice", []schemas.File{{Path: "a", Content: str("x")}, {Path: "a", Content: str("y")}}, nil, "twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ApplyOverlay(project, tt.overlay)
			if tt.err != "" {
				if !errors.Is(err, ErrOverlay) || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got %v, want an overlay refusal mentioning %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			files := map[string]File{}
			for _, f := range got {
				files[f.Path] = f
			}
			for p, c := range tt.want {
				if string(files[p].Content) != c {
					t.Errorf("%s = %q, want %q", p, files[p].Content, c)
				}
			}
			if tt.name == "write and delete" {
				if _, ok := files["src/a.py"]; ok {
					t.Error("deleted path still there")
				}
				if files["run.sh"].Mode != 0o755 {
					t.Error("executable bit lost")
				}
			}
		})
	}
}

func TestSandboxFilesResolveInnerLinksOnly(t *testing.T) {
	files, dropped := sandboxFiles([]File{
		{Path: "src/a.py", Content: []byte("a"), Mode: 0o644},
		{Path: "alias.py", Link: "src/a.py"},
		{Path: "passwd", Link: "/etc/passwd"},
		{Path: "up", Link: "../../x"},
	})
	if len(files) != 2 || string(files[1].Content) != "a" {
		t.Errorf("files %+v", files)
	}
	if len(dropped) != 2 {
		t.Errorf("dropped %v, want the two links that leave the project", dropped)
	}
}

func TestKeyDependsOnEveryInput(t *testing.T) {
	base := Spec{InstanceID: "x", Side: SideBefore, Project: []File{{Path: "a", Content: []byte("1")}},
		Recipe: schemas.Recipe{Ecosystem: schemas.EcosystemPython, ResolveCommand: "r"}, Cutoff: schemas.MustParseCutoff("2024-01-01T00:00:00Z")}
	k0, _ := Key(base)
	// One variant per field of Spec, by name: a field added to Spec without a variant here
	// fails the test, so every input the run depends on is keyed.
	variants := map[string][]func(*Spec){
		"InstanceID": {func(s *Spec) { s.InstanceID = "y" }},
		"Side":       {func(s *Spec) { s.Side = SideAfter }},
		"Project": {
			func(s *Spec) { s.Project = []File{{Path: "a", Content: []byte("2")}} },
			func(s *Spec) { s.Project = []File{{Path: "a", Content: []byte("1"), Mode: 0o755}} },
			func(s *Spec) { s.Project = []File{{Path: "a", Link: "b"}} },
			func(s *Spec) { s.Project = []File{{Path: "b", Content: []byte("1")}} },
		},
		"Overlay":       {func(s *Spec) { s.Overlay = []schemas.File{{Path: "a"}} }},
		"Recipe":        {func(s *Spec) { s.Recipe.ResolveCommand = "r2" }, func(s *Spec) { s.Recipe.Image = "other" }},
		"Cutoff":        {func(s *Spec) { s.Cutoff = schemas.MustParseCutoff("2024-01-02T00:00:00Z") }},
		"Limits":        {func(s *Spec) { s.Limits.MemoryBytes = 1 }, func(s *Spec) { s.Limits.StepTimeout = time.Second }},
		"ManifestPaths": {func(s *Spec) { s.ManifestPaths = []string{"requirements.txt"} }},
	}
	// Fields that decide when a run happens, never what it does: not keyed.
	unkeyed := map[string]func(*Spec){
		"Gate": func(s *Spec) { s.Gate = NewGate(1) },
	}
	fields := reflect.TypeFor[Spec]()
	for i := range fields.NumField() {
		name := fields.Field(i).Name
		if _, ok := variants[name]; !ok && unkeyed[name] == nil {
			t.Errorf("Spec.%s has no variant here: key it in Key, then add one", name)
		}
	}
	for name, v := range unkeyed {
		s := base
		v(&s)
		if k, _ := Key(s); k != k0 {
			t.Errorf("%s changes the key: it decides when a run happens, not what it does", name)
		}
	}
	for name, vs := range variants {
		for i, v := range vs {
			s := base
			v(&s)
			if k, _ := Key(s); k == k0 {
				t.Errorf("%s variant %d does not change the key", name, i)
			}
		}
	}
	// One instant spelled two ways is one key (the cut-off is keyed canonically).
	for _, pair := range [][2]string{
		{"2024-01-01", "2024-01-01T23:59:59.999999999Z"},
		{"2024-01-01T01:00:00+01:00", "2024-01-01T00:00:00Z"},
		{"2024-01-01T00:00:00.000Z", "2024-01-01T00:00:00Z"},
	} {
		a, b := base, base
		a.Cutoff, b.Cutoff = schemas.MustParseCutoff(pair[0]), schemas.MustParseCutoff(pair[1])
		ka, _ := Key(a)
		kb, _ := Key(b)
		if ka != kb {
			t.Errorf("cut-off %s and %s are one instant but give two keys", pair[0], pair[1])
		}
	}
	reordered := base
	reordered.Project = []File{{Path: "b", Content: []byte("2")}, {Path: "a", Content: []byte("1")}}
	base2 := base
	base2.Project = []File{{Path: "a", Content: []byte("1")}, {Path: "b", Content: []byte("2")}}
	if k1, _ := Key(reordered); func() bool { k2, _ := Key(base2); return k1 != k2 }() {
		t.Error("file order changed the key")
	}
}
