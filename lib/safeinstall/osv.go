package safeinstall

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/envgap/envgap/schemas"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
)

// Query asks for the advisories of one package version.
type Query struct {
	Ecosystem string // OSV ecosystem: PyPI, npm, Maven
	Name      string
	Version   string
}

// Advisories answers advisory queries.
type Advisories interface {
	// Query returns, for each query, the ids of the advisories that affect it.
	Query(ctx context.Context, qs []Query) ([][]string, error)
	// Source names the database for records.
	Source() string
}

// OSVRecord is the part of an OSV record the audit reads.
type OSVRecord struct {
	ID       string        `json:"id"`
	Modified string        `json:"modified,omitempty"`
	Affected []OSVAffected `json:"affected"`
}

// OSVAffected is one affected package of an OSV record.
type OSVAffected struct {
	Package struct {
		Ecosystem string `json:"ecosystem"`
		Name      string `json:"name"`
	} `json:"package"`
	Versions []string   `json:"versions,omitempty"`
	Ranges   []OSVRange `json:"ranges,omitempty"`
}

// OSVRange is a version range of an affected package.
type OSVRange struct {
	Type   string              `json:"type"`
	Events []map[string]string `json:"events"`
}

// OSVAPI is the OSV web API's batch query.
type OSVAPI struct {
	Base   string
	Client *http.Client
}

// Source returns the base URL.
func (o *OSVAPI) Source() string { return o.Base }

// Query implements Advisories with POST <base>/v1/querybatch, following next_page_token
// per query.
func (o *OSVAPI) Query(ctx context.Context, qs []Query) ([][]string, error) {
	out := make([][]string, len(qs))
	const batch = 1000
	for start := 0; start < len(qs); start += batch {
		end := min(start+batch, len(qs))
		type pkg struct {
			Name      string `json:"name"`
			Ecosystem string `json:"ecosystem"`
		}
		type q struct {
			Package   pkg    `json:"package"`
			Version   string `json:"version"`
			PageToken string `json:"page_token,omitempty"`
		}
		pending := map[int]string{}
		for i := start; i < end; i++ {
			pending[i] = ""
		}
		for len(pending) > 0 {
			idx := make([]int, 0, len(pending))
			for i := range pending {
				idx = append(idx, i)
			}
			sort.Ints(idx)
			var body struct {
				Queries []q `json:"queries"`
			}
			for _, i := range idx {
				body.Queries = append(body.Queries, q{pkg{qs[i].Name, qs[i].Ecosystem}, qs[i].Version, pending[i]})
			}
			var resp struct {
				Results []struct {
					Vulns []struct {
						ID string `json:"id"`
					} `json:"vulns"`
					NextPageToken string `json:"next_page_token"`
				} `json:"results"`
			}
			if err := o.post(ctx, body, &resp); err != nil {
				return nil, err
			}
			if len(resp.Results) != len(idx) {
				return nil, fmt.Errorf("osv querybatch: %d results for %d queries", len(resp.Results), len(idx))
			}
			next := map[int]string{}
			for k, r := range resp.Results {
				i := idx[k]
				for _, v := range r.Vulns {
					out[i] = append(out[i], v.ID)
				}
				if r.NextPageToken != "" {
					next[i] = r.NextPageToken
				}
			}
			pending = next
		}
	}
	for i := range out {
		out[i] = uniqSorted(out[i])
	}
	return out, nil
}

func (o *OSVAPI) post(ctx context.Context, body, v any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	u := strings.TrimRight(o.Base, "/") + "/v1/querybatch"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := o.Client.Do(req)
	if err != nil {
		return fmt.Errorf("osv querybatch: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("osv querybatch: %s: %s (an error of the advisory database, not an answer)", resp.Status, strings.TrimSpace(string(msg)))
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return fmt.Errorf("osv querybatch: unreadable answer: %w", err)
	}
	return nil
}

// OSVFile is a local set of OSV records.
type OSVFile struct {
	Name    string
	Records []OSVRecord
	// Digest is the SHA-256 of the file's content (empty when not read from a file).
	Digest schemas.Digest
}

// Source names the file and its content.
func (f *OSVFile) Source() string {
	if f.Digest.IsZero() {
		return "file " + f.Name
	}
	return "file " + f.Name + " " + f.Digest.String()
}

// LoadOSVFile reads OSV records from a JSON array or JSON Lines file.
func LoadOSVFile(path string) (*OSVFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("osv file: %w", err)
	}
	recs, err := ParseOSV(path, b)
	if err != nil {
		return nil, err
	}
	return &OSVFile{Name: path, Records: recs, Digest: schemas.Hash(b)}, nil
}

