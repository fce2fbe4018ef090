package deps

import (
	"math"
	"strings"
	"testing"

	"github.com/envgap/envgap/schemas"
)

func set(names ...string) schemas.DepSet {
	ds := schemas.DepSet{Deps: []schemas.Dependency{}}
	for _, n := range names {
		ds.Deps = append(ds.Deps, schemas.Dependency{Name: n})
	}
	return ds
}

func TestCompare(t *testing.T) {
	tests := []struct {
		name                    string
		eco                     schemas.Ecosystem
		d1, d3                  schemas.DepSet
		measured                bool
		p, r, f1                float64
		common, phantom, hidden string
	}{
		{"paper's pandas example", schemas.EcosystemPython, set("pandas", "pycparser"), set("pandas", "numpy", "six", "python-dateutil"),
			true, 0.5, 0.25, 1.0 / 3, "pandas", "pycparser", "numpy,python-dateutil,six"},
		{"names normalised", schemas.EcosystemPython, set("PyYAML", "typing_extensions"), set("pyyaml", "typing-extensions"),
			true, 1, 1, 1, "pyyaml,typing-extensions", "", ""},
		{"java by artifactId", schemas.EcosystemJava, set("com.google.code.gson:gson", "org.slf4j:slf4j-api"), set("gson", "com.fasterxml.jackson.core:jackson-core"),
			true, 0.5, 0.5, 0.5, "gson", "slf4j-api", "jackson-core"},
		{"cpp aliases", schemas.EcosystemCPP, set("OpenSSL", "ZLIB", "nlohmann_json"), set("ssl", "crypto", "z", "zstd"),
			true, 2.0 / 3, 2.0 / 3, 2.0 / 3, "openssl,zlib", "nlohmann_json", "zstd"},
		{"nothing declared", schemas.EcosystemJavaScript, set(), set("ansi-styles"), true, 1, 0, 0, "", "", "ansi-styles"},
		{"nothing traced (header-only)", schemas.EcosystemCPP, set("nlohmann_json"), set(), true, 0, 1, 0, "", "nlohmann_json", ""},
		{"both empty", schemas.EcosystemPython, set(), set(), false, 0, 0, 0, "", "", ""},
		{"unreadable D1", schemas.EcosystemPython, schemas.DepSet{Unreadable: "setup.py builds its list at run time"}, set("x"), false, 0, 0, 0, "", "", ""},
		{"unreadable D3", schemas.EcosystemPython, set("x"), schemas.DepSet{Unreadable: "empty trace"}, false, 0, 0, 0, "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Compare(tt.eco, tt.d1, tt.d3)
			if c.Measured != tt.measured {
				t.Fatalf("measured %v (%s), want %v", c.Measured, c.Reason, tt.measured)
			}
			if !c.Measured {
				if c.Reason == "" {
					t.Error("no reason for an unmeasured comparison")
				}
				return
			}
			for _, x := range []struct {
				what      string
				got, want float64
			}{{"precision", c.Precision, tt.p}, {"recall", c.Recall, tt.r}, {"f1", c.F1, tt.f1}} {
				if math.Abs(x.got-x.want) > 1e-9 {
					t.Errorf("%s %v, want %v", x.what, x.got, x.want)
				}
			}
			for _, x := range []struct {
				what string
				got  []string
				want string
			}{{"common", c.Common, tt.common}, {"phantom", c.Phantom, tt.phantom}, {"hidden", c.Hidden, tt.hidden}} {
				if strings.Join(x.got, ",") != x.want {
					t.Errorf("%s %q, want %q", x.what, x.got, x.want)
				}
			}
		})
	}
}

// TestEndToEndLayers ties the layers together on recorded data: D1 of a project,
// D2 from a real npm ls and D3 from a real node trace.
func TestEndToEndLayers(t *testing.T) {
	d3, err := TraceDeps(schemas.EcosystemJavaScript, readTestdata(t, "trace/node.strace.log"), TraceOptions{Workdir: "/tmp/tr/js"})
	if err != nil {
		t.Fatal(err)
	}
	d2, err := NpmLs(readTestdata(t, "npm_ls.json"))
	if err != nil {
		t.Fatal(err)
	}
	d1 := set("left-pad", "@scope/util", "absent")
	c := Compare(schemas.EcosystemJavaScript, d1, d3)
	if strings.Join(c.Phantom, ",") != "absent" || len(c.Hidden) != 0 {
		t.Errorf("phantom %q hidden %q", c.Phantom, c.Hidden)
	}
	bloat := Compare(schemas.EcosystemJavaScript, d2, d3).Phantom // installed, never loaded
	if strings.Join(bloat, ",") != "unused" {
		t.Errorf("bloat %q, want unused", bloat)
	}
}
