package safeinstall

import (
	"strings"
	"testing"
)

// pep440Summary is PEP 440's "Summary of permitted suffixes and relative ordering" example,
// in its order.
var pep440Summary = []string{
	"1.0.dev456",
	"1.0a1",
	"1.0a2.dev456",
	"1.0a12.dev456",
	"1.0a12",
	"1.0b1.dev456",
	"1.0b2",
	"1.0b2.post345.dev456",
	"1.0b2.post345",
	"1.0rc1.dev456",
	"1.0rc1",
	"1.0",
	"1.0+abc.5",
	"1.0+abc.7",
	"1.0+5",
	"1.0.post456.dev34",
	"1.0.post456",
	"1.0.15",
	"1.1.dev1",
}

// pep440Spellings extends the summary with alternative spellings, local labels and epochs.
var pep440Spellings = []string{
	"0.9",
	"1.0.dev456",
	"1.0a1",
	"1.0a2.dev456",
	"1.0a12.dev456",
	"1.0a12",
	"1.0b1.dev456",
	"1.0b2",
	"1.0b2.post345.dev456",
	"1.0b2.post345",
	"1.0b2-346", // implicit post-release
	"1.0c1.dev456",
	"1.0c1",
	"1.0rc2",
	"1.0c3",
	"1.0",
	"1.0.post456.dev34",
	"1.0.post456",
	"1.1.dev1",
	"1.2+123abc",
	"1.2+123abc456",
	"1.2+abc",
	"1.2+abc123",
	"1.2+abc123def",
	"1.2+1234.abc",
	"1.2+123456",
	"1.2.r32+123456",
	"1.2.rev33+123456",
	"2012.10",
	"1!0.1",
	"1!1.0.dev456",
	"1!1.0a1",
	"1!1.0rc1",
	"1!1.0",
	"1!1.0.post1",
	"1!1.1.dev1",
	"2!0.0.dev0",
}

func TestPEP440Order(t *testing.T) {
	checkAscending(t, "PEP 440 summary", comparePEP440, pep440Summary)
	checkSorts(t, "PEP 440 summary", comparePEP440, pep440Summary)
	checkAscending(t, "PEP 440 spellings", comparePEP440, pep440Spellings)
	checkSorts(t, "PEP 440 spellings", comparePEP440, pep440Spellings)
}

func TestPEP440Pairs(t *testing.T) {
	checkPairs(t, "PEP 440", comparePEP440, []versionPair{
		// release segments: numeric, padded with zeros
		{"1.0", "1.0.0", 0},
		{"1", "1.0.0.0", 0},
		{"1.2", "1.10", -1},
		{"1.0.0", "1.0.1", -1},
		{"01.02", "1.2", 0},
		{"1.0.9", "1.0.10", -1},
		{"99999999999999999999.1", "99999999999999999999.2", -1},
		{"100000000000000000000", "99999999999999999999", 1},
		// epochs
		{"0!1.0", "1.0", 0},
		{"1!0.1", "9999", 1},
		{"2!1.0", "1!2.0", 1},
		{"1!1.0", "1!1.0.0", 0},
		// pre-releases and their spellings
		{"1.0a1", "1.0", -1},
		{"1.0a1", "1.0alpha1", 0},
		{"1.0a1", "1.0.a.1", 0},
		{"1.0a1", "1.0-a-1", 0},
		{"1.0a1", "1.0_a_1", 0},
		{"1.0a1", "1.0A1", 0},
		{"1.0a1", "1.0a01", 0},
		{"1.0b1", "1.0beta1", 0},
		{"1.0rc1", "1.0c1", 0},
		{"1.0rc1", "1.0pre1", 0},
		{"1.0rc1", "1.0preview1", 0},
		{"1.0rc1", "1.0-RC-1", 0},
		{"1.0a", "1.0a0", 0}, // implicit number
		{"1.0b", "1.0b0", 0},
		{"1.0a9", "1.0a10", -1},
		{"1.0a2", "1.0b1", -1},
		{"1.0b2", "1.0rc1", -1},
		{"1.0rc1", "1.0c2", -1},
		{"1.0rc99", "1.0", -1},
		{"1.0.0-rc.1", "1.0.0rc1", 0},
		{"1.0a1", "1.0.dev1", 1}, // a dev release of the final sorts first
		// post-releases, including the implicit 1.0-1 and rev/r
		{"1.0.post1", "1.0-1", 0},
		{"1.0.post1", "1.0post1", 0},
		{"1.0.post1", "1.0-r1", 0},
		{"1.0.post1", "1.0rev1", 0},
		{"1.0.post1", "1.0.POST1", 0},
		{"1.0.post1", "1.0_post_1", 0},
		{"1.0.post", "1.0.post0", 0},
		{"1.0.post0", "1.0", 1},
		{"1.0.post1", "1.0.post2", -1},
		{"1.0.post1", "1.0.1", -1},
		{"1.0.post1.dev1", "1.0.post1", -1},
		{"1.0.post1.dev1", "1.0", 1},
		{"1.0a1.post1", "1.0a1", 1},
		{"1.0a1.post1", "1.0a2", -1},
		// dev releases
		{"1.0.dev", "1.0.dev0", 0},
		{"1.0-dev1", "1.0.dev1", 0},
		{"1.0dev1", "1.0.dev1", 0},
		{"1.0.dev1", "1.0.dev2", -1},
		{"1.0a1.dev1", "1.0a1", -1},
		{"1.0a1.dev1", "1.0.dev1", 1},
		// local versions
		{"1.0+abc", "1.0", 1},
		{"1.0+0", "1.0", 1},
		{"1.0+abc", "1.0+abc.0", -1},
		{"1.0+abc.5", "1.0+abc.10", -1},
		{"1.0+abc.5", "1.0+5", -1}, // numeric segments sort after alphanumeric ones
		{"1.0+ABC.5", "1.0+abc.5", 0},
		{"1.0+ubuntu-1", "1.0+ubuntu.1", 0},
		{"1.0+ubuntu_1", "1.0+ubuntu.1", 0},
		{"1.0+abc.01", "1.0+abc.1", 0},
		{"1.0+zzz", "1.0.post0", -1},
		{"1.0+zzz", "1.0.0+zzz", 0},
		// normalisation of case, "v" and space
		{"v1.0", "1.0", 0},
		{"V1.0", "1.0", 0},
		{" 1.0\n", "1.0", 0},
		{"1.0.DEV1", "1.0.dev1", 0},
	})
}

