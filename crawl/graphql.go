package crawl

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
)

// GraphQLURL returns the GraphQL endpoint of a REST base URL: <base>/graphql, except for
// GitHub Enterprise's REST base <host>/api/v3, whose GraphQL endpoint is <host>/api/graphql.
func GraphQLURL(restBase *url.URL) string {
	s := strings.TrimSuffix(restBase.String(), "/")
	if strings.HasSuffix(s, "/api/v3") {
		return strings.TrimSuffix(s, "/v3") + "/graphql"
	}
	return s + "/graphql"
}

// graphQL posts queries to GitHub's GraphQL endpoint (plain HTTP; rate limits and the
// cache are the transport's).
type graphQL struct {
	url string
	hc  *http.Client
}

type gqlError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
	Path    []any  `json:"path"`
}

// query runs q and decodes its data into out. Errors of type NOT_FOUND leave their field
// null; any other error fails the query.
func (g *graphQL) query(ctx context.Context, q string, vars map[string]any, out any) error {
	body, err := json.Marshal(map[string]any{"query": q, "variables": vars})
	if err != nil {
		return fmt.Errorf("graphql: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("graphql: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := g.hc.Do(req)
	if err != nil {
		return fmt.Errorf("graphql: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("graphql: reading the answer: %w", err)
	}
	var r struct {
		Data    json.RawMessage `json:"data"`
		Errors  []gqlError      `json:"errors"`
		Message string          `json:"message"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("graphql: status %d: the answer is not JSON: %w", resp.StatusCode, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("graphql: status %d: %s", resp.StatusCode, r.Message)
	}
	for _, e := range r.Errors {
		if e.Type != "NOT_FOUND" {
			return fmt.Errorf("graphql: %s: %s", e.Type, e.Message)
		}
	}
	if len(r.Data) == 0 || string(r.Data) == "null" {
		return fmt.Errorf("graphql: the answer has no data")
	}
	if err := json.Unmarshal(r.Data, out); err != nil {
		return fmt.Errorf("graphql: decoding data: %w", err)
	}
	return nil
}

// prLink is what GitHub's GraphQL API says about a pull request: the issues it records the
// pull request as closing, and the counts and commits to check the REST answers against.
type prLink struct {
	Number       int    `json:"number"`
	Merged       bool   `json:"merged"`
	ChangedFiles int    `json:"changedFiles"`
	BaseRefName  string `json:"baseRefName"`
	BaseRefOid   string `json:"baseRefOid"`
	HeadRefOid   string `json:"headRefOid"`
	MergeCommit  *struct {
		Oid string `json:"oid"`
	} `json:"mergeCommit"`
	ClosingIssuesReferences struct {
		TotalCount int `json:"totalCount"`
		Nodes      []struct {
			Number     int    `json:"number"`
			URL        string `json:"url"`
			Repository struct {
				NameWithOwner string `json:"nameWithOwner"`
			} `json:"repository"`
		} `json:"nodes"`
	} `json:"closingIssuesReferences"`
}

// closingIssues returns the numbers of the issues of repo the pull request closes, sorted.
func (l *prLink) closingIssues(repo string) []int {
	var out []int
	for _, n := range l.ClosingIssuesReferences.Nodes {
		if strings.EqualFold(n.Repository.NameWithOwner, repo) {
			out = append(out, n.Number)
		}
	}
	sort.Ints(out)
	return out
}

// prBatch is how many pull requests one GraphQL query asks about.
const prBatch = 50

// maxClosingRefs is how many closing issues a query lists per pull request.
const maxClosingRefs = 25

const prLinkFields = `number merged changedFiles baseRefName baseRefOid headRefOid mergeCommit { oid } ` +
	`closingIssuesReferences(first: %d) { totalCount nodes { number url repository { nameWithOwner } } }`

// prLinks asks GraphQL about pull requests of owner/name, prBatch at a time.
func (g *graphQL) prLinks(ctx context.Context, owner, name string, numbers []int) (map[int]*prLink, error) {
	out := map[int]*prLink{}
	fields := fmt.Sprintf(prLinkFields, maxClosingRefs)
	for start := 0; start < len(numbers); start += prBatch {
		end := min(start+prBatch, len(numbers))
		var q strings.Builder
		q.WriteString("query($owner: String!, $name: String!) { repository(owner: $owner, name: $name) { ")
		for _, n := range numbers[start:end] {
			fmt.Fprintf(&q, "pr%d: pullRequest(number: %d) { %s } ", n, n, fields)
		}
		q.WriteString("} }")
		var data struct {
			Repository map[string]*prLink `json:"repository"`
		}
		if err := g.query(ctx, q.String(), map[string]any{"owner": owner, "name": name}, &data); err != nil {
			return nil, fmt.Errorf("pull requests of %s/%s: %w", owner, name, err)
		}
		for _, n := range numbers[start:end] {
			if l := data.Repository[fmt.Sprintf("pr%d", n)]; l != nil {
				out[n] = l
			}
		}
	}
	return out, nil
}