// ParseOSV decodes OSV records from a JSON array or JSON Lines; name is used in errors.
func ParseOSV(name string, b []byte) ([]OSVRecord, error) {
	trim := bytes.TrimSpace(b)
	if len(trim) > 0 && trim[0] == '[' {
		var recs []OSVRecord
		if err := json.Unmarshal(trim, &recs); err != nil {
			return nil, fmt.Errorf("osv file %s: %w (want a JSON array or JSON Lines of OSV records)", name, err)
		}
		return recs, checkOSV(name, recs)
	}
	var recs []OSVRecord
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for line := 1; sc.Scan(); line++ {
		l := bytes.TrimSpace(sc.Bytes())
		if len(l) == 0 {
			continue
		}
		var r OSVRecord
		if err := json.Unmarshal(l, &r); err != nil {
			return nil, fmt.Errorf("osv file %s line %d: %w", name, line, err)
		}
		recs = append(recs, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("osv file %s: %w", name, err)
	}
	return recs, checkOSV(name, recs)
}

func checkOSV(name string, recs []OSVRecord) error {
	for i, r := range recs {
		if r.ID == "" {
			return fmt.Errorf("osv file %s: record %d has no id", name, i+1)
		}
	}
	return nil
}

// Query implements Advisories by matching the records locally.
func (f *OSVFile) Query(_ context.Context, qs []Query) ([][]string, error) {
	out := make([][]string, len(qs))
	for i, q := range qs {
		for _, r := range f.Records {
			if Affects(r, q) {
				out[i] = append(out[i], r.ID)
			}
		}
		out[i] = uniqSorted(out[i])
	}
	return out, nil
}

// Affects reports whether an OSV record affects the query's package version, following the
// OSV schema's evaluation: the version is affected if an affected entry of the same
// ecosystem and package lists it in "versions" or if it lies in any of its SEMVER or
// ECOSYSTEM ranges (GIT ranges need the repository and are skipped). SEMVER ranges use
// SemVer 2.0.0 precedence; ECOSYSTEM ranges use the ecosystem's own order
// ([CompareVersions]).
func Affects(r OSVRecord, q Query) bool {
	if strings.TrimSpace(q.Version) == "" {
		return false
	}
	for _, a := range r.Affected {
		if !strings.EqualFold(a.Package.Ecosystem, q.Ecosystem) || normName(q.Ecosystem, a.Package.Name) != normName(q.Ecosystem, q.Name) {
			continue
		}
		for _, v := range a.Versions {
			if sameVersion(q.Ecosystem, v, q.Version) {
				return true
			}
		}
		for _, rg := range a.Ranges {
			var order func(a, b string) int
			switch rg.Type {
			case "SEMVER":
				order = compareSemVer
			case "ECOSYSTEM":
				order = orderFor(q.Ecosystem)
			default:
				continue
			}
			if inRange(order, rg.Events, q.Version) {
				return true
			}
		}
	}
	return false
}

// osvEvent is one event of an OSV range.
type osvEvent struct{ kind, ver string }

// inRange evaluates one range as the OSV schema's pseudocode does. The version must lie
// below one of the range's limit events, if it has any (a limit containing "*" is
// infinity). The other events are sorted by version in the range's order, introduced "0"
// first (it sorts before every version), events at equal versions keeping the record's
// order; walking them, introduced opens (v >= introduced), fixed closes (v >= fixed) and
// last_affected closes above it (v > last_affected).
func inRange(order func(a, b string) int, events []map[string]string, v string) bool {
	var evs []osvEvent
	var limits []string
	for _, e := range events {
		// The schema allows one kind per event object; reading the kinds in a fixed order
		// keeps an object with several deterministic.
		for _, k := range []string{"introduced", "fixed", "last_affected", "limit"} {
			x, ok := e[k]
			if !ok {
				continue
			}
			if k == "limit" {
				limits = append(limits, x)
			} else {
				evs = append(evs, osvEvent{k, x})
			}
		}
	}
	if len(limits) > 0 {
		below := false
		for _, l := range limits {
			if strings.Contains(l, "*") || order(v, l) < 0 {
				below = true
				break
			}
		}
		if !below {
			return false
		}
	}
	isZero := func(e osvEvent) bool { return e.kind == "introduced" && e.ver == "0" }
	sort.SliceStable(evs, func(i, j int) bool {
		a, b := evs[i], evs[j]
		if isZero(a) || isZero(b) {
			return isZero(a) && !isZero(b)
		}
		return order(a.ver, b.ver) < 0
	})
	affected := false
	for _, e := range evs {
		switch e.kind {
		case "introduced":
			if e.ver == "0" || order(v, e.ver) >= 0 {
				affected = true
			}
		case "fixed":
			if order(v, e.ver) >= 0 {
				affected = false
			}
		case "last_affected":
			if order(v, e.ver) > 0 {
				affected = false
			}
		}
	}
	return affected
}

func normName(eco, name string) string {
	if eco == "PyPI" {
		return normalizePython(name)
	}
	return name
}

func normalizePython(name string) string {
	name = strings.ToLower(strings.TrimSpace(name))
	var b strings.Builder
	sep := false
	for _, r := range name {
		if r == '-' || r == '_' || r == '.' {
			sep = true
			continue
		}
		if sep && b.Len() > 0 {
			b.WriteByte('-')
		}
		sep = false
		b.WriteRune(r)
	}
	return b.String()
}

func uniqSorted(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	sort.Strings(s)
	out := s[:1]
	for _, x := range s[1:] {
		if x != out[len(out)-1] {
			out = append(out, x)
		}
	}
	return out
}
