package registry

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"text/template"
	"time"

	"github.com/envgap/envgap/schemas"
)

// fixtureTime is a fixed instant for generated archive entries.
var fixtureTime = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

// upstream is an in-process fake of a PEP 691 index and an npm registry, fed by the
// templates under testdata/. Artifacts are generated from their file names.
type upstream struct {
	t   testing.TB
	srv *httptest.Server

	mu      sync.Mutex
	files   map[string][]byte // upstream path -> bytes
	hits    map[string]int    // path -> requests
	cond    map[string]int    // path -> conditional requests answered 304
	status  map[string]int    // path -> forced status
	corrupt map[string]bool   // path -> serve wrong bytes
	release chan struct{}     // closed at cleanup: ends hanging handlers
	extra   map[string][]byte // path -> raw body served as JSON (benchmarks)
	noETag  bool
}

func newUpstream(t testing.TB) *upstream {
	u := &upstream{t: t, files: map[string][]byte{}, hits: map[string]int{}, cond: map[string]int{}, status: map[string]int{},
		corrupt: map[string]bool{}, release: make(chan struct{}), extra: map[string][]byte{}}
	u.srv = httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(func() {
		close(u.release)
		u.srv.Close()
	})
	return u
}

func (u *upstream) pypiURL() string { return u.srv.URL + "/simple/" }
func (u *upstream) npmURL() string  { return u.srv.URL + "/npm/" }

func (u *upstream) count(path string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.hits[path]
}

func (u *upstream) setStatus(path string, code int) {
	u.mu.Lock()
	u.status[path] = code
	u.mu.Unlock()
}

func sha256hex(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// wheelMetadata is the METADATA file of a generated wheel.
func wheelMetadata(name, version string) []byte {
	return []byte(fmt.Sprintf("Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: envgap fixture\n", name, version))
}

func makeWheel(filename string) []byte {
	parts := strings.Split(strings.TrimSuffix(filename, ".whl"), "-")
	dist, version := parts[0], parts[1]
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	info := dist + "-" + version + ".dist-info/"
	mod := strings.ToLower(dist) + "/__init__.py"
	entries := []struct{ name, body string }{
		{mod, fmt.Sprintf("__version__ = %q\n", version)},
		{info + "METADATA", string(wheelMetadata(dist, version))},
		{info + "WHEEL", "Wheel-Version: 1.0\nGenerator: envgap-test\nRoot-Is-Purelib: true\nTag: " + strings.Join(parts[2:], "-") + "\n"},
	}
	var record strings.Builder
	for _, e := range entries {
		sum := sha256.Sum256([]byte(e.body))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", e.name, base64.RawURLEncoding.EncodeToString(sum[:]), len(e.body))
	}
	record.WriteString(info + "RECORD,,\n")
	entries = append(entries, struct{ name, body string }{info + "RECORD", record.String()})
	for _, e := range entries {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: fixtureTime})
		if err != nil {
			panic(err)
		}
		w.Write([]byte(e.body))
	}
	zw.Close()
	return buf.Bytes()
}

func makeTarGz(files map[string]string) []byte {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	gz.ModTime = fixtureTime
	tw := tar.NewWriter(gz)
	for _, name := range sortedKeys(files) {
		body := files[name]
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), ModTime: fixtureTime, Typeflag: tar.TypeReg})
		tw.Write([]byte(body))
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

func makeSdist(filename string) []byte {
	stem := strings.TrimSuffix(filename, ".tar.gz")
	i := strings.LastIndexByte(stem, '-')
	name, version := stem[:i], stem[i+1:]
	return makeTarGz(map[string]string{
		stem + "/PKG-INFO": string(wheelMetadata(name, version)),
		stem + "/setup.py": fmt.Sprintf("from setuptools import setup\nsetup(name=%q, version=%q)\n", name, version),
	})
}

// npmTarballBytes generates package/package.json (+ index.js) for name@version.
func npmTarballBytes(name, version string) []byte {
	pj, _ := json.Marshal(map[string]string{"name": name, "version": version, "main": "index.js"})
	return makeTarGz(map[string]string{
		"package/package.json": string(pj),
		"package/index.js":     fmt.Sprintf("module.exports = %q;\n", version),
	})
}

func npmTarballPath(name, version string) string {
	base := name[strings.LastIndexByte(name, '/')+1:]
	return "/npm-files/" + name + "/-/" + base + "-" + version + ".tgz"
}

// artifact returns (generating on first use) the bytes at an upstream path.
func (u *upstream) artifact(path string) []byte {
	u.mu.Lock()
	defer u.mu.Unlock()
	if b, ok := u.files[path]; ok {
		return b
	}
	var b []byte
	switch {
	case strings.HasPrefix(path, "/files/") && strings.HasSuffix(path, ".whl.metadata"):
		fn := strings.TrimSuffix(strings.TrimPrefix(path, "/files/"), ".metadata")
		parts := strings.Split(fn, "-")
		b = wheelMetadata(parts[0], parts[1])
	case strings.HasPrefix(path, "/files/") && strings.HasSuffix(path, ".whl"):
		b = makeWheel(strings.TrimPrefix(path, "/files/"))
	case strings.HasPrefix(path, "/files/") && strings.HasSuffix(path, ".tar.gz"):
		b = makeSdist(strings.TrimPrefix(path, "/files/"))
	case strings.HasPrefix(path, "/npm-files/"):
		rest := strings.TrimPrefix(path, "/npm-files/")
		name, file, _ := strings.Cut(rest, "/-/")
		base := name[strings.LastIndexByte(name, '/')+1:]
		version := strings.TrimSuffix(strings.TrimPrefix(file, base+"-"), ".tgz")
		b = npmTarballBytes(name, version)
	default:
		u.t.Fatalf("fixture: no artifact for %s", path)
	}
	u.files[path] = b
	return b
}

