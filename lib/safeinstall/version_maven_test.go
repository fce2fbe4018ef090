package safeinstall

import "testing"

func TestMavenOrder(t *testing.T) {
	lists := map[string][]string{
		// ComparableVersionTest's VERSIONS_QUALIFIER and VERSIONS_NUMBER (after MNG-7644)
		"qualifiers": {"1-alpha2snapshot", "1-alpha2", "1-alpha-123", "1-beta-2", "1-beta123", "1-m2",
			"1-m11", "1-rc", "1-cr2", "1-rc123", "1-SNAPSHOT", "1", "1-sp", "1-sp2", "1-sp123", "1-abc",
			"1-def", "1-pom-1", "1-1-snapshot", "1-1", "1-2", "1-123"},
		"numbers": {"2.0", "2.0.a", "2-1", "2.0.2", "2.0.123", "2.1.0", "2.1-a", "2.1b", "2.1-c", "2.1-1",
			"2.1.0.1", "2.2", "2.123", "11.a2", "11.a11", "11.b2", "11.b11", "11.m2", "11.m11", "11", "11.a",
			"11b", "11c", "11m"},
		// the POM reference: alpha < a1 < beta < b1 < milestone < m1 < rc = cr < snapshot <
		// "" = final = ga = release < sp
		"known qualifiers": {"1-alpha", "1-a1", "1-beta", "1-b1", "1-milestone", "1-m1", "1-rc",
			"1-snapshot", "1", "1-sp", "1-aardvark", "1-zebra"},
		"releases": {"1.0-alpha-1-SNAPSHOT", "1.0-alpha-1", "1.0-alpha-2", "1.0-beta-1", "1.0-SNAPSHOT",
			"1.0", "1.0-1", "1.0-2", "1.0.1", "1.1", "1.2.0", "2.0-1", "2.0.1", "2.0.1-klm", "2.0.1-lmn",
			"2.0.1-xyz", "2.0.1-123", "2.5"},
		"large numbers": {"20190126.230843", "1234567890.12345", "123456789012345.1H.5-beta",
			"12345678901234567890.1H.5-beta"},
	}
	for name, l := range lists {
		checkAscending(t, name, compareMaven, l)
		checkSorts(t, name, compareMaven, l)
	}
}

