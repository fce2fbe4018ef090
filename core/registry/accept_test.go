package registry

import "testing"

var pypiOffers = []string{ctHTML, ctPyPIHTMLv1, ctPyPIJSON, ctPyPILatestHTML, ctPyPILatestJSON}

func TestNegotiate(t *testing.T) {
	tests := []struct {
		name   string
		accept string
		offers []string
		want   string
	}{
		{"pip 23", "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html; q=0.1, text/html; q=0.01", pypiOffers, ctPyPIJSON},
		{"uv", "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01", pypiOffers, ctPyPIJSON},
		{"old pip", "text/html", pypiOffers, ctHTML},
		{"browser", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", pypiOffers, ctHTML},
		{"none", "", pypiOffers, ctHTML},
		{"star", "*/*", pypiOffers, ctHTML},
		{"latest json", "application/vnd.pypi.simple.latest+json", pypiOffers, ctPyPILatestJSON},
		{"json refused html", "text/html;q=0, application/vnd.pypi.simple.v1+json;q=0.5", pypiOffers, ctPyPIJSON},
		{"type wildcard", "application/*;q=0.9, text/html;q=0.1", pypiOffers, ctPyPIHTMLv1},
		{"case and spaces", " Application/VND.pypi.simple.V1+JSON ; Q=0.9 ", pypiOffers, ctPyPIJSON},
		{"npm", "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8, */*", []string{ctNPMFull, ctNPMAbbrev}, ctNPMAbbrev},
		{"npm full", "application/json", []string{ctNPMFull, ctNPMAbbrev}, ctNPMFull},
		{"npm star", "*/*", []string{ctNPMFull, ctNPMAbbrev}, ctNPMFull},
		{"yarn", "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8, */*", []string{ctNPMFull, ctNPMAbbrev}, ctNPMAbbrev},
		{"garbage", ";;,/,q=x", pypiOffers, ctHTML},
		{"bad q", "application/vnd.pypi.simple.v1+json;q=abc, text/html;q=0.5", pypiOffers, ctPyPIJSON},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, _ := negotiate(tt.accept, tt.offers); got != tt.want {
				t.Errorf("negotiate(%q) = %q, want %q", tt.accept, got, tt.want)
			}
		})
	}
}

func FuzzAccept(f *testing.F) {
	for _, s := range []string{"application/vnd.pypi.simple.v1+json, text/html; q=0.01", "*/*", "", "a/b;q=0.5,c/*;q=1e3",
		"text/html;q=-1", "text/html;q=NaN", ",,,", "*/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, r := range parseAccept(s) {
			if r.q < 0 || r.q > 1 || r.typ == "" || r.sub == "" {
				t.Fatalf("bad range %+v from %q", r, s)
			}
		}
		got, _ := negotiate(s, pypiOffers)
		found := false
		for _, o := range pypiOffers {
			found = found || o == got
		}
		if !found {
			t.Fatalf("negotiate(%q) = %q, not an offer", s, got)
		}
	})
}
