package registry

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/envgap/envgap/schemas"
)

const npmAccept = "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8, */*"

type packument struct {
	Name     string                     `json:"name"`
	DistTags map[string]string          `json:"dist-tags"`
	Versions map[string]map[string]any  `json:"versions"`
	Time     map[string]string          `json:"time"`
	Modified string                     `json:"modified"`
	Rest     map[string]json.RawMessage `json:"-"`
}

func decodePackument(t *testing.T, body []byte) (packument, map[string]json.RawMessage) {
	t.Helper()
	var p packument
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	var top map[string]json.RawMessage
	json.Unmarshal(body, &top)
	return p, top
}

func TestNPMPackument(t *testing.T) {
	up := newUpstream(t)
	_, srv := newTestProxy(t, up, nil)
	tests := []struct {
		name, pkg, cutoff, accept string
		wantVersions              []string
		wantTags                  map[string]string
		wantCT                    string
	}{
		{"boundary full", "demo-pkg", testCutoff, "application/json",
			[]string{"1.0.0", "1.1.0", "1.2.0", "2.0.0-beta.1"},
			map[string]string{"latest": "1.2.0", "next": "2.0.0-beta.1", "beta": "2.0.0-beta.1", "legacy": "1.1.0"}, ctNPMFull},
		{"boundary abbreviated", "demo-pkg", testCutoff, npmAccept,
			[]string{"1.0.0", "1.1.0", "1.2.0", "2.0.0-beta.1"},
			map[string]string{"latest": "1.2.0", "next": "2.0.0-beta.1", "beta": "2.0.0-beta.1", "legacy": "1.1.0"}, ctNPMAbbrev},
		{"one microsecond later", "demo-pkg", "2023-07-30T12:00:00.000001Z", "",
			[]string{"1.0.0", "1.1.0", "1.2.0", "1.3.0", "2.0.0-beta.1"},
			map[string]string{"latest": "1.3.0", "next": "2.0.0-beta.1", "beta": "2.0.0-beta.1", "legacy": "1.1.0"}, ctNPMFull},
		{"before the beta", "demo-pkg", "2023-06-15", "",
			[]string{"1.0.0", "1.1.0"},
			map[string]string{"latest": "1.1.0", "next": "1.1.0", "beta": "1.1.0", "legacy": "1.1.0"}, ctNPMFull},
		{"everything", "demo-pkg", "2030-01-01", "",
			[]string{"1.0.0", "1.1.0", "1.2.0", "1.3.0", "2.0.0-beta.1", "2.0.0", "2.1.0-rc.1"},
			map[string]string{"latest": "2.0.0", "next": "2.1.0-rc.1", "beta": "2.0.0-beta.1", "legacy": "1.1.0"}, ctNPMFull},
		{"scoped encoded", "@scope%2fpkg", testCutoff, npmAccept,
			[]string{"1.0.0"}, map[string]string{"latest": "1.0.0"}, ctNPMAbbrev},
		{"scoped encoded upper", "@scope%2Fpkg", testCutoff, "",
			[]string{"1.0.0"}, map[string]string{"latest": "1.0.0"}, ctNPMFull},
		{"scoped slash", "@scope/pkg", "2024-03-03", "",
			[]string{"1.0.0", "1.1.0"}, map[string]string{"latest": "1.1.0"}, ctNPMFull},
		{"untimed hidden", "untimed-pkg", testCutoff, "",
			[]string{"1.0.0"}, map[string]string{"latest": "1.0.0"}, ctNPMFull},
		{"only prerelease left", "pre-pkg", "2023-08-01", "",
			[]string{"1.0.0-alpha.1"}, map[string]string{"latest": "1.0.0-alpha.1", "next": "1.0.0-alpha.1"}, ctNPMFull},
		{"stable tag stays stable", "pre-pkg", "2023-09-15", "",
			[]string{"1.0.0-alpha.1", "1.0.0"}, map[string]string{"latest": "1.0.0", "next": "1.0.0"}, ctNPMFull},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := get(t, srv.URL+"/c/"+tt.cutoff+"/npm/"+tt.pkg, "Accept", tt.accept)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			if ct := resp.Header.Get("Content-Type"); ct != tt.wantCT {
				t.Errorf("Content-Type = %q, want %q", ct, tt.wantCT)
			}
			if resp.Header.Get("Vary") != "Accept" {
				t.Errorf("no Vary: Accept")
			}
			p, top := decodePackument(t, body)
			got := slices.Sorted(maps.Keys(p.Versions))
			want := slices.Sorted(slices.Values(tt.wantVersions))
			if !slices.Equal(got, want) {
				t.Errorf("versions = %v, want %v", got, want)
			}
			if !maps.Equal(p.DistTags, tt.wantTags) {
				t.Errorf("dist-tags = %v, want %v", p.DistTags, tt.wantTags)
			}
			cut, _ := schemas.ParseCutoff(tt.cutoff)
			for k, v := range p.Time {
				tm, ok := parseRegistryTime(v)
				if !ok || !cut.Includes(tm) {
					t.Errorf("time[%s] = %s: after cut-off or unparsable", k, v)
				}
				if k != "created" && k != "modified" && p.Versions[k] == nil {
					t.Errorf("time has entry %s for a hidden version", k)
				}
			}
			for v := range p.Versions {
				if _, ok := p.Time[v]; !ok {
					t.Errorf("kept version %s has no time entry", v)
				}
				dist, _ := p.Versions[v]["dist"].(map[string]any)
				tb, _ := dist["tarball"].(string)
				if !strings.HasPrefix(tb, srv.URL+"/c/"+tt.cutoff+"/npm/") || !strings.HasSuffix(tb, "-"+v+".tgz") {
					t.Errorf("tarball of %s not rewritten: %q", v, tb)
				}
			}
			if tt.wantCT == ctNPMAbbrev {
				if _, ok := top["readme"]; ok {
					t.Errorf("abbreviated form has readme")
				}
				if p.Modified == "" {
					t.Errorf("abbreviated form has no modified")
				}
				for v, doc := range p.Versions {
					if _, ok := doc["description"]; ok {
						t.Errorf("abbreviated version %s has description", v)
					}
				}
			}
		})
	}
}

