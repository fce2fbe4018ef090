package deps

import (
	"sort"
	"strings"

	"github.com/envgap/envgap/schemas"
)

// Key returns the name under which a package is compared across D1, D2 and D3:
//
//   - python: PEP 503 normalised;
//   - javascript: as written (npm names are lower case; "@scope/name" kept whole);
//   - java: the artifactId, lower case (the paper compares artifactIds; D1 and D2 name
//     groupId:artifactId, a target/dependency jar only its artifactId);
//   - cpp: lower case, with common CMake package and pkg-config names mapped to the
//     library a trace sees, so that find_package(OpenSSL) meets libssl and libcrypto,
//     find_package(ZLIB) meets libz.
func Key(eco schemas.Ecosystem, name string) string {
	switch eco {
	case schemas.EcosystemPython:
		return NormalizePython(name)
	case schemas.EcosystemJava:
		if i := strings.LastIndexByte(name, ':'); i >= 0 {
			name = name[i+1:]
		}
		return strings.ToLower(strings.TrimSpace(name))
	case schemas.EcosystemCPP:
		n := strings.ToLower(strings.TrimSpace(name))
		if a, ok := cppAliases[n]; ok {
			return a
		}
		if strings.HasPrefix(n, "boost_") {
			return "boost"
		}
		return n
	}
	return strings.TrimSpace(name)
}

// cppAliases maps CMake package names, pkg-config module names and library names of
// the same package to one key.
var cppAliases = map[string]string{
	"openssl": "openssl", "ssl": "openssl", "crypto": "openssl", "libssl": "openssl", "libcrypto": "openssl",
	"zlib": "zlib", "z": "zlib",
	"curl": "curl", "libcurl": "curl", "curl-gnutls": "curl", "curl-openssl": "curl",
	"sqlite3": "sqlite3", "libsqlite3": "sqlite3", "sqlite": "sqlite3",
	"png": "png", "png16": "png", "libpng": "png",
	"jpeg": "jpeg", "libjpeg": "jpeg", "turbojpeg": "jpeg",
	"bzip2": "bz2", "bz2": "bz2",
	"liblzma": "lzma", "lzma": "lzma",
	"zstd": "zstd", "libzstd": "zstd",
	"gtest": "gtest", "googletest": "gtest",
	"yaml-cpp": "yaml-cpp",
	"protobuf": "protobuf", "libprotobuf": "protobuf",
	"libxml2": "xml2", "xml2": "xml2",
	"expat": "expat", "libexpat": "expat",
	"uuid": "uuid", "libuuid": "uuid",
	"libsodium": "sodium", "sodium": "sodium",
	"libuv": "uv", "uv": "uv",
	"libevent": "event", "event": "event",
	"libzip": "zip", "zip": "zip",
	"libarchive": "archive", "archive": "archive",
	"libssh2": "ssh2", "ssh2": "ssh2",
	"pcre2": "pcre2-8", "pcre2-8": "pcre2-8",
	"threads": "pthread",
}

// Comparison is D1 against D3, the paper's manifest precision, recall and F1, with
// phantom (declared, never loaded) and hidden (loaded, never declared) packages.
type Comparison struct {
	// Measured is false when either layer is Unreadable, or when both are empty (the
	// paper leaves such projects out); Reason then says why.
	Measured  bool     `json:"measured"`
	Reason    string   `json:"reason,omitempty"`
	Precision float64  `json:"precision"`
	Recall    float64  `json:"recall"`
	F1        float64  `json:"f1"`
	Common    []string `json:"common"`
	Phantom   []string `json:"phantom"`
	Hidden    []string `json:"hidden"`
}

// Compare compares declared (D1) with traced (D3) packages by Key. Precision is
// |D1∩D3|/|D1|, recall |D1∩D3|/|D3|, with the paper's conventions: precision 1 when D1
// is empty and D3 is not, recall 1 when D3 is empty and D1 is not, F1 0 when both are 0.
// The lists hold keys, sorted.
func Compare(eco schemas.Ecosystem, d1, d3 schemas.DepSet) Comparison {
	var c Comparison
	switch {
	case d1.Unreadable != "":
		c.Reason = "declared dependencies not measured: " + d1.Unreadable
		return c
	case d3.Unreadable != "":
		c.Reason = "traced dependencies not measured: " + d3.Unreadable
		return c
	}
	a, b := keySet(eco, d1), keySet(eco, d3)
	if len(a) == 0 && len(b) == 0 {
		c.Reason = "nothing declared and nothing traced"
		return c
	}
	c.Measured = true
	c.Common, c.Phantom, c.Hidden = []string{}, []string{}, []string{}
	for k := range a {
		if b[k] {
			c.Common = append(c.Common, k)
		} else {
			c.Phantom = append(c.Phantom, k)
		}
	}
	for k := range b {
		if !a[k] {
			c.Hidden = append(c.Hidden, k)
		}
	}
	sort.Strings(c.Common)
	sort.Strings(c.Phantom)
	sort.Strings(c.Hidden)
	n := float64(len(c.Common))
	switch {
	case len(a) == 0:
		c.Precision = 1
	default:
		c.Precision = n / float64(len(a))
	}
	switch {
	case len(b) == 0:
		c.Recall = 1
	default:
		c.Recall = n / float64(len(b))
	}
	if c.Precision+c.Recall > 0 {
		c.F1 = 2 * c.Precision * c.Recall / (c.Precision + c.Recall)
	}
	return c
}

func keySet(eco schemas.Ecosystem, ds schemas.DepSet) map[string]bool {
	m := map[string]bool{}
	for _, d := range ds.Deps {
		if k := Key(eco, d.Name); k != "" {
			m[k] = true
		}
	}
	return m
}