func TestPEP440Normalize(t *testing.T) {
	cases := []struct{ in, want string }{ // want "" means not PEP 440
		{"1.0", "1.0"},
		{"1.1RC1", "1.1rc1"},
		{"00", "0"},
		{"09000", "9000"},
		{"1.0+foo0100", "1.0+foo0100"},
		{"1.1.a1", "1.1a1"},
		{"1.1-a1", "1.1a1"},
		{"1.1_a1", "1.1a1"},
		{"1.1alpha1", "1.1a1"},
		{"1.1beta2", "1.1b2"},
		{"1.1c3", "1.1rc3"},
		{"1.0a.1", "1.0a1"},
		{"1.2a", "1.2a0"},
		{"1.2.post2", "1.2.post2"},
		{"1.2-post2", "1.2.post2"},
		{"1.2_post2", "1.2.post2"},
		{"1.2post2", "1.2.post2"},
		{"1.2.post-2", "1.2.post2"},
		{"1.0-r4", "1.0.post4"},
		{"1.0-rev4", "1.0.post4"},
		{"1.2.post", "1.2.post0"},
		{"1.0-1", "1.0.post1"},
		{"1.2.dev2", "1.2.dev2"},
		{"1.2-dev2", "1.2.dev2"},
		{"1.2dev2", "1.2.dev2"},
		{"1.2.dev", "1.2.dev0"},
		{"1.0+ubuntu-1", "1.0+ubuntu.1"},
		{"1.0+ubuntu.01", "1.0+ubuntu.1"},
		{"v1.0", "1.0"},
		{" 1.0 ", "1.0"},
		{"0!1.0", "1.0"},
		{"01!1.0", "1!1.0"},
		{"1.0a1.post1.dev1+local.7", "1.0a1.post1.dev1+local.7"},
		{"1.0-", ""},
		{"1.0-dev-", "1.0.dev0"},
		{"french toast", ""},
		{"1.0+", ""},
		{"1.0+a..b", ""},
		{"1.0+a_", ""},
		{"1.0++a", ""},
		{"1!", ""},
		{"1.0.x", ""},
		{"1.0a1b1", ""},
		{"1.0.dev1.post1", ""},
		{"1.0.dev1.dev2", ""},
		{"1.0 .1", ""},
		{"1.0\u212a", ""}, // non-ASCII is never PEP 440 here
		{"", ""},
	}
	for _, c := range cases {
		v, ok := parsePEP440(c.in)
		got := ""
		if ok {
			got = v.String()
		}
		if got != c.want {
			t.Errorf("normalize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestPEP440Invalid(t *testing.T) {
	// Not PEP 440 sorts before every PEP 440 version; among themselves, the legacy order.
	checkPairs(t, "PEP 440 invalid", comparePEP440, []versionPair{
		{"french toast", "0", -1},
		{"1.0-", "0.0.dev0", -1},
		{"99.x", "0", -1},
		{"1.0.x", "1.0.x", 0},
		{"1.0.x", "1.0.y", -1},
		{"1.0.X", "1.0.x", 0},
	})
	legacy := []string{
		"1.0.x-dev",    // dev sorts before the final
		"1.0.x-pre",    // pre, preview and rc read as c
		"1.0.x-rc1",    // pre-release words drop the "-" before them
		"1.0.x",        // "*final"
		"1.0.x-1",      // "-" reads as "final-": after the final
		"1.0.y",        //
		"1.0.1.x",      // a number after a word
		"1.0.2.x",      //
		"1.0.10.x",     // numbers are compared zero-padded
		"2.0 final x",  // other text is a word
		"0",            // every PEP 440 version comes after
		"1.0.dev0",     //
		"1.0",          //
		"1!0.0.dev0",   //
		"1!1.0+abc.99", //
	}
	checkAscending(t, "legacy then PEP 440", comparePEP440, legacy)
	checkSorts(t, "legacy then PEP 440", comparePEP440, legacy)
	// the legacy key drops trailing zeros before a word, and "-" before a pre-release word
	cases := []struct{ in, want string }{
		{"1.0.x", "00000001 *x *final"},
		{"1.0.0.x-dev", "00000001 *x *@ *final"},
		{"1.0-x", "00000001 *final- *x *final"},
		{"2_0", "00000002 *_ *final"},
		{"123456789.x", "123456789 *x *final"},
	}
	for _, c := range cases {
		if got := strings.Join(legacyPythonKey(c.in), " "); got != c.want {
			t.Errorf("legacyPythonKey(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