func TestNPMInstallScriptFlag(t *testing.T) {
	up := newUpstream(t)
	_, srv := newTestProxy(t, up, nil)
	_, body := get(t, srv.URL+"/c/"+testCutoff+"/npm/demo-pkg", "Accept", npmAccept)
	p, _ := decodePackument(t, body)
	if p.Versions["1.1.0"]["hasInstallScript"] != true {
		t.Errorf("1.1.0 (postinstall) lacks hasInstallScript: %v", p.Versions["1.1.0"])
	}
	if _, ok := p.Versions["1.0.0"]["hasInstallScript"]; ok {
		t.Errorf("1.0.0 has hasInstallScript")
	}
}

func TestNPMRoutes(t *testing.T) {
	up := newUpstream(t)
	_, srv := newTestProxy(t, up, nil)
	base := srv.URL + "/c/" + testCutoff + "/npm/"
	tests := []struct {
		path   string
		status int
		want   []byte
	}{
		{"late-pkg", http.StatusNotFound, nil},
		{"no-such-pkg", http.StatusNotFound, nil},
		{"demo-pkg/-/demo-pkg-1.2.0.tgz", http.StatusOK, npmTarballBytes("demo-pkg", "1.2.0")},
		{"demo-pkg/-/demo-pkg-1.3.0.tgz", http.StatusNotFound, nil},
		{"demo-pkg/-/demo-pkg-9.9.9.tgz", http.StatusNotFound, nil},
		{"@scope/pkg/-/pkg-1.0.0.tgz", http.StatusOK, npmTarballBytes("@scope/pkg", "1.0.0")},
		{"@scope%2fpkg/-/pkg-1.0.0.tgz", http.StatusOK, npmTarballBytes("@scope/pkg", "1.0.0")},
		{"@scope/pkg/-/pkg-1.1.0.tgz", http.StatusNotFound, nil},
		{"late-pkg/-/late-pkg-1.0.0.tgz", http.StatusNotFound, nil},
		{"demo-pkg/1.2.0", http.StatusOK, nil},
		{"demo-pkg/latest", http.StatusOK, nil},
		{"demo-pkg/2.0.0", http.StatusNotFound, nil},
		{"-/ping", http.StatusOK, nil},
		{"-/npm/v1/security/advisories/bulk", http.StatusNotFound, nil},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			resp, body := get(t, base+tt.path)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, body)
			}
			if tt.want != nil && string(body) != string(tt.want) {
				t.Errorf("body differs from the generated tarball (%d vs %d bytes)", len(body), len(tt.want))
			}
		})
	}
	_, body := get(t, base+"demo-pkg/latest")
	var v map[string]any
	if err := json.Unmarshal(body, &v); err != nil || v["version"] != "1.2.0" {
		t.Errorf("demo-pkg/latest = %s (%v)", body, err)
	}
}

