package safeinstall

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/envgap/envgap/schemas"
)

// A release uploaded at 23:59:59.5 on the registry_date's day existed at a bare-date
// registry_date: the audit reads the date as the proxy serves it (the end of that day,
// inclusive to the nanosecond), and so agrees with what the date-limited run installed.
func TestExistedAtBareDateBoundary(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /pypi/late/json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"releases": {"1.0": [{"upload_time_iso_8601": "2023-07-30T23:59:59.500000Z", "yanked": false}]}}`))
	})
	mux.HandleFunc("GET /npm/late", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"versions": {"1.0.0": {}}, "time": {"created": "2023-07-30T23:59:59.500Z", "1.0.0": "2023-07-30T23:59:59.500Z"}}`))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	regs := map[string]Registry{
		"pypi": &PyPI{Base: srv.URL, Client: srv.Client()},
		"npm":  &NPM{Base: srv.URL + "/npm", Client: srv.Client()},
	}
	for name, reg := range regs {
		for date, want := range map[string]Tri{"2023-07-30": Yes, "2023-07-30T23:59:59Z": No, "2023-07-31T01:59:59.5+02:00": Yes, "2023-07-29": No} {
			cutoff, err := schemas.ParseCutoff(date)
			if err != nil {
				t.Fatal(err)
			}
			e, err := reg.Lookup(context.Background(), "late", cutoff)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if e.AtDate != want {
				t.Errorf("%s at %s: existed %s, want %s", name, date, e.AtDate, want)
			}
		}
	}
}
