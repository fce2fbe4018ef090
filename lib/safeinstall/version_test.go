package safeinstall

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/envgap/envgap/schemas"
)

// checkAscending fails unless every version of list sorts strictly before every later one,
// in both directions, and equals itself.
func checkAscending(t *testing.T, name string, order func(a, b string) int, list []string) {
	t.Helper()
	for i, lo := range list {
		if got := order(lo, lo); got != 0 {
			t.Errorf("%s: compare(%q, %q) = %d, want 0", name, lo, lo, got)
		}
		for _, hi := range list[i+1:] {
			if got := order(lo, hi); got != -1 {
				t.Errorf("%s: compare(%q, %q) = %d, want -1", name, lo, hi, got)
			}
			if got := order(hi, lo); got != 1 {
				t.Errorf("%s: compare(%q, %q) = %d, want 1", name, hi, lo, got)
			}
		}
	}
}

// checkSorts shuffles list with a fixed seed, sorts it with order and fails unless the
// result is list again.
func checkSorts(t *testing.T, name string, order func(a, b string) int, list []string) {
	t.Helper()
	got := slices.Clone(list)
	rand.New(rand.NewPCG(1, uint64(len(list)))).Shuffle(len(got), func(i, j int) { got[i], got[j] = got[j], got[i] })
	slices.Reverse(got)
	slices.SortStableFunc(got, order)
	if !slices.Equal(got, list) {
		t.Errorf("%s: sorted\n  %q\nwant\n  %q", name, got, list)
	}
}

// checkPairs checks a table of comparisons in both directions.
func checkPairs(t *testing.T, name string, order func(a, b string) int, cases []versionPair) {
	t.Helper()
	for _, c := range cases {
		if got := order(c.a, c.b); got != c.want {
			t.Errorf("%s: compare(%q, %q) = %d, want %d", name, c.a, c.b, got, c.want)
		}
		if got := order(c.b, c.a); got != -c.want {
			t.Errorf("%s: compare(%q, %q) = %d, want %d", name, c.b, c.a, got, -c.want)
		}
	}
}

type versionPair struct {
	a, b string
	want int
}

func TestCompareVersions(t *testing.T) {
	cases := []struct {
		eco  string
		a, b string
		want int
	}{
		// the same pair, ordered by each ecosystem
		{"PyPI", "1.0", "1.0.0", 0},
		{"npm", "1.0", "1.0.0", -1}, // not SemVer: coerced, just before 1.0.0
		{"Maven", "1.0", "1.0.0", 0},
		{"PyPI", "1.0.0-rc.1", "1.0.0rc1", 0},
		{"npm", "1.0.0-rc.1", "1.0.0-rc.2", -1},
		{"Maven", "1.0.0.RC1", "1.0.0-RC2", -1},
		{"PyPI", "1.0.0+build5", "1.0.0", 1}, // a local version sorts after the public one
		{"npm", "1.0.0+build5", "1.0.0", 0},  // build metadata does not order
		{"npm", "1.0.0-alpha", "1.0.0", -1},
		{"Maven", "1.0-SNAPSHOT", "1.0", -1},
		{"Maven", "1.0-sp1", "1.0", 1},
		{"PyPI", "1.0.post1", "1.0", 1},
		{"npm", "v4.17.21", "4.17.21", 0},
		{"npm", "=4.17.20", "4.17.21", -1},
		{"PyPI", "1!1.0", "2.0", 1},
		{"npm", "1.0.0-beta.11", "1.0.0-beta.2", 1},
		{"PyPI", "1.0b11", "1.0b2", 1},
		// names are matched case-insensitively and without an OSV suffix
		{"pypi", "1.0a1", "1.0", -1},
		{"NPM", "1.10.0", "1.9.0", 1},
		{"Maven:https://maven.google.com", "1.0-alpha-1", "1.0-ALPHA1", 0},
		// other ecosystems: the generic order
		{"Go", "1.2.3", "1.10.0", -1},
		{"Go", "2.0", "1.99.99", 1},
		{"RubyGems", "1.0.a", "1.0", -1},
		{"crates.io", "1.0.0-alpha", "1.0.0-beta", -1},
		{"Debian", "5.3", "5.4", -1},
		{"", "1.0.dev1", "1.0a1", -1},
		{"", "1.0.post1", "1.0", 1},
	}
	for _, c := range cases {
		if got := CompareVersions(c.eco, c.a, c.b); got != c.want {
			t.Errorf("CompareVersions(%q, %q, %q) = %d, want %d", c.eco, c.a, c.b, got, c.want)
		}
		if got := CompareVersions(c.eco, c.b, c.a); got != -c.want {
			t.Errorf("CompareVersions(%q, %q, %q) = %d, want %d", c.eco, c.b, c.a, got, -c.want)
		}
	}
}

