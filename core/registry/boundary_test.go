package registry

import (
	"encoding/json"
	"slices"
	"testing"
)

// A file uploaded at 23:59:59.5 on the day of a bare-date cut-off is served, for PyPI
// and npm alike: a bare date ends at 23:59:59.999999999 UTC (schemas.ParseCutoff, the
// reading the registry audit shares). At 23:59:59Z it is hidden.
func TestBareDateBoundary(t *testing.T) {
	up := newUpstream(t)
	_, srv := newTestProxy(t, up, nil)
	for _, tt := range []struct {
		cutoff string
		served bool
	}{
		{"2023-07-30", true},
		{"2023-07-31T01:59:59.5%2B02:00", true},
		{"2023-07-30T23:59:59Z", false},
		{"2023-07-29", false},
	} {
		root := srv.URL + "/c/" + tt.cutoff
		resp, body := get(t, root+"/pypi/simple/eod/", "Accept", pipAccept)
		if tt.served {
			if resp.StatusCode != 200 {
				t.Fatalf("%s: pypi page %d: %s", tt.cutoff, resp.StatusCode, body)
			}
			if got := pageFiles(decodePage(t, body)); !slices.Equal(got, []string{"eod-1.0-py3-none-any.whl"}) {
				t.Errorf("%s: pypi files %v", tt.cutoff, got)
			}
		} else if resp.StatusCode != 404 {
			t.Errorf("%s: pypi page %d, want 404", tt.cutoff, resp.StatusCode)
		}
		if resp, _ := get(t, root+"/pypi/files/eod/eod-1.0-py3-none-any.whl"); (resp.StatusCode == 200) != tt.served {
			t.Errorf("%s: pypi file %d, served want %v", tt.cutoff, resp.StatusCode, tt.served)
		}
		resp, body = get(t, root+"/npm/eod-pkg", "Accept", npmAccept)
		if tt.served {
			var pk struct {
				Versions map[string]json.RawMessage `json:"versions"`
			}
			if resp.StatusCode != 200 || json.Unmarshal(body, &pk) != nil || pk.Versions["1.0.0"] == nil {
				t.Errorf("%s: npm packument %d: %s", tt.cutoff, resp.StatusCode, body)
			}
		} else if resp.StatusCode != 404 {
			t.Errorf("%s: npm packument %d, want 404", tt.cutoff, resp.StatusCode)
		}
		if resp, _ := get(t, root+"/npm/eod-pkg/-/eod-pkg-1.0.0.tgz"); (resp.StatusCode == 200) != tt.served {
			t.Errorf("%s: npm tarball %d, served want %v", tt.cutoff, resp.StatusCode, tt.served)
		}
	}
}
