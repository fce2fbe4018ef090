package safeinstall

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/envgap/envgap/schemas"
)

// Production defaults of the upstreams (npm's comes from the npm client's configuration).
const (
	DefaultPyPIURL  = "https://pypi.org"
	DefaultMavenURL = "https://search.maven.org"
	DefaultOSVURL   = "https://api.osv.dev"
)

// Tri is a yes/no answer that may be unknown.
type Tri string

// Tri values.
const (
	Yes     Tri = "yes"
	No      Tri = "no"
	Unknown Tri = "unknown"
)

// Existence is what a registry says about a package.
type Existence struct {
	// Now: the registry has the package today.
	Now bool `json:"now"`
	// AtDate: a release is older than the registry date (Unknown when the registry
	// gives no dates, or the package is gone).
	AtDate Tri `json:"at_date"`
	// Versions known today (for reports; may be truncated).
	Versions int `json:"versions"`
	// releases are the registry's versions, today's and removed ones it still lists
	// (nil: the registry does not say, as for a Maven answer cut at 200 versions).
	releases map[string]release
	// osvEcosystem names the version scheme (sameVersion).
	osvEcosystem string
}

// release is what a registry says about one version.
type release struct {
	// removed: the registry lists the version as once published but it cannot be
	// installed as usual today: every file of a PyPI release yanked (PEP 592) or
	// deleted, an npm version unpublished (its time entry kept, the version gone).
	removed bool
	why     string
}

// VersionState says what the registry says about version v of the package: listed
// (known, today or as removed), and whether it was removed and why.
func (e Existence) VersionState(v string) (listed, removed bool, why string) {
	if e.releases == nil || v == "" {
		return false, false, ""
	}
	if r, ok := e.releases[v]; ok {
		return true, r.removed, r.why
	}
	for k, r := range e.releases {
		if sameVersion(e.osvEcosystem, k, v) {
			return true, r.removed, r.why
		}
	}
	return false, false, ""
}

// KnowsVersions reports whether the registry lists versions (so an unlisted version was
// never published there).
func (e Existence) KnowsVersions() bool { return e.releases != nil }

// Registry answers whether a package exists.
type Registry interface {
	// Lookup returns the package's existence, AtDate at the cut-off; a missing package is
	// not an error, an unreachable or failing registry is.
	Lookup(ctx context.Context, name string, cutoff schemas.Cutoff) (Existence, error)
	// URL names the upstream for records.
	URL() string
}

// httpGetJSON fetches u and decodes a 200 answer into v. It returns found=false on 404 and
// 410, an error on anything else.
func httpGetJSON(ctx context.Context, c *http.Client, u string, v any) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return false, fmt.Errorf("get %s: %w", u, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		return false, nil
	case resp.StatusCode != http.StatusOK:
		return false, fmt.Errorf("get %s: %s (a registry error, not an answer about the package; try again later)", u, resp.Status)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 256<<20)).Decode(v); err != nil {
		return false, fmt.Errorf("get %s: unreadable answer: %w", u, err)
	}
	return true, nil
}

// PyPI is the PyPI JSON API.
type PyPI struct {
	Base   string
	Client *http.Client
}

// URL returns the base URL.
func (p *PyPI) URL() string { return p.Base }

// Lookup implements Registry with GET <base>/pypi/<name>/json.
func (p *PyPI) Lookup(ctx context.Context, name string, cutoff schemas.Cutoff) (Existence, error) {
	var body struct {
		Releases map[string][]struct {
			UploadTime string `json:"upload_time_iso_8601"`
			Yanked     bool   `json:"yanked"`
			Reason     string `json:"yanked_reason"`
		} `json:"releases"`
	}
	found, err := httpGetJSON(ctx, p.Client, strings.TrimRight(p.Base, "/")+"/pypi/"+url.PathEscape(name)+"/json", &body)
	if err != nil || !found {
		return Existence{AtDate: Unknown}, err
	}
	e := Existence{Now: true, AtDate: No, Versions: len(body.Releases), releases: map[string]release{},
		osvEcosystem: "PyPI"}
	for v, files := range body.Releases {
		yanked, reason := len(files) > 0, ""
		for _, f := range files {
			if t, err := time.Parse(time.RFC3339, f.UploadTime); err == nil && cutoff.Includes(t) {
				e.AtDate = Yes
			}
			yanked = yanked && f.Yanked
			if f.Reason != "" {
				reason = f.Reason
			}
		}
		switch {
		case len(files) == 0:
			e.releases[v] = release{removed: true, why: "every file of the release was deleted from PyPI"}
		case yanked:
			why := "the release was yanked from PyPI"
			if reason != "" {
				why += " (" + reason + ")"
			}
			e.releases[v] = release{removed: true, why: why}
		default:
			e.releases[v] = release{}
		}
	}
	return e, nil
}