func TestMavenPairs(t *testing.T) {
	cases := []versionPair{
		// the POM reference's end-result examples
		{"1", "1.1", -1},
		{"1-snapshot", "1", -1},
		{"1", "1-sp", -1},
		{"1-foo2", "1-foo10", -1},
		{"1.foo", "1-foo", 0},
		{"1-foo", "1-1", -1},
		{"1-1", "1.1", -1},
		{"1.ga", "1", 0},
		{"1-ga", "1", 0},
		{"1-0", "1", 0},
		{"1.0", "1", 0},
		{"1-sp", "1-ga", 1},
		{"1-sp.1", "1-ga.1", 1},
		{"1-sp-1", "1-ga-1", -1},
		{"1-a1", "1-alpha-1", 0},
		{"1.0-alpha1", "1.0-ALPHA1", 0},
		{"1.7", "1.K", 1},
		{"5.zebra", "5.aardvark", 1},
		{"1.α", "1.b", 1},
		{"1-rc", "1-cr", 0},
		{"1-final", "1", 0},
		{"1-release", "1", 0},
		// ComparableVersionTest: equal versions
		{"1", "1.0.0", 0},
		{"1", "1.0-0", 0},
		{"1a", "1-a", 0},
		{"1a", "1.0-a", 0},
		{"1a", "1.0.0-a", 0},
		{"1.0a", "1-a", 0},
		{"1x", "1.0.0-x", 0},
		{"1.0.0x", "1-x", 0},
		{"1ga", "1", 0},
		{"1release", "1", 0},
		{"1final", "1", 0},
		{"1cr", "1rc", 0},
		{"1a1", "1-alpha-1", 0},
		{"1b2", "1-beta-2", 0},
		{"1m3", "1-milestone-3", 0},
		{"1X", "1x", 0},
		{"1GA", "1", 0},
		{"1RELeaSE", "1", 0},
		{"1FinaL", "1", 0},
		{"1cR", "1rC", 0},
		{"1m3", "1MILESTONE3", 0},
		{"1-abcdefghijklmnopqrstuvwxyz", "1-ABCDEFGHIJKLMNOPQRSTUVWXYZ", 0},
		// a, b and m mean alpha, beta and milestone only when followed by a digit
		{"1-a", "1-alpha", 1},
		{"1-b", "1-beta", 1},
		{"1-m", "1-milestone", 1},
		{"1-a", "1-b", -1}, // unknown qualifiers, lexically
		// MNG-5568: a transitive order for an unusual version
		{"6.1.0rc3", "6.1.0", -1},
		{"6.1.0rc3", "6.1H.5-beta", -1},
		{"6.1.0", "6.1H.5-beta", -1},
		// MNG-6964: qualifiers that start with -0.
		{"1-0.alpha", "1", -1},
		{"1-0.beta", "1", -1},
		{"1-0.alpha", "1-0.beta", -1},
		// leading zeros
		{"0.7", "2", -1},
		{"0.2", "1.0.7", -1},
		{"0000000000000000001", "1", 0},
		{"000000001", "01", 0},
		{"0000000000000000000", "0", 0},
		{"1.0000000000.1", "1.0.1", 0}, // by value, however long
		// hyphen and dot
		{"1.0.0-1", "1.0.0.1", -1},
		{"1-1", "1.0.1", -1},
		{"1.0-1", "1-1", 0},
		{"2.0.1-xyz", "2.0.1-123", -1},
		{"1.0-RC1", "1.0.RC1", 0},
		{"1-sp1", "1.0.1", -1},
	}
	// MNG-7644: 1.0.0.X1 < 1.0.0-X2 and 2-X == 2.0.X == 2.0.0.X for any qualifier X
	for _, x := range []string{"abc", "alpha", "a", "beta", "b", "def", "milestone", "m", "RC"} {
		cases = append(cases,
			versionPair{"1.0.0." + x + "1", "1.0.0-" + x + "2", -1},
			versionPair{"2-" + x, "2.0." + x, 0},
			versionPair{"2-" + x, "2.0.0." + x, 0},
			versionPair{"2.0." + x, "2.0.0." + x, 0})
	}
	checkPairs(t, "Maven", compareMaven, cases)
	// ComparableVersion reads "_" as a qualifier letter; the resolver's GenericVersion (and
	// the POM reference's newest example, 1_0 = 1) reads it as a separator.
	if got := compareMaven("1_0", "1"); got != 1 {
		t.Errorf("compare(1_0, 1) = %d, want 1 (a qualifier, as in ComparableVersion)", got)
	}
}

func TestMavenCanonical(t *testing.T) {
	cases := []struct{ in, want string }{
		// the POM reference's splitting and trimming examples
		{"1-1.foo-bar1baz-.1", "1-1.foo-bar-1-baz-0.1"},
		{"1.0.0", "1"},
		{"1.ga", "1"},
		{"1.final", "1"},
		{"1.0", "1"},
		{"1.", "1"},
		{"1-", "1"},
		{"1.0.0-foo.0.0", "1-foo"},
		{"1.0.0-0.0.0", "1"},
		// more
		{"1.0.0.RC1", "1-rc-1"},
		{"1.0-SNAPSHOT", "1-snapshot"},
		{"1.0-alpha-1", "1-alpha-1"},
		{"1a1", "1-alpha-1"},
		{"2.0.1-ga", "2.0.1"},
		{"1-ga-1", "1-1"}, // [1, [[1]]]: the same text as 1-1, a different version
		{"", ""},
	}
	for _, c := range cases {
		if got := parseMaven(c.in).String(); got != c.want {
			t.Errorf("canonical(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// a canonical form reads back as itself
	for _, c := range cases {
		canon := parseMaven(c.in).String()
		if again := parseMaven(canon).String(); again != canon {
			t.Errorf("canonical(%q) = %q, which reads back as %q", c.in, canon, again)
		}
	}
}
