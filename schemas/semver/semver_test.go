package semver

import (
	"slices"
	"testing"
)

func TestParse(t *testing.T) {
	// semver.org's examples of valid and invalid strings; the last two valid ones after
	// npm's clean.
	valid := []string{"0.0.4", "1.2.3", "10.20.30", "1.1.2-prerelease+meta", "1.1.2+meta",
		"1.1.2+meta-valid", "1.0.0-alpha", "1.0.0-beta", "1.0.0-alpha.beta", "1.0.0-alpha.beta.1",
		"1.0.0-alpha.1", "1.0.0-alpha0.valid", "1.0.0-alpha.0valid",
		"1.0.0-alpha-a.b-c-somethinglong+build.1-aef.1-its-okay", "1.0.0-rc.1+build.1",
		"2.0.0-rc.1+build.123", "1.2.3-beta", "10.2.3-DEV-SNAPSHOT", "1.2.3-SNAPSHOT-123", "2.0.0+build.1848",
		"2.0.1-alpha.1227", "1.0.0-alpha+beta", "1.2.3----RC-SNAPSHOT.12.9.1--.12+788",
		"1.2.3----R-S.12.9.1--.12+meta", "1.0.0+0.build.1-rc.10000aaa-kk-0.1",
		"99999999999999999999999.999999999999999999.99999999999999999", "1.0.0-0A.is.legal",
		"v1.2.3", "=1.2.3", " 1.2.3 "}
	invalid := []string{"1", "1.2", "1.2.3-0123", "1.2.3-0123.0123", "1.1.2+.123", "+invalid",
		"-invalid", "-invalid+invalid", "-invalid.01", "alpha", "alpha.beta", "alpha.beta.1", "alpha.1",
		"alpha+beta", "alpha_beta", "alpha.", "alpha..", "beta", "1.0.0-alpha_beta", "-alpha.",
		"1.0.0-alpha..", "1.0.0-alpha..1", "1.0.0-alpha...1", "01.1.1", "1.01.1", "1.1.01", "1.2.3.DEV",
		"1.2-SNAPSHOT", "1.2.31.2.3----RC-SNAPSHOT.12.09.1--..12+788", "1.2-RC-SNAPSHOT",
		"-1.0.3-gamma+b7718", "+justmeta", "9.8.7+meta+meta", "9.8.7-whatever+meta+meta", "1.0.0-",
		"1.0.0+", "1.0.0-é", "x.y.z", "1.0.0-a..b", ""}
	for _, s := range valid {
		if _, ok := Parse(s); !ok {
			t.Errorf("Parse(%q) refused", s)
		}
	}
	for _, s := range invalid {
		if _, ok := Parse(s); ok {
			t.Errorf("Parse(%q) accepted", s)
		}
	}
	v, _ := Parse("v1.2.3-beta.1+build.7")
	if v.Major != "1" || v.Minor != "2" || v.Patch != "3" || !slices.Equal(v.Pre, []string{"beta", "1"}) || !v.Prerelease() {
		t.Errorf("Parse: %+v", v)
	}
}

func TestCompare(t *testing.T) {
	// semver.org, items 11.2 and 11.4, and a few more: numbers of any size, numeric
	// identifiers before alphanumeric ones, ASCII order, build metadata ignored.
	order := []string{"0.0.0-0", "0.0.0", "0.0.1-0", "0.0.1-1", "0.0.1-9.z", "0.0.1-10", "0.0.1-10.0",
		"0.0.1-A", "0.0.1-Z", "0.0.1-a", "0.0.1-a.0", "0.0.1-a-", "0.0.1", "0.1.0",
		"1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11",
		"1.0.0-rc.1", "1.0.0", "1.0.1", "1.10.0", "2.0.0", "2.1.0", "2.1.1", "10.2.3-DEV-SNAPSHOT", "10.20.30",
		"99999999999999999999999.999999999999999999.99999999999999999"}
	for i := range order {
		a, ok := Parse(order[i])
		if !ok {
			t.Fatalf("Parse(%q) refused", order[i])
		}
		for j := range order {
			b, _ := Parse(order[j])
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := a.Compare(b); got != want {
				t.Errorf("Compare(%s, %s) = %d, want %d", order[i], order[j], got, want)
			}
		}
	}
	for _, eq := range [][2]string{{"1.0.0+build.1", "1.0.0+build.2"}, {"1.0.0-alpha+001", "1.0.0-alpha"}, {"v1.2.3", "=1.2.3"}} {
		a, _ := Parse(eq[0])
		b, _ := Parse(eq[1])
		if a.Compare(b) != 0 {
			t.Errorf("%s and %s differ", eq[0], eq[1])
		}
	}
}

func TestCompareDigits(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{{"9", "10", -1}, {"010", "10", 0}, {"18446744073709551616", "18446744073709551615", 1}, {"0", "000", 0}} {
		if got := CompareDigits(tt.a, tt.b); got != tt.want {
			t.Errorf("CompareDigits(%s, %s) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
