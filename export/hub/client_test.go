package hub

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/envgap/envgap/export/hub/hubtest"
)

const testToken = "hf_TESTtoken0123456789abcdefSECRET"

// writeFolder writes files (relative path -> content) under a new temp folder.
func writeFolder(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func release(readme string) map[string]string {
	return map[string]string{
		"README.md":                                   readme,
		"images/candidates-funnel.png":                "\x89PNG\r\n\x1a\nfake chart",
		"data/full/test-00000-of-00001.parquet":       "PAR1 full rows PAR1",
		"data/candidates/test-00000-of-00001.parquet": "PAR1 candidate rows PAR1",
	}
}

func client(h *hubtest.Hub) *Client {
	return &Client{Endpoint: h.Server.URL, Token: testToken, HTTP: h.Server.Client()}
}

func TestPublishCreatesTheRepoAndCommitsEverything(t *testing.T) {
	h := hubtest.New(testToken)
	defer h.Close()
	files := release("---\nconfigs: []\n---\n# EnvGap\n")
	dir := writeFolder(t, files)
	res, err := client(h).Publish(context.Background(), "me/EnvGap", dir, PublishOptions{Summary: "Publish EnvGap abc"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Created || res.Commit == "" || res.Uploaded != 3 {
		t.Fatalf("result = %+v, want created, committed, 3 LFS uploads (2 parquet, 1 png)", res)
	}
	got := h.Files("me/EnvGap")
	for p, c := range files {
		if string(got[p]) != c {
			t.Errorf("%s on the Hub = %q, want %q", p, got[p], c)
		}
	}
	if _, ok := got[".gitattributes"]; !ok {
		t.Error("the repository's own .gitattributes was removed")
	}
	commits := h.Commits("me/EnvGap")
	last := commits[len(commits)-1]
	if last.Summary != "Publish EnvGap abc" || last.Parent != commits[len(commits)-2].OID {
		t.Errorf("last commit = %+v", last)
	}
	wantKeys := []string{"header", "file", "lfsFile", "lfsFile", "lfsFile"}
	if !reflect.DeepEqual(sortedKeys(last.Lines), sortedKeys(wantKeys)) || last.Lines[0] != "header" {
		t.Errorf("commit lines = %v, want a header, one file and three lfsFile lines", last.Lines)
	}
}

func sortedKeys(s []string) string {
	c := append([]string(nil), s...)
	for i := 1; i < len(c); i++ {
		for j := i; j > 0 && c[j] < c[j-1]; j-- {
			c[j], c[j-1] = c[j-1], c[j]
		}
	}
	return strings.Join(c, ",")
}

func TestPublishSendsOnlyChanges(t *testing.T) {
	h := hubtest.New(testToken)
	defer h.Close()
	h.AddRepo("me/EnvGap", map[string][]byte{
		"LICENSE.md":                            []byte("MIT"),
		"data/full/test-00000-of-00002.parquet": []byte("old shard 0"),
		"data/full/test-00001-of-00002.parquet": []byte("old shard 1"),
	})
	c := client(h)
	dir := writeFolder(t, release("v1"))
	if _, err := c.Publish(context.Background(), "me/EnvGap", dir, PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	got := h.Files("me/EnvGap")
	if _, ok := got["data/full/test-00000-of-00002.parquet"]; ok {
		t.Error("a stale shard under data/ was kept")
	}
	if string(got["LICENSE.md"]) != "MIT" {
		t.Error("a file outside data/ was touched")
	}
	// Nothing changed: no commit.
	n := len(h.Commits("me/EnvGap"))
	res, err := c.Publish(context.Background(), "me/EnvGap", dir, PublishOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Commit != "" || len(h.Commits("me/EnvGap")) != n || res.Plan.Pending() {
		t.Errorf("an unchanged folder made a commit: %+v", res)
	}
	// One file changes: one line besides the header, and no LFS upload.
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("v2"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err = c.Publish(context.Background(), "me/EnvGap", dir, PublishOptions{})
	if err != nil {
		t.Fatal(err)
	}
	commits := h.Commits("me/EnvGap")
	if res.Uploaded != 0 || !reflect.DeepEqual(commits[len(commits)-1].Lines, []string{"header", "file"}) {
		t.Errorf("update: uploaded %d, lines %v", res.Uploaded, commits[len(commits)-1].Lines)
	}
	if counts := res.Plan.Counts(); counts[ChangeUpdate] != 1 || counts[ChangeUnchanged] != 3 {
		t.Errorf("plan counts = %v", counts)
	}
}

func TestDryRunWritesNothing(t *testing.T) {
	h := hubtest.New(testToken)
	defer h.Close()
	h.AddRepo("me/EnvGap", map[string][]byte{"README.md": []byte("v1"), "data/lite/old.parquet": []byte("x")})
	dir := writeFolder(t, release("v1"))
	plan, err := client(h).MakePlan(context.Background(), "me/EnvGap", "main", dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"README.md": ChangeUnchanged, "images/candidates-funnel.png": ChangeAdd,
		"data/full/test-00000-of-00001.parquet": ChangeAdd, "data/candidates/test-00000-of-00001.parquet": ChangeAdd,
		"data/lite/old.parquet": ChangeDelete,
	}
	got := map[string]string{}
	for _, c := range plan.Changes {
		got[c.Path] = c.Action
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("plan = %v, want %v", got, want)
	}
	for _, r := range h.Requests() {
		if r.Method != http.MethodGet {
			t.Errorf("a dry run sent %s %s", r.Method, r.Path)
		}
	}
	// A missing repository is a plan too, without creating anything.
	plan, err = client(h).MakePlan(context.Background(), "me/Missing", "main", dir)
	if err != nil || plan.RepoExists || plan.Counts()[ChangeAdd] != 4 {
		t.Errorf("plan for a missing repo = %+v, %v", plan, err)
	}
	if h.Files("me/Missing") != nil {
		t.Error("a dry run created the repository")
	}
}

func TestTokenNeverLeaks(t *testing.T) {
	h := hubtest.New(testToken)
	defer h.Close()
	dir := writeFolder(t, release("hello"))
	var out bytes.Buffer
	res, err := client(h).Publish(context.Background(), "me/EnvGap", dir, PublishOptions{})
	if err != nil {
		t.Fatal(err)
	}
	json.NewEncoder(&out).Encode(res)
	fmt.Fprintf(&out, "%+v %#v", res, res.Plan)
	// The token goes to the Hub's API only, and never to a presigned upload URL.
	uploads := 0
	for _, r := range h.Requests() {
		if bytes.Contains(r.Body, []byte(testToken)) {
			t.Errorf("%s %s carried the token in its body", r.Method, r.Path)
		}
		if strings.HasPrefix(r.Path, "/lfs-upload/") {
			uploads++
			if r.Auth != "" {
				t.Errorf("%s %s carried an Authorization header to a presigned URL", r.Method, r.Path)
			}
		}
	}
	if uploads == 0 {
		t.Fatal("no LFS upload happened; the test checks nothing")
	}
	// Errors never carry it either, even when a server echoes it back.
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Error-Message", "bad token: "+r.Header.Get("Authorization"))
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer echo.Close()
	_, err = (&Client{Endpoint: echo.URL, Token: testToken}).Publish(context.Background(), "me/EnvGap", dir, PublishOptions{})
	if err == nil {
		t.Fatal("the echoing server accepted the publish")
	}
	fmt.Fprint(&out, err.Error())
	// A wrong token is refused by the fake, and the refusal does not name it.
	_, err = (&Client{Endpoint: h.Server.URL, Token: "hf_wrong"}).Publish(context.Background(), "me/EnvGap", dir, PublishOptions{})
	var he *HTTPError
	if !errors.As(err, &he) || he.Status != http.StatusUnauthorized {
		t.Errorf("wrong token: err = %v, want 401", err)
	}
	fmt.Fprint(&out, err)
	if strings.Contains(out.String(), testToken) || strings.Contains(out.String(), testToken[:12]) {
		t.Errorf("the token (or a prefix) appears in results or errors:\n%s", out.String())
	}
}

func TestPublishWithoutTokenRefuses(t *testing.T) {
	h := hubtest.New(testToken)
	defer h.Close()
	dir := writeFolder(t, release("x"))
	_, err := (&Client{Endpoint: h.Server.URL}).Publish(context.Background(), "me/EnvGap", dir, PublishOptions{})
	if err == nil || !strings.Contains(err.Error(), EnvToken) {
		t.Fatalf("err = %v, want one naming %s", err, EnvToken)
	}
	if len(h.Requests()) != 0 {
		t.Error("requests were sent without a token")
	}
}

func TestMultipartUploadAndPagedTree(t *testing.T) {
	h := hubtest.New(testToken)
	defer h.Close()
	h.ChunkSize = 7
	h.PageSize = 2
	files := release("x")
	files["data/full/test-00000-of-00001.parquet"] = strings.Repeat("0123456789", 5) // 50 bytes: 8 parts
	dir := writeFolder(t, files)
	c := client(h)
	if _, err := c.Publish(context.Background(), "me/EnvGap", dir, PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := string(h.Files("me/EnvGap")["data/full/test-00000-of-00001.parquet"]); got != files["data/full/test-00000-of-00001.parquet"] {
		t.Errorf("multipart upload stored %q", got)
	}
	parts := 0
	for _, r := range h.Requests() {
		if strings.Contains(r.Path, "/part/") {
			parts++
		}
	}
	if parts < 8 {
		t.Errorf("%d part uploads, want at least 8", parts)
	}
	// The tree spans several pages (5 files, 2 per page); the plan still sees all of them.
	tree, err := c.Tree(context.Background(), "me/EnvGap", "main")
	if err != nil || len(tree) != 5 {
		t.Fatalf("tree has %d files (%v), want 5", len(tree), err)
	}
	plan, err := c.MakePlan(context.Background(), "me/EnvGap", "main", dir)
	if err != nil || plan.Pending() {
		t.Errorf("plan after publishing = %+v, %v; want nothing pending", plan, err)
	}
}

func TestConcurrentChangeFailsTheCommit(t *testing.T) {
	h := hubtest.New(testToken)
	defer h.Close()
	h.AddRepo("me/EnvGap", nil)
	c := client(h)
	dir := writeFolder(t, map[string]string{"README.md": "mine"})
	plan, err := c.MakePlan(context.Background(), "me/EnvGap", "main", dir)
	if err != nil {
		t.Fatal(err)
	}
	h.AddRepo("me/Other", nil) // unrelated
	// Someone else commits in between.
	other := writeFolder(t, map[string]string{"NOTES.md": "theirs"})
	if _, err := c.Publish(context.Background(), "me/EnvGap", other, PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = c.commit(context.Background(), "me/EnvGap", "main", "late", plan, map[string]string{"README.md": "regular"})
	var he *HTTPError
	if !errors.As(err, &he) || he.Status != http.StatusPreconditionFailed {
		t.Fatalf("commit on a stale parent: err = %v, want 412", err)
	}
}

func TestFakeHubFollowsTheWireFormat(t *testing.T) {
	h := hubtest.New(testToken)
	defer h.Close()
	h.AddRepo("me/EnvGap", nil)
	commitURL := h.Server.URL + "/api/datasets/me/EnvGap/commit/main"
	header := `{"key":"header","value":{"summary":"s","description":""}}`
	tests := []struct {
		name   string
		token  string
		ctype  string
		body   string
		status int
	}{
		{"valid", testToken, "application/x-ndjson", header + "\n" + `{"key":"file","value":{"content":"aGk=","path":"a.txt","encoding":"base64"}}` + "\n", 200},
		{"no token", "", "application/x-ndjson", header + "\n", 401},
		{"wrong token", "hf_nope", "application/x-ndjson", header + "\n", 401},
		{"not ndjson", testToken, "application/json", header + "\n", 400},
		{"malformed line", testToken, "application/x-ndjson", header + "\n{\"key\":\"file\",\n", 400},
		{"unknown key", testToken, "application/x-ndjson", header + "\n" + `{"key":"addFile","value":{"path":"a"}}` + "\n", 400},
		{"unknown field", testToken, "application/x-ndjson", header + "\n" + `{"key":"file","value":{"content":"aGk=","path":"a.txt","encoding":"base64","mode":"x"}}` + "\n", 400},
		{"no header", testToken, "application/x-ndjson", `{"key":"file","value":{"content":"aGk=","path":"a.txt","encoding":"base64"}}` + "\n", 400},
		{"lfs object never uploaded", testToken, "application/x-ndjson", header + "\n" + `{"key":"lfsFile","value":{"path":"a.parquet","algo":"sha256","oid":"00","size":1}}` + "\n", 400},
		{"delete a missing file", testToken, "application/x-ndjson", header + "\n" + `{"key":"deletedFile","value":{"path":"nope"}}` + "\n", 400},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, commitURL, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", tc.ctype)
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			resp, err := h.Server.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Errorf("status = %d, want %d", resp.StatusCode, tc.status)
			}
		})
	}
	if string(h.Files("me/EnvGap")["a.txt"]) != "hi" {
		t.Error("the valid commit was not stored")
	}
}

// TestClientReadsRecordedShapes decodes answers in the shape the Hub sends (testdata) and
// checks the plan against a tree fixture.
func TestClientReadsRecordedShapes(t *testing.T) {
	tree, _ := os.ReadFile("testdata/tree.json")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/revision/main"):
			fmt.Fprint(w, `{"id":"o/n","sha":"7e46a671dd28498f647fc885a1b1053aeb267dc5","private":false}`)
		case strings.Contains(r.URL.Path, "/tree/main"):
			w.Write(tree)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	dir := writeFolder(t, map[string]string{"README.md": "hello\n", "data/full/test-00000-of-00001.parquet": "other bytes", "images/x.png": "p"})
	plan, err := (&Client{Endpoint: srv.URL}).MakePlan(context.Background(), "o/n", "main", dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range plan.Changes {
		got[c.Path] = c.Action
	}
	want := map[string]string{"README.md": ChangeUnchanged, "data/full/test-00000-of-00001.parquet": ChangeUpdate, "images/x.png": ChangeAdd}
	if !reflect.DeepEqual(got, want) || plan.Parent != "7e46a671dd28498f647fc885a1b1053aeb267dc5" {
		t.Errorf("plan = %v (parent %s), want %v", got, plan.Parent, want)
	}
	var batch struct {
		Objects []lfsObject `json:"objects"`
	}
	b, _ := os.ReadFile("testdata/lfs_batch.json")
	if err := json.Unmarshal(b, &batch); err != nil || len(batch.Objects) != 2 || batch.Objects[0].Actions != nil ||
		batch.Objects[1].Actions.Upload == nil || batch.Objects[1].Actions.Verify.Header["Authorization"] == "" {
		t.Errorf("lfs batch fixture decoded as %+v, %v", batch, err)
	}
}

func TestTokenStaysOnTheEndpointOrigin(t *testing.T) {
	c := &Client{Endpoint: "https://hub.example", Token: testToken}
	for u, want := range map[string]bool{
		"https://hub.example/api/datasets/o/n/commit/main": true,
		"https://hub.example:443/x":                        false, // another authority string: refuse rather than guess
		"http://hub.example/api":                           false,
		"https://storage.example/upload?sig=1":             false,
		"https://hub.example.evil/api":                     false,
	} {
		if got := c.sameOrigin(u); got != want {
			t.Errorf("sameOrigin(%s) = %v, want %v", u, got, want)
		}
	}
}
