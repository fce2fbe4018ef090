package images

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/envgap/envgap/data"
)

// npmTarball is one resolved package version of the npm registry.
type npmTarball struct {
	name      string
	version   string
	tarball   string
	integrity string // Subresource Integrity string, e.g. "sha512-..."
}

// resolveNPM finds the highest release (no prerelease) of name whose major
// version is major, using the registry's abbreviated packument.
func resolveNPM(ctx context.Context, hc *http.Client, registry, name string, major int) (npmTarball, error) {
	u := strings.TrimSuffix(registry, "/") + "/" + url.PathEscape(name)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return npmTarball{}, fmt.Errorf("packument of %s: %w", name, err)
	}
	req.Header.Set("Accept", "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8")
	resp, err := hc.Do(req)
	if err != nil {
		return npmTarball{}, fmt.Errorf("packument of %s: %w", name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return npmTarball{}, fmt.Errorf("packument of %s: %s answered %s", name, registry, resp.Status)
	}
	var doc struct {
		Versions map[string]struct {
			Dist struct {
				Tarball   string `json:"tarball"`
				Integrity string `json:"integrity"`
				Shasum    string `json:"shasum"`
			} `json:"dist"`
		} `json:"versions"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 256<<20)).Decode(&doc); err != nil {
		return npmTarball{}, fmt.Errorf("packument of %s: decoding: %w", name, err)
	}
	var best npmTarball
	var bestV [3]int
	for v, meta := range doc.Versions {
		parts, ok := parseRelease(v)
		if !ok || parts[0] != major {
			continue
		}
		if best.version != "" && !less(bestV, parts) {
			continue
		}
		integ := meta.Dist.Integrity
		if integ == "" && meta.Dist.Shasum != "" {
			// Old packuments carry only a SHA-1; express it as SRI.
			raw, err := hex.DecodeString(meta.Dist.Shasum)
			if err == nil {
				integ = "sha1-" + base64.StdEncoding.EncodeToString(raw)
			}
		}
		if meta.Dist.Tarball == "" || integ == "" {
			continue
		}
		best = npmTarball{name: name, version: v, tarball: meta.Dist.Tarball, integrity: integ}
		bestV = parts
	}
	if best.version == "" {
		return npmTarball{}, fmt.Errorf("packument of %s: no %d.x release with a tarball and integrity", name, major)
	}
	return best, nil
}

// parseRelease parses "X.Y.Z" (no prerelease or build suffix).
func parseRelease(v string) ([3]int, bool) {
	var out [3]int
	fields := strings.Split(v, ".")
	if len(fields) != 3 {
		return out, false
	}
	for i, f := range fields {
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 {
			return out, false
		}
		out[i] = n
	}
	return out, true
}

func less(a, b [3]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// checker verifies bytes against a Subresource Integrity string: at least one
// of its sha512/sha256/sha1 entries must match (strongest one listed wins).
type checker struct {
	algo string
	want []byte
	h    hash.Hash
}

func newChecker(integrity string) (*checker, error) {
	var best *checker
	rank := map[string]int{"sha1": 1, "sha256": 2, "sha512": 3}
	for _, entry := range strings.Fields(integrity) {
		algo, b64, ok := strings.Cut(entry, "-")
		if !ok || rank[algo] == 0 {
			continue
		}
		if i := strings.IndexByte(b64, '?'); i >= 0 {
			b64 = b64[:i]
		}
		want, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			continue
		}
		if best != nil && rank[best.algo] >= rank[algo] {
			continue
		}
		var h hash.Hash
		switch algo {
		case "sha512":
			h = sha512.New()
		case "sha256":
			h = sha256.New()
		default:
			h = sha1.New()
		}
		best = &checker{algo: algo, want: want, h: h}
	}
	if best == nil {
		return nil, fmt.Errorf("integrity %q has no sha512, sha256 or sha1 entry", integrity)
	}
	return best, nil
}

func (c *checker) ok() bool { return string(c.h.Sum(nil)) == string(c.want) }

// fetchNPM returns the bytes of t's tarball, verified against its integrity.
// Verified tarballs are kept in cacheDir (when not empty) under the hex of
// their integrity, and read from there on later calls (re-verified).
func fetchNPM(ctx context.Context, hc *http.Client, t npmTarball, cacheDir string) ([]byte, error) {
	var cachePath string
	if cacheDir != "" {
		sum := sha256.Sum256([]byte(t.integrity))
		cachePath = filepath.Join(cacheDir, fmt.Sprintf("%s-%s-%s.tgz", t.name, t.version, hex.EncodeToString(sum[:8])))
		if b, err := os.ReadFile(cachePath); err == nil {
			if c, err := newChecker(t.integrity); err == nil {
				c.h.Write(b)
				if c.ok() {
					return b, nil
				}
			}
		}
	}
	c, err := newChecker(t.integrity)
	if err != nil {
		return nil, fmt.Errorf("%s@%s: %w", t.name, t.version, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.tarball, nil)
	if err != nil {
		return nil, fmt.Errorf("%s@%s: %w", t.name, t.version, err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("downloading %s@%s: %w", t.name, t.version, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("downloading %s@%s: %s", t.name, t.version, resp.Status)
	}
	b, err := io.ReadAll(io.TeeReader(io.LimitReader(resp.Body, 1<<30), c.h))
	if err != nil {
		return nil, fmt.Errorf("downloading %s@%s: %w", t.name, t.version, err)
	}
	if !c.ok() {
		return nil, fmt.Errorf("downloading %s@%s: %s digest does not match the packument's integrity %s", t.name, t.version, c.algo, t.integrity)
	}
	if cachePath != "" {
		if err := data.WriteFile(cachePath, 0o644, func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
			return nil, fmt.Errorf("caching %s@%s: %w", t.name, t.version, err)
		}
	}
	return b, nil
}
