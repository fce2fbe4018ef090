package registry

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/envgap/envgap/schemas"
)

const testCutoff = "2023-07-30T12:00:00Z"

var pipAccept = "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html; q=0.1, text/html; q=0.01"
var uvAccept = "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01"

func decodePage(t *testing.T, body []byte) pypiOutPage {
	t.Helper()
	var page pypiOutPage
	if err := json.Unmarshal(body, &page); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return page
}

func pageFiles(page pypiOutPage) []string {
	var out []string
	for _, f := range page.Files {
		out = append(out, f.Filename)
	}
	return out
}

func TestPyPIFilterJSON(t *testing.T) {
	up := newUpstream(t)
	_, srv := newTestProxy(t, up, nil)
	tests := []struct {
		name, cutoff string
		wantFiles    []string
		wantVersions []string
	}{
		{"boundary", testCutoff,
			[]string{"demo-0.8-py3-none-any.whl", "demo-0.9-py3-none-any.whl", "demo-1.0.tar.gz", "demo-1.0-py3-none-any.whl", "demo-1.1.tar.gz"},
			[]string{"0.8", "0.9", "1.0", "1.1"}},
		{"one microsecond later", "2023-07-30T12:00:00.000001Z",
			[]string{"demo-0.8-py3-none-any.whl", "demo-0.9-py3-none-any.whl", "demo-1.0.tar.gz", "demo-1.0-py3-none-any.whl", "demo-1.1.tar.gz", "demo-1.1-py3-none-any.whl"},
			[]string{"0.8", "0.9", "1.0", "1.1"}},
		{"one microsecond earlier", "2023-07-30T11:59:59.999999Z",
			[]string{"demo-0.8-py3-none-any.whl", "demo-0.9-py3-none-any.whl", "demo-1.0.tar.gz", "demo-1.0-py3-none-any.whl"},
			[]string{"0.8", "0.9", "1.0"}},
		{"offset form", "2023-07-30T14:00:00+02:00",
			[]string{"demo-0.8-py3-none-any.whl", "demo-0.9-py3-none-any.whl", "demo-1.0.tar.gz", "demo-1.0-py3-none-any.whl", "demo-1.1.tar.gz"},
			[]string{"0.8", "0.9", "1.0", "1.1"}},
		{"bare date", "2024-01-02",
			[]string{"demo-0.8-py3-none-any.whl", "demo-0.9-py3-none-any.whl", "demo-1.0.tar.gz", "demo-1.0-py3-none-any.whl", "demo-1.1.tar.gz",
				"demo-1.1-py3-none-any.whl", "demo-1.1-cp311-cp311-manylinux_2_17_x86_64.whl", "demo-2.0.tar.gz", "demo-2.0-py3-none-any.whl"},
			[]string{"0.8", "0.9", "1.0", "1.1", "2.0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := get(t, srv.URL+"/c/"+tt.cutoff+"/pypi/simple/demo/", "Accept", pipAccept)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			if ct := resp.Header.Get("Content-Type"); ct != ctPyPIJSON {
				t.Errorf("Content-Type = %q", ct)
			}
			if v := resp.Header.Get("Vary"); v != "Accept" {
				t.Errorf("Vary = %q", v)
			}
			page := decodePage(t, body)
			if got := pageFiles(page); !slices.Equal(got, tt.wantFiles) {
				t.Errorf("files = %v\nwant %v", got, tt.wantFiles)
			}
			if !slices.Equal(page.Versions, tt.wantVersions) {
				t.Errorf("versions = %v, want %v", page.Versions, tt.wantVersions)
			}
			cut, _ := schemas.ParseCutoff(tt.cutoff)
			for _, f := range page.Files {
				ut, err := time.Parse(time.RFC3339Nano, f.UploadTime)
				if err != nil || !cut.Includes(ut) {
					t.Errorf("%s upload-time %q after cut-off or unparsable", f.Filename, f.UploadTime)
				}
				if !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$`).MatchString(f.UploadTime) {
					t.Errorf("upload-time %q not in PEP 700 form", f.UploadTime)
				}
				if !strings.HasSuffix(f.URL, "/"+f.Filename) || !strings.HasPrefix(f.URL, srv.URL+"/c/"+tt.cutoff+"/pypi/files/demo/") {
					t.Errorf("url %q does not end in the file name under the proxy", f.URL)
				}
				if f.Hashes == nil || len(f.Hashes["sha256"]) != 64 {
					t.Errorf("%s hashes = %v", f.Filename, f.Hashes)
				}
			}
		})
	}
}

func TestPyPIFileAttributesJSON(t *testing.T) {
	up := newUpstream(t)
	_, srv := newTestProxy(t, up, nil)
	_, body := get(t, srv.URL+"/c/"+testCutoff+"/pypi/simple/demo/", "Accept", uvAccept)
	var raw struct {
		Meta  map[string]any   `json:"meta"`
		Files []map[string]any `json:"files"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		t.Fatal(err)
	}
	if raw.Meta["api-version"] != "1.1" {
		t.Errorf("meta = %v", raw.Meta)
	}
	byName := map[string]map[string]any{}
	for _, f := range raw.Files {
		byName[f["filename"].(string)] = f
	}
	if y := byName["demo-0.8-py3-none-any.whl"]["yanked"]; y != "broken build" {
		t.Errorf("yank reason = %#v", y)
	}
	if y := byName["demo-0.9-py3-none-any.whl"]["yanked"]; y != true {
		t.Errorf("yank flag = %#v", y)
	}
	if _, ok := byName["demo-1.0.tar.gz"]["yanked"]; ok {
		t.Errorf("yanked false should be omitted: %v", byName["demo-1.0.tar.gz"])
	}
	w := byName["demo-1.0-py3-none-any.whl"]
	cm, _ := w["core-metadata"].(map[string]any)
	dm, _ := w["dist-info-metadata"].(map[string]any)
	if cm == nil || dm == nil || cm["sha256"] != sha256hex(wheelMetadata("demo", "1.0")) || dm["sha256"] != cm["sha256"] {
		t.Errorf("metadata keys = %v / %v", w["core-metadata"], w["dist-info-metadata"])
	}
	if w["requires-python"] != ">=3.7" {
		t.Errorf("requires-python = %v", w["requires-python"])
	}
	for name, f := range byName {
		if _, ok := f["upload-time"]; !ok {
			t.Errorf("%s has no upload-time", name)
		}
		if v, ok := f["upload-time"]; ok && v == nil {
			t.Errorf("%s has null upload-time", name)
		}
	}
}

func TestPyPIHTML(t *testing.T) {
	up := newUpstream(t)
	_, srv := newTestProxy(t, up, nil)
	for _, accept := range []string{"", "text/html", "*/*"} {
		resp, body := get(t, srv.URL+"/c/"+testCutoff+"/pypi/simple/demo/", "Accept", accept)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" || resp.Header.Get("Vary") != "Accept" {
			t.Fatalf("Accept %q: %d %v", accept, resp.StatusCode, resp.Header)
		}
		h := string(body)
		for _, want := range []string{
			`data-yanked="broken build">demo-0.8-py3-none-any.whl</a>`,
			`data-yanked="">demo-0.9-py3-none-any.whl</a>`,
			`data-requires-python="&gt;=3.7"`,
			`data-dist-info-metadata="sha256=` + sha256hex(wheelMetadata("demo", "1.0")) + `" data-core-metadata="sha256=`,
			`/c/` + testCutoff + `/pypi/files/demo/demo-1.1.tar.gz#sha256=`,
			`<meta name="pypi:repository-version" content="1.1">`,
		} {
			if !strings.Contains(h, want) {
				t.Errorf("Accept %q: HTML lacks %q:\n%s", accept, want, h)
			}
		}
		for _, not := range []string{"demo-1.1-py3-none-any.whl", "demo-1.2", "demo-2.0", `data-yanked="">demo-1.0`} {
			if strings.Contains(h, not) {
				t.Errorf("HTML contains %q", not)
			}
		}
	}
	resp, _ := get(t, srv.URL+"/c/"+testCutoff+"/pypi/simple/demo/", "Accept", "application/vnd.pypi.simple.v1+html")
	if ct := resp.Header.Get("Content-Type"); ct != ctPyPIHTMLv1 {
		t.Errorf("v1+html Content-Type = %q", ct)
	}
	resp, _ = get(t, srv.URL+"/c/"+testCutoff+"/pypi/simple/demo/?format="+ctPyPIJSON)
	if ct := resp.Header.Get("Content-Type"); ct != ctPyPIJSON {
		t.Errorf("?format= Content-Type = %q", ct)
	}
}

func TestPyPIPolicies(t *testing.T) {
	up := newUpstream(t)
	tests := []struct {
		name string
		mod  func(*Options)
		want []string
	}{
		{"untimed included", func(o *Options) { o.IncludeUntimed = true },
			[]string{"demo-0.8-py3-none-any.whl", "demo-0.9-py3-none-any.whl", "demo-1.0.tar.gz", "demo-1.0-py3-none-any.whl", "demo-1.1.tar.gz", "demo-1.2-py3-none-any.whl"}},
		{"yanked hidden", func(o *Options) { o.Yanked = YankHide },
			[]string{"demo-1.0.tar.gz", "demo-1.0-py3-none-any.whl", "demo-1.1.tar.gz"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, srv := newTestProxy(t, up, tt.mod)
			_, body := get(t, srv.URL+"/c/"+testCutoff+"/pypi/simple/demo/", "Accept", ctPyPIJSON)
			if got := pageFiles(decodePage(t, body)); !slices.Equal(got, tt.want) {
				t.Errorf("files = %v, want %v", got, tt.want)
			}
		})
	}
	_, srv := newTestProxy(t, up, func(o *Options) { o.Yanked = YankIgnore })
	_, body := get(t, srv.URL+"/c/"+testCutoff+"/pypi/simple/demo/", "Accept", ctPyPIJSON)
	if strings.Contains(string(body), "yanked") {
		t.Errorf("YankIgnore still reports yanks: %s", body)
	}
}

func TestPyPIRoutes(t *testing.T) {
	up := newUpstream(t)
	_, srv := newTestProxy(t, up, nil)
	base := srv.URL + "/c/" + testCutoff + "/pypi"
	tests := []struct {
		path     string
		status   int
		location string
	}{
		{"/simple/Foo.Bar_baz/", http.StatusMovedPermanently, "/c/" + testCutoff + "/pypi/simple/foo-bar-baz/"},
		{"/simple/foo-bar-baz", http.StatusMovedPermanently, "/c/" + testCutoff + "/pypi/simple/foo-bar-baz/"},
		{"/simple/FOO__bar.baz", http.StatusMovedPermanently, "/c/" + testCutoff + "/pypi/simple/foo-bar-baz/"},
		{"/simple/foo-bar-baz/", http.StatusOK, ""},
		{"/simple/newproj/", http.StatusNotFound, ""},
		{"/simple/does-not-exist/", http.StatusNotFound, ""},
		{"/simple/", http.StatusNotFound, ""},
		{"/files/demo/demo-2.0.tar.gz", http.StatusNotFound, ""},
		{"/files/demo/demo-1.1-py3-none-any.whl", http.StatusNotFound, ""},
		{"/files/demo/demo-1.2-py3-none-any.whl", http.StatusNotFound, ""},
		{"/files/demo/demo-1.1.tar.gz", http.StatusOK, ""},
		{"/files/demo/demo-1.0-py3-none-any.whl.metadata", http.StatusOK, ""},
		{"/files/demo/demo-1.0.tar.gz.metadata", http.StatusNotFound, ""},
		{"/files/demo/nothing.whl", http.StatusNotFound, ""},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			resp, body := get(t, base+tt.path, "Accept", pipAccept)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, body)
			}
			if loc := resp.Header.Get("Location"); loc != tt.location {
				t.Errorf("Location = %q, want %q", loc, tt.location)
			}
		})
	}
	// Session prefix survives redirects.
	p, srv2 := newTestProxy(t, up, nil)
	s := localSession(t, p, schemas.CutoffAt(time.Date(2023, 7, 30, 12, 0, 0, 0, time.UTC)))
	resp, _ := get(t, s.BaseURL(srv2.URL)+"/pypi/simple/Foo.Bar_baz")
	if want := "/s/" + s.ID() + "/c/" + testCutoff + "/pypi/simple/foo-bar-baz/"; resp.Header.Get("Location") != want {
		t.Errorf("session redirect = %q, want %q", resp.Header.Get("Location"), want)
	}
}

func TestPyPIFileContents(t *testing.T) {
	up := newUpstream(t)
	_, srv := newTestProxy(t, up, nil)
	base := srv.URL + "/c/" + testCutoff + "/pypi/files/demo/"
	tests := []struct {
		file string
		want []byte
	}{
		{"demo-1.0-py3-none-any.whl", up.artifact("/files/demo-1.0-py3-none-any.whl")},
		{"demo-1.0.tar.gz", up.artifact("/files/demo-1.0.tar.gz")}, // relative upstream URL
		{"demo-1.0-py3-none-any.whl.metadata", wheelMetadata("demo", "1.0")},
	}
	for _, tt := range tests {
		resp, body := get(t, base+tt.file)
		if resp.StatusCode != 200 || string(body) != string(tt.want) {
			t.Errorf("%s: status %d, %d bytes, want %d", tt.file, resp.StatusCode, len(body), len(tt.want))
		}
	}
}
