package safeinstall

import "testing"

func TestSemVerOrder(t *testing.T) {
	// semver.org, items 11.2 and 11.4
	lists := map[string][]string{
		"normal versions": {"1.0.0", "2.0.0", "2.1.0", "2.1.1"},
		"pre-releases": {"1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta",
			"1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0"},
		"mixed": {"0.0.0-0", "0.0.0", "0.0.1-0", "0.0.1-1", "0.0.1-9.z", "0.0.1-10", "0.0.1-10.0",
			"0.0.1-A", "0.0.1-Z", "0.0.1-a", "0.0.1-a.0", "0.0.1-a-", "0.0.1", "0.1.0", "1.0.0-x.7.z.92",
			"1.0.0-x-y-z.--", "1.0.0", "1.2.3----RC-SNAPSHOT.12.9.1--.12", "1.2.3-SNAPSHOT-123", "1.2.3-beta",
			"1.2.3", "10.2.3-DEV-SNAPSHOT", "10.20.30", "99999999999999999999999.999999999999999999.99999999999999999"},
	}
	for name, l := range lists {
		checkAscending(t, name, compareSemVer, l)
		checkSorts(t, name, compareSemVer, l)
	}
}

func TestSemVerPairs(t *testing.T) {
	checkPairs(t, "SemVer", compareSemVer, []versionPair{
		{"1.0.0", "1.0.0", 0},
		{"1.9.0", "1.10.0", -1},
		{"1.10.0", "1.11.0", -1},
		{"2.0.0", "10.0.0", -1},
		{"1.0.10", "1.0.9", 1},
		{"0.0.1", "0.1.0", -1},
		// pre-releases
		{"1.0.0-alpha", "1.0.0", -1},
		{"1.0.0-0", "1.0.0", -1},
		{"1.0.0", "1.0.1-0", -1},
		{"1.0.0-rc.1", "1.0.0-rc.2", -1},
		{"1.0.0-rc.2", "1.0.0-rc.10", -1}, // numeric identifiers numerically
		{"1.0.0-rc2", "1.0.0-rc10", 1},    // alphanumeric identifiers lexically
		{"1.0.0-1", "1.0.0-alpha", -1},    // numeric before alphanumeric
		{"1.0.0-999", "1.0.0-a", -1},
		{"1.0.0-alpha", "1.0.0-alpha.0", -1}, // a larger set is higher
		{"1.0.0-alpha.beta", "1.0.0-alpha.1", 1},
		{"1.0.0-B", "1.0.0-a", -1},    // ASCII order: upper case first
		{"1.0.0-a-b", "1.0.0-a.b", 1}, // "a" < "a-b"
		{"1.0.0--", "1.0.0-0", 1},
		{"1.0.0-0.3.7", "1.0.0-0.3.7", 0},
		{"1.0.0-18446744073709551616", "1.0.0-18446744073709551615", 1},
		// build metadata is ignored
		{"1.0.0+build.1", "1.0.0+build.2", 0},
		{"1.0.0-alpha+001", "1.0.0-alpha", 0},
		{"1.0.0+20130313144700", "1.0.0", 0},
		{"1.0.0-beta+exp.sha.5114f85", "1.0.0-beta", 0},
		{"1.0.0+21AF26D3----117B344092BD", "1.0.0", 0},
		{"1.0.0+build", "1.0.1-alpha", -1},
		// npm's clean: space, leading v and =
		{"v1.2.3", "1.2.3", 0},
		{"=1.2.3", "1.2.3", 0},
		{"=v1.2.3", "1.2.3", 0},
		{" 1.2.3 ", "1.2.3", 0},
		{"v1.2.3-beta.1", "1.2.3", -1},
		// fallback: OSV's coercion, just before the valid version at equal precedence
		{"1.0", "1.0.0", -1},
		{"1.0", "1.0.1", -1},
		{"1.1", "1.0.9", 1},
		{"1", "1.0", 0},
		{"2", "1.99.99", 1},
		{"01.02.03", "1.2.3", -1},
		{"01.02.03", "1.2.2", 1},
		{"1.2-beta", "1.2.0-beta", -1},
		{"1.2-beta", "1.2.0-alpha", 1},
		{"1.2.3-01", "1.2.3-1", -1},
		{"1.2.3-01", "1.2.3-0", 1},
		{"1.2.3-alpha..1", "1.2.3-alpha.-.1", -1},
		{"1.2.3-alpha..1", "1.2.3-alpha.1", 1}, // "-" is alphanumeric
		// not SemVer even coerced: before everything, then by bytes
		{"1.2.3.4", "0.0.0-0", -1},
		{"latest", "0.0.0-0", -1},
		{"", "0.0.0-0", -1},
		{"abc", "abd", -1},
		{"1.2.3.4", "1.2.3.5", -1},
		{"1.2.3.4", "latest", -1},
	})
}

// The audit reads a string as valid SemVer (semver.Parse; its tests hold semver.org's
// examples), else as OSV's coercion of it, else not at all.
func TestSemVerKinds(t *testing.T) {
	for s, want := range map[string]semverKind{"1.2.3": semverValid, "v1.2.3-beta+meta": semverValid,
		"1.2": semverCoerced, "01.1.1": semverCoerced, "1.2.3-0123": semverCoerced, "alpha": semverInvalid, "": semverInvalid} {
		if _, k := parseSemVer(s); k != want {
			t.Errorf("parseSemVer(%q): kind %d, want %d", s, k, want)
		}
	}
	coerced := map[string]string{"1": "1.0.0", "1.2": "1.2.0", "01.1.1": "1.1.1", "1.2-SNAPSHOT": "1.2.0-SNAPSHOT",
		"1.2.3-0123": "1.2.3-123", "1.0.0-alpha..1": "1.0.0-alpha.-.1", "1.1.2+.123": "1.1.2+-.123",
		"1.2.3.DEV": "1.2.3.DEV", "alpha": "alpha"}
	for in, want := range coerced {
		if got := coerceSemVer(in); got != want {
			t.Errorf("coerceSemVer(%q) = %q, want %q", in, got, want)
		}
	}
}
