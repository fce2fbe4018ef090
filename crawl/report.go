package crawl

import (
	"fmt"
	"io"
	"sort"

	"github.com/envgap/envgap/crawl/ghhttp"
	"github.com/envgap/envgap/schemas"
)

// Report is the record of one crawl (kind "crawl_report"), stored canonically and named
// by the ref crawls/<crawl id>.
type Report struct {
	Kind           schemas.RecordKind `json:"kind"`
	CrawlID        string             `json:"crawl_id"`
	Command        string             `json:"command"` // "issues" or "prs"
	APIURL         string             `json:"api_url"`
	GitURLTemplate string             `json:"git_url_template"`
	Since          string             `json:"since,omitempty"`
	StartedAt      string             `json:"started_at"`
	FinishedAt     string             `json:"finished_at"`
	Repos          int                `json:"repos"`
	// HTTP counts the API requests: sent over the network (retries included), of which
	// conditional and answered 304, and those answered from this crawl's cache.
	HTTP ghhttp.Stats `json:"http"`
	// GitFetches counts single-commit fetches; GitFromCache trees and fixes read from the
	// store's git memo instead.
	GitFetches   int `json:"git_fetches"`
	GitFromCache int `json:"git_from_cache"`
	// Considered counts the issues (issues) or merged pull requests (prs) looked at.
	Considered int `json:"considered"`
	// Skipped counts what was passed over without being a candidate or a reject: pull
	// requests in the issue list, issues opened or pull requests merged before --since,
	// closed pull requests that were never merged.
	Skipped              map[string]int `json:"skipped"`
	Candidates           int            `json:"candidates"`
	NewCandidates        int            `json:"new_candidates"`
	Rejected             int            `json:"rejected"`
	RejectedByReason     map[string]int `json:"rejected_by_reason"`
	RequestsPerCandidate float64        `json:"requests_per_candidate"`
	CandidateSet         string         `json:"candidate_set"`
	CandidateSetDigest   schemas.Digest `json:"candidate_set_digest"`
	Unchanged            bool           `json:"unchanged"`
	// Breakages lists, for a prs crawl, each Repaired candidate kept with every issue of
	// its repository its pull request closes: one breakage, so none of those issues
	// becomes a Reported candidate in a later crawl issues.
	Breakages []Breakage `json:"breakages,omitempty"`

	// Digest is the stored report's digest (not part of the record).
	Digest schemas.Digest `json:"-"`
}

// Breakage is one Repaired candidate's breakage: the pull request and the issues it closes.
type Breakage struct {
	Repo        string `json:"repo"`
	PullRequest int    `json:"pull_request"`
	Issues      []int  `json:"issues"`
	Candidate   string `json:"candidate"`
}

// Print writes the report for people.
func (r *Report) Print(w io.Writer) {
	fmt.Fprintf(w, "crawl %s %s: %d repositories, %d considered, %d candidates (%d new), %d rejected\n",
		r.Command, r.CrawlID, r.Repos, r.Considered, r.Candidates, r.NewCandidates, r.Rejected)
	h := r.HTTP
	fmt.Fprintf(w, "  requests: %d sent (%d conditional, %d answered 304), %d served from this crawl's cache, %d retried after rate limits or errors (waited %.0fs)\n",
		h.Requests, h.Conditional, h.NotModified, h.FromCache, h.Retried, h.WaitedSeconds)
	if len(h.RateLimited) > 0 {
		fmt.Fprintf(w, "  rate limited:%s\n", countList(h.RateLimited))
	}
	fmt.Fprintf(w, "  git: %d single-commit fetches, %d trees or fixes from the store\n", r.GitFetches, r.GitFromCache)
	if r.Candidates > 0 {
		fmt.Fprintf(w, "  API requests per candidate: %.1f\n", r.RequestsPerCandidate)
	}
	if len(r.RejectedByReason) > 0 {
		fmt.Fprintf(w, "  rejected by reason:%s\n", countList(r.RejectedByReason))
	}
	if len(r.Skipped) > 0 {
		fmt.Fprintf(w, "  skipped:%s\n", countList(r.Skipped))
	}
	if r.Unchanged {
		fmt.Fprintf(w, "  candidate set %s unchanged\n", r.CandidateSet)
	} else {
		fmt.Fprintf(w, "  candidate set %s\n", r.CandidateSet)
	}
	fmt.Fprintf(w, "  report crawls/%s (%s)\n", r.CrawlID, r.Digest.Short())
}

func countList(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := ""
	for _, k := range keys {
		s += fmt.Sprintf(" %s %d", k, m[k])
	}
	return s
}
