package main

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/envgap/envgap/export/hub/hubtest"
	"github.com/envgap/envgap/lib/release"
)

// hubFiles reads an exported Hub folder as the repository's files.
func hubFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b, err := os.ReadFile(p)
		files[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestTasksFromTheHub: --tasks hf://OWNER/NAME[@REVISION] downloads the release through
// the Hub's API (the in-process fake: revision, tree, resolve and the LFS redirect),
// with HF_TOKEN when set and only then, caches it by commit (a second use downloads
// nothing; main and its commit id are one cache entry), gives the tasks the exported
// folder gives, and refuses a release whose task rows and harness zip are not of one
// corpus (exit 5, nothing cached).
func TestTasksFromTheHub(t *testing.T) {
	store := verifiedStore(t)
	if out, err := runCLI(t, "--store", store, "admit"); err != nil {
		t.Fatalf("admit: %q, %v", out, err)
	}
	good := exportStore(t, store)
	if out, err := runCLI(t, "--store", store, "exclude", "envgap__chainer__chainer-679", "--reason", "Broken."); err != nil {
		t.Fatalf("exclude: %q, %v", out, err)
	}
	other := exportStore(t, store)

	const token = "hf_fetchtesttoken0123456789"
	hub := hubtest.New(token)
	defer hub.Close()
	hub.AddRepo("envgap/EnvGap", hubFiles(t, good))
	bad := hubFiles(t, good)
	bad[release.HarnessPath] = hubFiles(t, other)[release.HarnessPath]
	hub.AddRepo("envgap/Mixed", bad)
	commits := hub.Commits("envgap/EnvGap")
	head := commits[len(commits)-1].OID

	cache := t.TempDir()
	fetch := func(ref, tok string) (*scoringOptions, string, error) {
		t.Helper()
		var errOut bytes.Buffer
		env := map[string]string{"HF_ENDPOINT": hub.Server.URL, envHubCache: cache, "HF_TOKEN": tok}
		f := &factory{Global: &globalOptions{Store: filepath.Join(t.TempDir(), "store")}, Out: &bytes.Buffer{}, Err: &errOut, Getenv: func(k string) string { return env[k] }}
		o := &scoringOptions{Split: release.ConfigFull, Tasks: ref}
		err := o.fetchTasks(context.Background(), f)
		if strings.Contains(errOut.String(), token) || (err != nil && strings.Contains(err.Error(), token)) {
			t.Fatalf("the token was printed: %s %v", errOut.String(), err)
		}
		return o, errOut.String(), err
	}
	resolves := func() (n int, withToken int) {
		for _, r := range hub.Requests() {
			if strings.Contains(r.Path, "/resolve/") {
				n++
				if r.Auth != "" {
					withToken++
				}
			}
		}
		return n, withToken
	}

	// A public release, no token: downloaded, no Authorization sent; the tasks are the
	// folder's.
	o, msg, err := fetch("hf://envgap/EnvGap", "")
	if err != nil {
		t.Fatalf("fetch: %v", err)
	}
	if want := filepath.Join(cache, "envgap", "EnvGap", head); o.Tasks != want || !strings.Contains(msg, "downloaded") || !strings.Contains(msg, "commit "+head) {
		t.Fatalf("fetched into %s (%s), want %s", o.Tasks, msg, want)
	}
	for _, r := range hub.Requests() {
		if r.Auth != "" {
			t.Errorf("%s %s carried a token, none was set", r.Method, r.Path)
		}
	}
	if _, err := os.Stat(filepath.Join(o.Tasks, "data", release.ConfigCandidates)); !os.IsNotExist(err) {
		t.Errorf("the candidates config was downloaded (%v): scoring does not read it", err)
	}
	fromHub, _, err := o.splitTasks(&factory{Global: &globalOptions{}, Err: &bytes.Buffer{}, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	local, _, err := (&scoringOptions{Split: release.ConfigFull, Tasks: good}).splitTasks(&factory{Global: &globalOptions{}, Err: &bytes.Buffer{}, Getenv: func(string) string { return "" }})
	if err != nil || !reflect.DeepEqual(fromHub, local) {
		t.Fatalf("tasks from the Hub differ from the exported folder's (%v)", err)
	}

	// The same commit again, by its id: cached, nothing downloaded.
	before, _ := resolves()
	if o2, msg, err := fetch("hf://envgap/EnvGap@"+head, ""); err != nil || o2.Tasks != o.Tasks || !strings.Contains(msg, "cached") {
		t.Fatalf("second fetch: %v, %s, %s", err, o2.Tasks, msg)
	}
	if after, _ := resolves(); after != before {
		t.Errorf("a cached commit was downloaded again (%d file requests)", after-before)
	}
	if _, _, err := fetch("hf://envgap/EnvGap@0000000000000000000000000000000000000000", ""); err == nil || !strings.Contains(err.Error(), "check OWNER/NAME and @REVISION") {
		t.Errorf("an unknown revision: %v", err)
	}

	// A private release: refused without a token (saying HF_TOKEN), read with it.
	hub.SetPrivate("envgap/EnvGap", true)
	if err := os.RemoveAll(filepath.Join(cache, "envgap")); err != nil {
		t.Fatal(err)
	}
	// The Hub answers 401 RepoNotFound, not saying whether the repository exists.
	if _, _, err := fetch("hf://envgap/EnvGap", ""); err == nil || !strings.Contains(err.Error(), "HF_TOKEN") || !strings.Contains(err.Error(), "HTTP 401 RepoNotFound") {
		t.Errorf("a private release without a token: %v", err)
	}
	// With a token, a repository that does not exist is a 404.
	if _, _, err := fetch("hf://envgap/NoSuchRelease", token); err == nil || !strings.Contains(err.Error(), "HTTP 404 RepoNotFound") {
		t.Errorf("a missing release with a token: %v", err)
	}
	_, tokened := resolves()
	if _, msg, err := fetch("hf://envgap/EnvGap", token); err != nil || !strings.Contains(msg, "downloaded") {
		t.Fatalf("a private release with the token: %v %s", err, msg)
	}
	if _, after := resolves(); after == tokened {
		t.Error("the token was not sent for a private release")
	}

	// Task rows and harness zip of two corpora: refused, exit 5, nothing cached.
	_, _, err = fetch("hf://envgap/Mixed", "")
	if exitCode(err) != exitDamage || !strings.Contains(err.Error(), "corpus id mismatch") {
		t.Errorf("a mixed release: exit %d, %v", exitCode(err), err)
	}
	if ents, _ := os.ReadDir(filepath.Join(cache, "envgap", "Mixed")); len(ents) != 0 {
		t.Errorf("a refused release left %d entries in the cache", len(ents))
	}
	if _, _, err := fetch("hf://not a repo", ""); exitCode(err) != exitUsage {
		t.Errorf("a malformed reference: exit %d, %v", exitCode(err), err)
	}
}