func TestRetargetTags(t *testing.T) {
	tests := []struct {
		name string
		tags map[string]string
		kept []string
		want map[string]string
	}{
		{"kept", map[string]string{"latest": "1.0.0"}, []string{"1.0.0"}, map[string]string{"latest": "1.0.0"}},
		{"fallback below", map[string]string{"latest": "3.0.0"}, []string{"1.0.0", "2.5.0", "2.6.0-rc.1"}, map[string]string{"latest": "2.5.0"}},
		{"never higher", map[string]string{"legacy": "1.5.0"}, []string{"1.0.0", "2.0.0"}, map[string]string{"legacy": "1.0.0", "latest": "2.0.0"}},
		{"prerelease tag may go to prerelease", map[string]string{"latest": "2.0.0", "next": "3.0.0-rc.2"}, []string{"2.0.0", "3.0.0-rc.1"},
			map[string]string{"latest": "2.0.0", "next": "3.0.0-rc.1"}},
		{"tag dropped", map[string]string{"latest": "1.0.0", "old": "0.1.0"}, []string{"1.0.0"}, map[string]string{"latest": "1.0.0"}},
		{"latest above all kept", map[string]string{"latest": "1.0.0"}, []string{"2.0.0", "3.0.0-beta"}, map[string]string{"latest": "2.0.0"}},
		{"prerelease order", map[string]string{"latest": "1.0.0"}, []string{"1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-beta.2", "1.0.0-beta.11"},
			map[string]string{"latest": "1.0.0-beta.11"}},
		{"nothing", map[string]string{"latest": "1.0.0"}, nil, map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := retargetTags(tt.tags, tt.kept); !maps.Equal(got, tt.want) {
				t.Errorf("retargetTags = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestLenient(t *testing.T) {
	up := newUpstream(t)
	p, srv := newTestProxy(t, up, func(o *Options) { o.Lenient = true })
	s := localSession(t, p, mustCutoff(t, testCutoff))
	for _, path := range []string{"/npm/demo-pkg/-/demo-pkg-1.3.0.tgz", "/pypi/files/demo/demo-2.0.tar.gz", "/pypi/files/demo/demo-0.9-py3-none-any.whl"} {
		if resp, body := get(t, s.BaseURL(srv.URL)+path); resp.StatusCode != 200 {
			t.Errorf("%s: %d %s", path, resp.StatusCode, body)
		}
	}
	rec := s.Record()
	for _, want := range []Event{
		{Ecosystem: "npm", Package: "demo-pkg", Version: "1.3.0", File: "demo-pkg-1.3.0.tgz", Reason: "published 2023-07-30T12:00:00.000001Z after cut-off 2023-07-30T12:00:00Z"},
		{Ecosystem: "pypi", Package: "demo", Version: "2.0", File: "demo-2.0.tar.gz", Reason: "uploaded 2024-01-02T09:30:00.000000Z after cut-off 2023-07-30T12:00:00Z"},
	} {
		if !slices.Contains(rec.Hidden, want) {
			t.Errorf("lenient download not recorded as hidden: %+v", want)
		}
	}
	if !slices.Contains(rec.Served, Event{Ecosystem: "pypi", Package: "demo", Version: "0.9", File: "demo-0.9-py3-none-any.whl", Reason: "yanked"}) {
		t.Errorf("yanked download not flagged: %+v", rec.Served)
	}
}

func mustCutoff(t testing.TB, s string) schemas.Cutoff {
	t.Helper()
	c, err := schemas.ParseCutoff(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