// NPM is an npm registry (packuments).
type NPM struct {
	Base   string
	Client *http.Client
}

// URL returns the base URL.
func (n *NPM) URL() string { return n.Base }

// Lookup implements Registry with GET <base>/<name> (a scoped name's slash escaped).
func (n *NPM) Lookup(ctx context.Context, name string, cutoff schemas.Cutoff) (Existence, error) {
	var body struct {
		Versions map[string]json.RawMessage `json:"versions"`
		Time     map[string]json.RawMessage `json:"time"`
	}
	esc := strings.Replace(url.PathEscape(name), "%40", "@", 1)
	found, err := httpGetJSON(ctx, n.Client, strings.TrimRight(n.Base, "/")+"/"+esc, &body)
	if err != nil || !found {
		return Existence{AtDate: Unknown}, err
	}
	if _, gone := body.Time["unpublished"]; gone || len(body.Versions) == 0 {
		return Existence{AtDate: Unknown}, nil
	}
	e := Existence{Now: true, AtDate: No, Versions: len(body.Versions), releases: map[string]release{},
		osvEcosystem: "npm"}
	for v := range body.Versions {
		e.releases[v] = release{}
	}
	for v, raw := range body.Time {
		if v == "created" || v == "modified" {
			continue
		}
		if _, ok := body.Versions[v]; !ok {
			// The registry keeps the time of a version that was unpublished.
			e.releases[v] = release{removed: true, why: "the version was unpublished from the npm registry"}
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			continue
		}
		if t, err := time.Parse(time.RFC3339, s); err == nil && cutoff.Includes(t) {
			e.AtDate = Yes
		}
	}
	return e, nil
}

// Maven is Maven Central's search API.
type Maven struct {
	Base   string
	Client *http.Client
}

// URL returns the base URL.
func (m *Maven) URL() string { return m.Base }

// Lookup implements Registry for "group:artifact" names with
// GET <base>/solrsearch/select?q=g:"G" AND a:"A"&core=gav&rows=200&wt=json.
func (m *Maven) Lookup(ctx context.Context, name string, cutoff schemas.Cutoff) (Existence, error) {
	g, a, ok := strings.Cut(name, ":")
	if !ok || g == "" || a == "" {
		return Existence{AtDate: Unknown}, fmt.Errorf("maven package %q: want group:artifact", name)
	}
	q := url.Values{}
	q.Set("q", fmt.Sprintf(`g:"%s" AND a:"%s"`, g, a))
	q.Set("core", "gav")
	q.Set("rows", "200")
	q.Set("wt", "json")
	var body struct {
		Response struct {
			NumFound int `json:"numFound"`
			Docs     []struct {
				V         string `json:"v"`
				Timestamp int64  `json:"timestamp"`
			} `json:"docs"`
		} `json:"response"`
	}
	found, err := httpGetJSON(ctx, m.Client, strings.TrimRight(m.Base, "/")+"/solrsearch/select?"+q.Encode(), &body)
	if err != nil {
		return Existence{AtDate: Unknown}, err
	}
	if !found || body.Response.NumFound == 0 {
		return Existence{AtDate: Unknown}, nil
	}
	e := Existence{Now: true, AtDate: Unknown, Versions: body.Response.NumFound}
	if len(body.Response.Docs) >= body.Response.NumFound {
		// The answer lists every version: one it does not list was never published.
		e.releases, e.osvEcosystem = map[string]release{}, "Maven"
	}
	for _, d := range body.Response.Docs {
		if e.releases != nil && d.V != "" {
			e.releases[d.V] = release{}
		}
		if d.Timestamp == 0 {
			continue
		}
		if e.AtDate == Unknown {
			e.AtDate = No
		}
		if cutoff.Includes(time.UnixMilli(d.Timestamp)) {
			e.AtDate = Yes
		}
	}
	return e, nil
}
