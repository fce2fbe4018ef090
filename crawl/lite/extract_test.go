package lite

import (
	"github.com/envgap/envgap/lib/studylayout"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/envgap/envgap/internal/testenv"
	"github.com/envgap/envgap/schemas"
)

func boolp(b bool) *bool { return &b }

func TestDecide(t *testing.T) {
	repairedMeta := func(pkgs []string, changes ...string) *studylayout.Meta {
		return &studylayout.Meta{CreatedAt: "2026-01-01T00:00:00Z", WorkedFirstTime: boolp(false), MadeToWork: boolp(true),
			RepairedAt: "2026-01-01T01:00:00Z", RunCommand: "run", SystemPackages: pkgs, RepairChanges: changes}
	}
	written := files("app.py", "import yaml\n", "requirements.txt", "pyyaml\n", "data.csv", "a,b\n")
	cases := []struct {
		name       string
		meta       *studylayout.Meta
		repaired   []schemas.File
		noRepaired bool
		want       schemas.Outcome
		gold       map[string]*string // path -> content (nil: delete)
		reasonHas  []string
	}{
		{name: "never made to work", meta: &studylayout.Meta{WorkedFirstTime: boolp(false), MadeToWork: boolp(false)},
			want: schemas.OutcomeNotFixed, reasonHas: []string{"never made to work"}},
		{name: "worked first time", meta: &studylayout.Meta{WorkedFirstTime: boolp(true), MadeToWork: boolp(true)},
			want: schemas.OutcomeAlreadyWorks, reasonHas: []string{"worked first time"}},
		{name: "no repaired copy", meta: repairedMeta(nil), noRepaired: true,
			want: schemas.OutcomeFixNotRecorded, reasonHas: []string{"no repaired copy"}},
		{name: "repaired copy identical", meta: repairedMeta(nil), repaired: written,
			want: schemas.OutcomeFixNotRecorded, reasonHas: []string{"identical"}},
		{name: "notes describe a change the copy lacks", meta: repairedMeta(nil, "requirements.txt", "app.py"),
			repaired: files("app.py", "import yaml  # fixed\n", "requirements.txt", "pyyaml\n", "data.csv", "a,b\n"),
			want:     schemas.OutcomeFixNotRecorded, reasonHas: []string{"requirements.txt as written"}},
		{name: "only source changed", meta: repairedMeta(nil),
			repaired: files("app.py", "import yaml as y\n", "requirements.txt", "pyyaml\n", "data.csv", "a,b\nc,d\n"),
			want:     schemas.OutcomeCodeFix, reasonHas: []string{"app.py, data.csv"}},
		{name: "identical copy but packages installed", meta: repairedMeta([]string{"libyaml-dev"}), repaired: written,
			want: schemas.OutcomeNotChecked, gold: map[string]*string{"setup.sh": nil}, reasonHas: []string{"libyaml-dev"}},
		{name: "environment and source: source left out", meta: repairedMeta(nil),
			repaired:  files("app.py", "import yaml, os\n", "requirements.txt", "PyYAML==6.0.1\n", "data.csv", "a,b\n", "constraints.txt", "x\n"),
			want:      schemas.OutcomeNotChecked,
			gold:      map[string]*string{"requirements.txt": str("PyYAML==6.0.1\n"), "constraints.txt": str("x\n")},
			reasonHas: []string{"left out: app.py"}},
		{name: "environment file deleted", meta: repairedMeta(nil),
			repaired: files("app.py", "import yaml\n", "data.csv", "a,b\n", "pyproject.toml", "[project]\n"),
			want:     schemas.OutcomeNotChecked,
			gold:     map[string]*string{"requirements.txt": nil, "pyproject.toml": str("[project]\n")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, reason, gold, patch, err := decide(tc.meta, written, tc.repaired, !tc.noRepaired, "s/a/python-t1/p1")
			if err != nil {
				t.Fatal(err)
			}
			if out != tc.want {
				t.Fatalf("outcome %s (%s), want %s", out, reason, tc.want)
			}
			for _, frag := range tc.reasonHas {
				if !strings.Contains(reason, frag) {
					t.Errorf("reason %q does not mention %q", reason, frag)
				}
			}
			if len(gold) != len(tc.gold) {
				t.Errorf("gold %v, want %d files", gold, len(tc.gold))
			}
			for _, g := range gold {
				want, ok := tc.gold[g.Path]
				switch {
				case !ok:
					t.Errorf("unexpected gold file %s", g.Path)
				case g.Path == "setup.sh":
					if g.Content == nil || !strings.Contains(*g.Content, "libyaml-dev") {
						t.Errorf("setup.sh = %v", g.Content)
					}
				case (want == nil) != (g.Content == nil) || want != nil && *want != *g.Content:
					t.Errorf("gold %s = %v, want %v", g.Path, g.Content, want)
				}
			}
			if (tc.want == schemas.OutcomeNotChecked) != (patch != "") {
				t.Errorf("patch %q for outcome %s", patch, out)
			}
		})
	}
}

