package demo

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestFixtureIndexUpToDate fails when the committed index differs from what the
// generator makes: run `go generate ./data/demo`.
func TestFixtureIndexUpToDate(t *testing.T) {
	want, err := BuildIndex(Packages())
	if err != nil {
		t.Fatal(err)
	}
	fsys := PyPIFS()
	for name, b := range want {
		got, err := fs.ReadFile(fsys, name)
		if err != nil || !bytes.Equal(got, b) {
			t.Errorf("%s differs from the generator's output (%v): run go generate ./data/demo", name, err)
		}
	}
	again, _ := BuildIndex(Packages())
	for name, b := range want {
		if !bytes.Equal(again[name], b) {
			t.Errorf("%s: the generator is not deterministic", name)
		}
	}
}

func TestWheelContents(t *testing.T) {
	for _, p := range Packages() {
		whl, err := BuildWheel(p)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := zip.NewReader(bytes.NewReader(whl), int64(len(whl)))
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for _, f := range zr.File {
			names[f.Name] = true
		}
		info := p.Name + "-" + p.Version + ".dist-info/"
		for _, n := range []string{p.Name + "/__init__.py", info + "METADATA", info + "WHEEL", info + "RECORD"} {
			if !names[n] {
				t.Errorf("%s lacks %s", p.WheelName(), n)
			}
		}
	}
}

func TestPyPIHandler(t *testing.T) {
	srv := httptest.NewServer(PyPIHandler(PyPIFS()))
	defer srv.Close()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string) (*http.Response, []byte) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		req.Header.Set("Accept", "application/vnd.pypi.simple.v1+json")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	resp, body := get("/simple/tabulate/")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/vnd.pypi.simple.v1+json" {
		t.Fatalf("project page: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var pg page
	if err := json.Unmarshal(body, &pg); err != nil {
		t.Fatal(err)
	}
	if pg.Name != "tabulate" || len(pg.Files) != len(Packages()) {
		t.Fatalf("page %+v", pg)
	}
	for _, f := range pg.Files {
		if !strings.HasSuffix(f.UploadTime, "Z") || len(f.UploadTime) != len("2022-06-21T09:47:11.000000Z") {
			t.Errorf("%s: upload-time %q", f.Filename, f.UploadTime)
		}
		r, whl := get("/simple/tabulate/" + f.URL)
		sum := sha256.Sum256(whl)
		if r.StatusCode != 200 || hex.EncodeToString(sum[:]) != f.Hashes["sha256"] || len(whl) != f.Size {
			t.Errorf("%s: status %d, sha256 or size differ from the page", f.Filename, r.StatusCode)
		}
	}
	if r, _ := get("/simple/tabulate"); r.StatusCode != http.StatusMovedPermanently || r.Header.Get("Location") != "/simple/tabulate/" {
		t.Errorf("no trailing slash: %d %s", r.StatusCode, r.Header.Get("Location"))
	}
	for _, p := range []string{"/simple/nosuch/", "/simple/tabulate/index.json", "/simple/tabulate/nosuch.whl", "/other"} {
		if r, _ := get(p); r.StatusCode != 404 {
			t.Errorf("%s: %d, want 404", p, r.StatusCode)
		}
	}
	if r, b := get("/simple/"); r.StatusCode != 200 || !strings.Contains(string(b), `"name":"tabulate"`) {
		t.Errorf("root list: %d %s", r.StatusCode, b)
	}
}