func TestSameVersion(t *testing.T) {
	cases := []struct {
		eco, listed, v string
		want           bool
	}{
		{"PyPI", "1.0", "1.0.0", true},
		{"PyPI", "1.0-1", "1.0.post1", true},
		{"PyPI", "1.0", "1.0+local", false},
		{"PyPI", "not a version", "not a version", true},
		{"PyPI", "not a version", "not  a version", false},
		{"npm", "1.2.3", "v1.2.3", true},
		{"npm", "1.2.3+build.7", "1.2.3", true},
		{"npm", "1.2", "1.2.0", false},
		{"npm", "1.2.3-rc.1", "1.2.3", false},
		{"Maven", "1.0", "1", false},
		{"Maven", "1.0", "1.0", true},
		{"Go", "1.0", "1.0.0", false},
	}
	for _, c := range cases {
		if got := sameVersion(c.eco, c.listed, c.v); got != c.want {
			t.Errorf("sameVersion(%s, %q, %q) = %v, want %v", c.eco, c.listed, c.v, got, c.want)
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
		{"some-pkg", "0.9.0", true}, // PEP 440: the listed version
		{"some-pkg", "1.1", false},
		{"some-pkg", "1.2", true},
		{"some.pkg", "1.4.9", true},
		{"some-pkg", "1.5", false},
		{"some-pkg", "2.1", true},
		{"some-pkg", "2.1.0", true},
		{"some-pkg", "2.1.post1", false},
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

// TestAffectsRanges matches queries against the records of testdata/osv_ranges.json.
func TestAffectsRanges(t *testing.T) {
	db, err := LoadOSVFile("testdata/osv_ranges.json")
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]OSVRecord{}
	for _, r := range db.Records {
		byID[r.ID] = r
	}
	cases := []struct {
		id, eco, name, version string
		want                   bool
	}{
		// PyPI: pre-releases of the fix are before it, so still affected
		{"PY-PRE", "PyPI", "django", "3.2", true},
		{"PY-PRE", "PyPI", "django", "4.0a1", true},
		{"PY-PRE", "PyPI", "django", "4.0.0rc1", true},
		{"PY-PRE", "PyPI", "django", "4.0.dev20210101", true},
		{"PY-PRE", "PyPI", "django", "4.0", false},
		{"PY-PRE", "PyPI", "django", "4.0.0", false},
		{"PY-PRE", "PyPI", "django", "4.0+local.1", false},
		{"PY-PRE", "PyPI", "django", "4.0.post1", false},
		{"PY-PRE", "PyPI", "django", "1.9", false},
		{"PY-PRE", "PyPI", "django", "2.0a1", false},
		{"PY-PRE", "PyPI", "django", "2.0", true},
		// PyPI: epochs
		{"PY-EPOCH", "PyPI", "calver-pkg", "2023.1", false}, // epoch 0 is before 1!1.0
		{"PY-EPOCH", "PyPI", "calver-pkg", "1!1.0", true},
		{"PY-EPOCH", "PyPI", "calver-pkg", "1!1.9.9", true},
		{"PY-EPOCH", "PyPI", "calver-pkg", "1!2.0", false},
		{"PY-EPOCH", "PyPI", "calver-pkg", "2!0.1", false},
		// PyPI: post-releases and last_affected
		{"PY-POST", "PyPI", "Flask_Thing", "1.0", true},
		{"PY-POST", "PyPI", "flask-thing", "1.0.post1", true},
		{"PY-POST", "PyPI", "flask-thing", "1.0-1", true}, // implicit post-release
		{"PY-POST", "PyPI", "flask-thing", "1.0.post2.dev1", true},
		{"PY-POST", "PyPI", "flask-thing", "1.0.post2", false},
		{"PY-POST", "PyPI", "flask-thing", "1.0.1", false},
		{"PY-POST", "PyPI", "flask-thing", "0.9", false},
		{"PY-POST", "PyPI", "flask-thing", "2.0.post1", true}, // last_affected is inclusive
		{"PY-POST", "PyPI", "flask-thing", "2.0.post1.dev3", true},
		{"PY-POST", "PyPI", "flask-thing", "2.0.post2", false},
		{"PY-POST", "PyPI", "flask-thing", "2.0.1", false},
		// PyPI: a string that is not PEP 440 sorts before every version
		{"PY-PRE", "PyPI", "django", "dev-branch", false},
		{"PY-ZERO", "PyPI", "anything", "dev-branch", true},
		// npm (ECOSYSTEM) and SEMVER ranges: SemVer precedence
		{"NPM-PRE", "npm", "lodash", "4.17.21-rc.1", true},
		{"NPM-PRE", "npm", "lodash", "4.17.21-beta.11", true},
		{"NPM-PRE", "npm", "lodash", "4.17.20", true},
		{"NPM-PRE", "npm", "lodash", "4.17.21", false},
		{"NPM-PRE", "npm", "lodash", "v4.17.21", false},
		{"NPM-PRE", "npm", "lodash", "4.17.21+build.5", false},
		{"NPM-PRE", "npm", "lodash", "5.0.0-alpha.1", false}, // introduced 5.0.0: its pre-releases are before
		{"NPM-PRE", "npm", "lodash", "5.0.0", true},
		{"NPM-PRE", "npm", "lodash", "5.1.0-0", true},
		{"SEMVER-GO", "Go", "example.com/mod", "1.2.9", true},
		{"SEMVER-GO", "Go", "example.com/mod", "1.10.0", false},
		{"SEMVER-GO", "Go", "example.com/mod", "1.3.0-rc.1", true},
		{"SEMVER-GO", "Go", "example.com/mod", "1.3.0", false},
		// Maven: qualifiers
		{"MVN-QUAL", "Maven", "org.example:lib", "2.0-alpha-1", false},
		{"MVN-QUAL", "Maven", "org.example:lib", "2.0-beta-1", true},
		{"MVN-QUAL", "Maven", "org.example:lib", "2.0-RC1", true},
		{"MVN-QUAL", "Maven", "org.example:lib", "2.0-SNAPSHOT", true},
		{"MVN-QUAL", "Maven", "org.example:lib", "2.0", true},
		{"MVN-QUAL", "Maven", "org.example:lib", "2.0.Final", true},
		{"MVN-QUAL", "Maven", "org.example:lib", "2.0-sp1", true},
		{"MVN-QUAL", "Maven", "org.example:lib", "2.0.1-M1", true},
		{"MVN-QUAL", "Maven", "org.example:lib", "2.0.1", false},
		{"MVN-QUAL", "Maven", "org.example:lib", "2.0.1.GA", false},
		{"MVN-QUAL", "Maven", "org.example:lib", "2.0.1-redhat-1", false},
		// limit events
		{"LIMIT", "npm", "left-pad", "1.5.0", true},
		{"LIMIT", "npm", "left-pad", "1.9.9", true},
		{"LIMIT", "npm", "left-pad", "2.0.0-rc.1", true}, // below the limit 2.0.0
		{"LIMIT", "npm", "left-pad", "2.0.0", false},
		{"LIMIT", "npm", "left-pad", "3.0.0", false},
		{"LIMIT", "npm", "left-pad", "0.9.0", false},
		{"LIMIT-STAR", "npm", "left-pad", "9.9.9", true},
		{"LIMIT-MULTI", "Maven", "org.example:lib", "1.5", true},
		{"LIMIT-MULTI", "Maven", "org.example:lib", "3.5", true}, // below the second limit
		{"LIMIT-MULTI", "Maven", "org.example:lib", "4.0", false},
		// several ranges and the versions list are ORed
		{"MULTI", "npm", "qs", "1.1.0", true},
		{"MULTI", "npm", "qs", "2.0.0", false},
		{"MULTI", "npm", "qs", "3.5.0", true},
		{"MULTI", "npm", "qs", "4.0.0", false},
		{"MULTI", "npm", "qs", "6.0.0", true}, // versions list only
		{"MULTI", "npm", "qs", "6.0.1", false},
		// unsorted events are evaluated in version order
		{"UNSORTED", "PyPI", "pkg", "1.5", true},
		{"UNSORTED", "PyPI", "pkg", "2.5", false},
		{"UNSORTED", "PyPI", "pkg", "3.5", true},
		{"UNSORTED", "PyPI", "pkg", "0.5", false},
		// GIT ranges cannot be evaluated here
		{"GIT", "PyPI", "pkg", "1.0", false},
		// other ecosystems keep the generic order
		{"GENERIC", "RubyGems", "rack", "2.2.6", true},
		{"GENERIC", "RubyGems", "rack", "2.2.10", false},
	}
	for _, c := range cases {
		rec, ok := byID[c.id]
		if !ok {
			t.Fatalf("testdata/osv_ranges.json has no record %s", c.id)
		}
		if got := Affects(rec, Query{c.eco, c.name, c.version}); got != c.want {
			t.Errorf("%s: Affects(%s %s %s) = %v, want %v", c.id, c.eco, c.name, c.version, got, c.want)
		}
	}
}

func TestInRangeTies(t *testing.T) {
	ev := func(kv ...string) []map[string]string {
		var out []map[string]string
		for i := 0; i < len(kv); i += 2 {
			out = append(out, map[string]string{kv[i]: kv[i+1]})
		}
		return out
	}
	cases := []struct {
		name   string
		events []map[string]string
		v      string
		want   bool
	}{
		{"empty range [1.0, 1.0)", ev("introduced", "1.0", "fixed", "1.0"), "1.0", false},
		{"one version [1.0, 1.0]", ev("introduced", "1.0", "last_affected", "1.0"), "1.0", true},
		{"reopened at the fix", ev("introduced", "1.0", "fixed", "2.0", "introduced", "2.0", "fixed", "3.0"), "2.5", true},
		{"equal spellings keep their order", ev("introduced", "1.0", "fixed", "2.0", "introduced", "2.0.0", "fixed", "3"), "2.0", true},
		{"introduced 0 first", ev("fixed", "0.5", "introduced", "0"), "0.1", true},
		{"several objects in one event", []map[string]string{{"fixed": "2.0", "introduced": "1.0"}}, "1.5", true},
		{"no introduced", ev("fixed", "1.0"), "0.5", false},
		{"limit only caps", ev("introduced", "0", "limit", "1.0"), "1.0", false},
	}
	for _, c := range cases {
		if got := inRange(comparePEP440, c.events, c.v); got != c.want {
			t.Errorf("%s: inRange(%s) = %v, want %v", c.name, c.v, got, c.want)
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
