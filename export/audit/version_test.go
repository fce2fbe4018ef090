package audit

import (
	"testing"

	"github.com/envgap/envgap/schemas"
)

func TestCompareVersions(t *testing.T) {
	cases := []struct {
		a, b string
		want int
	}{
		{"1.0", "1.0.0", 0},
		{"1.2.3", "1.10.0", -1},
		{"2.0", "1.99.99", 1},
		{"1.0rc1", "1.0", -1},
		{"1.0.0-alpha", "1.0.0", -1},
		{"1.0.0-alpha", "1.0.0-beta", -1},
		{"1.0a1", "1.0b1", -1},
		{"1.0.dev1", "1.0a1", -1},
		{"1.0.post1", "1.0", 1},
		{"v4.17.21", "4.17.21", 0},
		{"4.17.20", "4.17.21", -1},
		{"1.0.0+build5", "1.0.0", 0},
		{"5.3", "5.4", -1},
	}
	for _, c := range cases {
		if got := CompareVersions(c.a, c.b); got != c.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := CompareVersions(c.b, c.a); got != -c.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", c.b, c.a, got, -c.want)
		}
	}
}

func TestAffects(t *testing.T) {
	rec := OSVRecord{ID: "X", Affected: []OSVAffected{{
		Ranges:   []OSVRange{{Type: "ECOSYSTEM", Events: []map[string]string{{"introduced": "1.2"}, {"fixed": "1.5"}, {"introduced": "2.0"}, {"last_affected": "2.1"}}}},
		Versions: []string{"0.9"},
	}}}
	rec.Affected[0].Package.Ecosystem, rec.Affected[0].Package.Name = "PyPI", "Some_Pkg"
	cases := []struct {
		name, version string
		want          bool
	}{
		{"some-pkg", "0.9", true},
		{"some-pkg", "1.1", false},
		{"some-pkg", "1.2", true},
		{"some.pkg", "1.4.9", true},
		{"some-pkg", "1.5", false},
		{"some-pkg", "2.1", true},
		{"some-pkg", "2.1.1", false},
		{"other", "1.3", false},
		{"some-pkg", "", false},
	}
	for _, c := range cases {
		if got := Affects(rec, Query{"PyPI", c.name, c.version}); got != c.want {
			t.Errorf("Affects(%s %s) = %v, want %v", c.name, c.version, got, c.want)
		}
	}
}

func TestExactVersion(t *testing.T) {
	cases := []struct {
		eco        schemas.Ecosystem
		spec, want string
	}{
		{schemas.EcosystemPython, "==1.2.3", "1.2.3"},
		{schemas.EcosystemPython, "=== 1.2.3", "1.2.3"},
		{schemas.EcosystemPython, "==1.*", ""},
		{schemas.EcosystemPython, ">=1.2", ""},
		{schemas.EcosystemPython, "<3.0.0", ""},
		{schemas.EcosystemJavaScript, "1.3.0", "1.3.0"},
		{schemas.EcosystemJavaScript, "^1.3.0", ""},
		{schemas.EcosystemJavaScript, "1.x", ""},
		{schemas.EcosystemJava, "4.13.2", "4.13.2"},
		{schemas.EcosystemJava, "[1.0,2.0)", ""},
		{schemas.EcosystemJava, "${junit.version}", ""},
		{schemas.EcosystemCPP, "1.2", ""},
	}
	for _, c := range cases {
		if got := exactVersion(c.eco, c.spec); got != c.want {
			t.Errorf("exactVersion(%s, %q) = %q, want %q", c.eco, c.spec, got, c.want)
		}
	}
}

func TestParseOSV(t *testing.T) {
	arr := `[{"id":"A","affected":[]},{"id":"B","affected":[]}]`
	jsonl := "{\"id\":\"A\",\"affected\":[]}\n\n{\"id\":\"B\",\"affected\":[]}\n"
	for name, in := range map[string]string{"array": arr, "jsonl": jsonl} {
		recs, err := ParseOSV(name, []byte(in))
		if err != nil || len(recs) != 2 {
			t.Errorf("%s: %d records, %v", name, len(recs), err)
		}
	}
	if _, err := ParseOSV("bad", []byte("{\"id\":\"A\"}\nnot json\n")); err == nil {
		t.Errorf("bad JSON Lines accepted")
	}
	if _, err := ParseOSV("noid", []byte(`[{"affected":[]}]`)); err == nil {
		t.Errorf("record without id accepted")
	}
}
