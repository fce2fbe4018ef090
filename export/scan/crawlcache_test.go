package scan

import (
	"context"
	"strings"
	"testing"

	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/schemas"
)

// TestScanCoversTheCrawlCache: a token a server echoed into a cached GitHub answer (by an
// envgap before the crawl redacted answers) is found, needs a decision, and stays off the
// card.
func TestScanCoversTheCrawlCache(t *testing.T) {
	st, err := catalog.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tok := newFakes(11).githubPAT()
	body, err := st.Put([]byte(`{"message":"Bad credentials: Bearer ` + tok + `","documentation_url":"https://docs.github.com/rest"}`))
	if err != nil {
		t.Fatal(err)
	}
	const url = "https://api.github.com/repos/acme/widgets"
	ans, err := st.PutJSON(map[string]any{"kind": "github_response", "method": "GET", "url": url, "status": 401,
		"header": map[string]string{}, "body": body, "fetched_at": "2026-09-28T12:00:00Z"})
	if err != nil {
		t.Fatal(err)
	}
	for _, stage := range []string{data.MemoGitHubHTTP, data.MemoGitHubCrawl} {
		if err := st.SetMemo(stage, schemas.Hash([]byte(stage)), ans); err != nil {
			t.Fatal(err)
		}
	}
	rec, _, err := Run(context.Background(), st, sharedScanner(t), RunOptions{Workers: 2, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	var got []Occurrence
	for _, o := range rec.Findings {
		if o.Field == FieldCrawlCache {
			got = append(got, o)
		}
	}
	if len(got) != 1 || got[0].Rule != "github-pat" || got[0].Path != "GET "+url {
		t.Fatalf("crawl-cache findings %+v, want one github-pat at GET %s", got, url)
	}
	if len(rec.Unreviewed()) != 1 {
		t.Errorf("the finding does not wait for a decision")
	}
	for _, o := range rec.Findings {
		if strings.Contains(o.Match, tok) {
			t.Errorf("the finding's match holds the token: %q", o.Match)
		}
	}
	dec := rec.Findings[0]
	dec.Decision = &Decision{Fingerprint: dec.Fingerprint, Decision: DecisionFalsePositive, Reason: "revoked"}
	rec.Findings[0] = dec
	if s := CardSection(rec, nil); strings.Contains(s, "crawl") || strings.Contains(s, "github-pat") {
		t.Errorf("the card mentions the crawl cache: %q", s)
	}
}