func TestExtractJavaMove(t *testing.T) {
	src := "public class App { public static void main(String[] a) { System.out.println(1); } }\n"
	written := files("pom.xml", "<project/>\n", "App.java", src, "src/Util.java", "class Util {}\n")
	cases := []struct {
		name     string
		repaired []schemas.File
		copied   map[string]string
		leftOut  []string
	}{
		{"moved unchanged", files("pom.xml", "<project/>\n", "src/main/java/App.java", src, "src/Util.java", "class Util {}\n"),
			map[string]string{"src/main/java/App.java": "App.java"}, nil},
		{"moved with a package edit: the copy stays as written", files("pom.xml", "<project/>\n",
			"src/main/java/com/x/App.java", "package com.x;\n"+src, "src/main/java/Util.java", "class Util {}\n"),
			map[string]string{"src/main/java/com/x/App.java": "App.java", "src/main/java/Util.java": "src/Util.java"},
			[]string{"src/main/java/com/x/App.java"}},
		{"copied, original kept", files("pom.xml", "<project/>\n", "App.java", src, "src/main/java/App.java", src, "src/Util.java", "class Util {}\n"),
			map[string]string{"src/main/java/App.java": "App.java"}, nil},
		{"new source under src/main/java with no original is left out", files("pom.xml", "<project/>\n", "App.java", src,
			"src/Util.java", "class Util {}\n", "src/main/java/New.java", "class New {}\n"), map[string]string{}, []string{"src/main/java/New.java"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ex, err := Extract(written, tc.repaired, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(ex.Copied) != len(tc.copied) {
				t.Errorf("copied %v, want %v", ex.Copied, tc.copied)
			}
			w := fileMap(written)
			fix := map[string]*string{}
			for _, f := range ex.Fix {
				fix[f.Path] = f.Content
			}
			for dst, from := range tc.copied {
				if ex.Copied[dst] != from {
					t.Errorf("copied[%s] = %q, want %q", dst, ex.Copied[dst], from)
				}
				if c := fix[dst]; c == nil || *c != w[from] {
					t.Errorf("fix %s is not the unchanged source %s", dst, from)
				}
			}
			if len(ex.Fix) != len(tc.copied) {
				t.Errorf("fix holds %d files, want only the %d copies", len(ex.Fix), len(tc.copied))
			}
			if strings.Join(ex.SourceLeftOut, ",") != strings.Join(tc.leftOut, ",") {
				t.Errorf("left out %v, want %v", ex.SourceLeftOut, tc.leftOut)
			}
		})
	}
}

func TestIsEnvironmentFile(t *testing.T) {
	for p, want := range map[string]bool{
		"requirements.txt": true, "requirements-dev.txt": true, "sub/package.json": true, "package-lock.json": true,
		"pom.xml": true, "CMakeLists.txt": true, "cmake/FindFoo.cmake": true, "setup.sh": true, "build.sh": true,
		"README.md": true, "readme.txt": true, "Dockerfile.dev": true, ".mvn/wrapper/maven-wrapper.properties": true,
		"setup.py": true, "pyproject.toml": true,
		"app.py": false, "src/main.cpp": false, "include/x.hpp": false, "index.js": false, "data/sample.csv": false,
		"src/main/java/App.java": false, "test/test_app.py": false, "config.json": false,
	} {
		if got := IsEnvironmentFile(p); got != want {
			t.Errorf("IsEnvironmentFile(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestManifests(t *testing.T) {
	fs := files("README.md", "", "sub/CMakeLists.txt", "", "CMakeLists.txt", "", "Makefile", "")
	main, all := Manifests(schemas.EcosystemCPP, fs)
	if main != "CMakeLists.txt" || strings.Join(all, ",") != "CMakeLists.txt,Makefile,sub/CMakeLists.txt" {
		t.Errorf("Manifests = %q %v", main, all)
	}
	if main, all := Manifests(schemas.EcosystemJavaScript, files("web/package.json", "{}")); main != "web/package.json" || len(all) != 1 {
		t.Errorf("nested package.json: %q %v", main, all)
	}
	if c := DefaultCommands(schemas.EcosystemJavaScript, "web/package.json", "", "node web/x.js"); !strings.Contains(c.Resolve, "cd web && npm install") {
		t.Errorf("resolve of a nested manifest = %q", c.Resolve)
	}
}

func TestParseMeta(t *testing.T) {
	cases := map[string]string{
		`{}`: "created_at is missing",
		`{"created_at":"2026-01-01T00:00:00","worked_first_time":true,"made_to_work":true,"run_command":"x"}`:                                                                                   "offset",
		`{"created_at":"2026-01-01T00:00:00Z","worked_first_time":true,"made_to_work":false}`:                                                                                                   "worked_first_time is true but made_to_work is false",
		`{"created_at":"2026-01-02T00:00:00Z","worked_first_time":false,"made_to_work":true,"repaired_at":"2026-01-01T00:00:00Z","run_command":"x"}`:                                            "before created_at",
		`{"created_at":"2026-01-01T00:00:00Z","worked_first_time":false,"made_to_work":true,"repaired_at":"2026-01-01T01:00:00Z","run_command":"x","system_packages":["libssl-dev; rm -rf /"]}`: "not a Debian package name",
		`{"created_at":"2026-01-01T00:00:00Z","worked_first_time":false,"made_to_work":true,"repaired_at":"2026-01-01T01:00:00Z","run_command":"x","repair_changes":["../x"]}`:                  "repair_changes[0]",
		`{"created_at":"2026-01-01T00:00:00Z","worked_first_time":false,"made_to_work":false} {}`:                                                                                               "more than one JSON value",
		"\xff": "not UTF-8",
	}
	for in, want := range cases {
		if _, err := studylayout.ParseMeta([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("studylayout.ParseMeta(%s) = %v, want an error mentioning %q", in, err, want)
		}
	}
	ok := `{"created_at":"2026-01-01T00:00:00+02:00","worked_first_time":false,"made_to_work":false}`
	if _, err := studylayout.ParseMeta([]byte(ok)); err != nil {
		t.Errorf("a not_fixed meta needs no run_command: %v", err)
	}
}

// TestSetupScript runs the generated script with stub dpkg-query, apt-get and id on PATH:
// the first run installs the missing packages non-interactively, a run with everything
// installed calls apt-get not at all, and the project's own setup.sh runs after it.
func TestSetupScript(t *testing.T) {
	if _, err := studylayout.SetupScript([]string{"libssl-dev", "Bad_Name"}, ""); err == nil {
		t.Error("invalid package name: want an error")
	}
	a, err := studylayout.SetupScript([]string{"pkg-config", "libssl-dev", "libssl-dev"}, "")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := studylayout.SetupScript([]string{"libssl-dev", "pkg-config"}, "")
	if a != b {
		t.Error("the script depends on the order of packages")
	}
	if !strings.Contains(a, `packages="libssl-dev pkg-config"`) || !strings.Contains(a, "DEBIAN_FRONTEND=noninteractive") || !strings.Contains(a, "-y") {
		t.Errorf("script:\n%s", a)
	}
	sh := testenv.Tool(t, "sh")
	script, _ := studylayout.SetupScript([]string{"libssl-dev", "pkg-config"}, "#!/bin/bash\necho own-setup-ran \"$UNSET_VAR\"\n")
	for _, tc := range []struct {
		name      string
		installed string // packages dpkg-query reports installed
		wantApt   string
	}{
		{"nothing installed", "", "update -q\ninstall -y -q --no-install-recommends libssl-dev pkg-config\n"},
		{"one installed", "pkg-config", "update -q\ninstall -y -q --no-install-recommends libssl-dev\n"},
		{"all installed: idempotent", "libssl-dev pkg-config", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			bin := filepath.Join(dir, "bin")
			os.MkdirAll(bin, 0o755)
			log := filepath.Join(dir, "apt.log")
			stub := map[string]string{
				"dpkg-query": "#!/bin/sh\nfor a; do last=$a; done\nfor p in $INSTALLED; do [ \"$p\" = \"$last\" ] && { echo 'install ok installed'; exit 0; }; done\nexit 1\n",
				"apt-get":    "#!/bin/sh\n[ \"$DEBIAN_FRONTEND\" = noninteractive ] || exit 9\necho \"$*\" >> " + log + "\n",
				"id":         "#!/bin/sh\necho 0\n",
			}
			for n, body := range stub {
				if err := os.WriteFile(filepath.Join(bin, n), []byte(body), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			sf := filepath.Join(dir, "setup.sh")
			os.WriteFile(sf, []byte(script), 0o644)
			cmd := exec.Command(sh, sf)
			cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin", "INSTALLED=" + tc.installed}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("setup.sh: %v\n%s", err, out)
			}
			got, _ := os.ReadFile(log)
			if string(got) != tc.wantApt {
				t.Errorf("apt-get calls:\n%s\nwant:\n%s", got, tc.wantApt)
			}
			if !strings.Contains(string(out), "own-setup-ran") {
				t.Errorf("the project's own setup.sh did not run: %s", out)
			}
		})
	}
}