func (u *upstream) funcs() template.FuncMap {
	return template.FuncMap{
		"base":   func() string { return u.srv.URL },
		"sha256": func(file string) string { return sha256hex(u.artifact("/files/" + file)) },
		"metasha": func(file string) string {
			return sha256hex(u.artifact("/files/" + file + ".metadata"))
		},
		"tarball": func(name, version string) string { return u.srv.URL + npmTarballPath(name, version) },
		"integrity": func(name, version string) string {
			s := sha512.Sum512(u.artifact(npmTarballPath(name, version)))
			return "sha512-" + base64.StdEncoding.EncodeToString(s[:])
		},
		"shasum": func(name, version string) string {
			s := sha1.Sum(u.artifact(npmTarballPath(name, version)))
			return hex.EncodeToString(s[:])
		},
	}
}

func (u *upstream) render(file string) ([]byte, bool) {
	src, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return nil, false
	}
	if err != nil {
		u.t.Errorf("fixture: %v", err)
		return nil, false
	}
	tpl, err := template.New(filepath.Base(file)).Funcs(u.funcs()).Parse(string(src))
	if err != nil {
		u.t.Errorf("fixture %s: %v", file, err)
		return nil, false
	}
	var buf bytes.Buffer
	if err := tpl.Execute(&buf, nil); err != nil {
		u.t.Errorf("fixture %s: %v", file, err)
		return nil, false
	}
	if !json.Valid(buf.Bytes()) && !strings.Contains(file, "malformed") && !strings.Contains(file, "html-") {
		u.t.Errorf("fixture %s renders invalid JSON", file)
	}
	return buf.Bytes(), true
}

func (u *upstream) serve(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	u.mu.Lock()
	u.hits[p]++
	st := u.status[p]
	corrupt := u.corrupt[p]
	extra, hasExtra := u.extra[p]
	noETag := u.noETag
	u.mu.Unlock()
	if st == -1 { // hang until the test ends or the client gives up
		select {
		case <-u.release:
		case <-r.Context().Done():
		}
		return
	}
	if st != 0 {
		http.Error(w, "forced failure", st)
		return
	}
	var body []byte
	ct := "application/json"
	switch {
	case hasExtra:
		body = extra
	case strings.HasPrefix(p, "/simple/"):
		name := strings.Trim(strings.TrimPrefix(p, "/simple/"), "/")
		b, ok := u.render(filepath.Join("testdata", "pypi", name+".json"))
		if !ok {
			http.NotFound(w, r)
			return
		}
		body, ct = b, ctPyPIJSON
		if strings.HasPrefix(name, "html-") {
			ct = "text/html"
		}
	case strings.HasPrefix(p, "/npm/"):
		name := strings.TrimPrefix(p, "/npm/")
		b, ok := u.render(filepath.Join("testdata", "npm", strings.ReplaceAll(name, "/", "__")+".json"))
		if !ok {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"error":"Not found"}`))
			return
		}
		body = b
	case strings.HasPrefix(p, "/files/") || strings.HasPrefix(p, "/npm-files/"):
		body, ct = u.artifact(p), "application/octet-stream"
		if corrupt {
			body = append(bytes.Clone(body), 'x')
		}
	default:
		http.NotFound(w, r)
		return
	}
	if ct != "application/octet-stream" && !noETag {
		etag := `"` + sha256hex(body)[:16] + `"`
		w.Header().Set("ETag", etag)
		if r.Header.Get("If-None-Match") == etag {
			u.mu.Lock()
			u.cond[p]++
			u.mu.Unlock()
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	w.Header().Set("Content-Type", ct)
	w.Write(body)
}

// newTestProxy builds a proxy over the fixture upstream and serves it on httptest.
func newTestProxy(t testing.TB, up *upstream, mod func(*Options)) (*Proxy, *httptest.Server) {
	// Most tests ask at a cut-off of their own without a session (the stand-alone proxy's
	// mode); the session tests bind sessions to this host's address (localSession).
	opts := Options{PyPIUpstream: up.pypiURL(), NPMUpstream: up.npmURL(), TempDir: t.TempDir(), AnyCutoff: true}
	if mod != nil {
		mod(&opts)
	}
	p, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return p, srv
}

// localSession opens a session bound to 127.0.0.1, where the tests' requests come from.
func localSession(t testing.TB, p *Proxy, cut schemas.Cutoff) *Session {
	t.Helper()
	s := p.NewSession(cut)
	if err := s.Bind(netip.MustParseAddr("127.0.0.1")); err != nil {
		t.Fatal(err)
	}
	return s
}

// get fetches a URL without following redirects.
func get(t testing.TB, url string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	buf.ReadFrom(resp.Body)
	return resp, buf.Bytes()
}
