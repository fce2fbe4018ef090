package agent

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/envgap/envgap/core/untrusted"
	"github.com/envgap/envgap/schemas"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// MaterializeFunc writes a task's project at base_commit into dir (absent or empty) as a
// git repository holding base_commit alone: the Lite commit made from project_files, or
// the commit fetched alone at depth 1. cmd wires the crawl's implementations in.
type MaterializeFunc func(ctx context.Context, t *schemas.Task, dir string) error

// Limits of what the harness reads back from a workspace.
const (
	MaxFileBytes  = 2 << 20  // one changed file
	MaxDiffBytes  = 16 << 20 // all changed files together
	MaxDiffFiles  = 2000     // changed files
	maxStateBytes = 64 << 20 // the trajectory file (and any file of the run directory)
	maxCostBytes  = 4096     // the cost file
)

// artifactDirs are directories of install and build output: untracked files under them
// are left out of the files object (an agent that ran npm install or a build is not
// changing source).
var artifactDirs = map[string]bool{"node_modules": true, "__pycache__": true, ".venv": true, "venv": true,
	"build": true, "target": true, "dist": true, ".pytest_cache": true, ".mypy_cache": true, ".tox": true,
	".eggs": true, ".gradle": true, "cmake-build-debug": true, "cmake-build-release": true, ".cache": true}

// Workspace is one run of an agent on one task.
type Workspace struct {
	// Dir is the project (the agent's working directory); RunDir holds it, the task
	// file, the agent's state files and its HOME.
	Dir, RunDir string
	Task        *schemas.Task
	baseline    map[string]baseFile
	trackedDirs map[string]bool
	ignore      gitignore.Matcher
}

type baseFile struct {
	sum  [32]byte
	mode fs.FileMode
	size int64
}

// TaskView is what the task file holds: what an agent may see of a task, which the record
// layout declares (agent:"visible" in schemas/layout.go, schemas.AgentColumns). Never
// patch, gold_files, pull_request or pr_*; nor the commands that score it. TaskView is
// the typed form of that list: View fills it from the layout (schemas.AgentView), which
// refuses a TaskView that holds another column or lacks one.
type TaskView struct {
	InstanceID                string            `json:"instance_id"`
	Repo                      string            `json:"repo"`
	BaseCommit                string            `json:"base_commit"`
	ProblemStatement          string            `json:"problem_statement"`
	ProblemStatementTruncated bool              `json:"problem_statement_truncated"`
	FailureSignature          string            `json:"failure_signature"`
	Ecosystem                 schemas.Ecosystem `json:"ecosystem"`
	Image                     string            `json:"image"`
	ManifestPath              string            `json:"manifest_path"`
	ManifestPaths             []string          `json:"manifest_paths"`
	ReproCommand              string            `json:"repro_command"`
	RegistryDate              string            `json:"registry_date"`
}

// View returns the task file's content of a task: its agent-visible columns. It panics
// when TaskView and the layout's agent-visible columns differ (a programming error that
// every test of this package shows).
func View(t *schemas.Task) TaskView {
	var v TaskView
	if err := schemas.AgentView(t, &v); err != nil {
		panic(err)
	}
	return v
}

// The files of a run directory.
const (
	TaskFileName       = "task.json"
	FeedbackFileName   = "feedback.txt"
	TrajectoryFileName = "trajectory.json"
	CostFileName       = "cost.json"
	ReproFileName      = "repro"
	homeDirName        = "home"
	workspaceDirName   = "workspace"
)

// Prepare makes runDir (absent or empty) a run directory: the project at base_commit in
// workspace/ (checked: a git repository holding base_commit and nothing later), the task
// file, and home/ (the agent's HOME and TMPDIR).
func Prepare(ctx context.Context, t *schemas.Task, runDir string, materialize MaterializeFunc) (*Workspace, error) {
	if err := os.MkdirAll(filepath.Join(runDir, homeDirName), 0o755); err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	// A box mounts the run directory read-only: its root, in a user namespace, is not the
	// directory's owner and reads it as others do (a temporary directory is 0700).
	if err := os.Chmod(runDir, 0o755); err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	w := &Workspace{Dir: filepath.Join(runDir, workspaceDirName), RunDir: runDir, Task: t}
	if err := materialize(ctx, t, w.Dir); err != nil {
		return nil, fmt.Errorf("workspace of %s: %w", t.InstanceID, err)
	}
	if err := CheckHistory(w.Dir, t.BaseCommit); err != nil {
		return nil, fmt.Errorf("workspace of %s: %w", t.InstanceID, err)
	}
	b, err := json.MarshalIndent(View(t), "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(w.TaskFile(), append(b, '\n'), 0o444); err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	if err := w.snapshot(); err != nil {
		return nil, fmt.Errorf("workspace of %s: %w", t.InstanceID, err)
	}
	return w, nil
}

// TaskFile, FeedbackFile, TrajectoryFile, CostFile and Home are the paths the agent is
// given.
func (w *Workspace) TaskFile() string       { return filepath.Join(w.RunDir, TaskFileName) }
func (w *Workspace) FeedbackFile() string   { return filepath.Join(w.RunDir, FeedbackFileName) }
func (w *Workspace) TrajectoryFile() string { return filepath.Join(w.RunDir, TrajectoryFileName) }
func (w *Workspace) CostFile() string       { return filepath.Join(w.RunDir, CostFileName) }
func (w *Workspace) Home() string           { return filepath.Join(w.RunDir, homeDirName) }

// CheckHistory checks that the git repository in dir holds base_commit and nothing of
// the later history: HEAD and every ref point at base, and base is the only commit.
func CheckHistory(dir, base string) error {
	r, err := git.PlainOpen(dir)
	if err != nil {
		return fmt.Errorf("not a git repository: %w", err)
	}
	head, err := r.Head()
	if err != nil || head.Hash().String() != base {
		return fmt.Errorf("HEAD is not base_commit %s", base)
	}
	refs, err := r.References()
	if err != nil {
		return err
	}
	if err := refs.ForEach(func(ref *plumbing.Reference) error {
		if ref.Type() == plumbing.HashReference && ref.Hash().String() != base {
			return fmt.Errorf("ref %s points at %s, not base_commit: the workspace would hold later history", ref.Name(), ref.Hash())
		}
		return nil
	}); err != nil {
		return err
	}
	commits, err := r.CommitObjects()
	if err != nil {
		return err
	}
	if err := commits.ForEach(func(c *object.Commit) error {
		if c.Hash.String() != base {
			return fmt.Errorf("commit %s besides base_commit: the workspace would hold other history", c.Hash)
		}
		return nil
	}); err != nil {
		return err
	}
	if remotes, err := r.Remotes(); err == nil && len(remotes) > 0 {
		return fmt.Errorf("remote %s is configured: the workspace must not reach the repository", remotes[0].Config().Name)
	}
	return nil
}

// snapshot records every file of the workspace at base_commit and its .gitignore rules.
func (w *Workspace) snapshot() error {
	w.baseline, w.trackedDirs = map[string]baseFile{}, map[string]bool{}
	var patterns []gitignore.Pattern
	err := filepath.WalkDir(w.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(w.Dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil && d.Type()&fs.ModeSymlink == 0 {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(p)
			b = []byte(target)
		}
		w.baseline[rel] = baseFile{sha256.Sum256(b), d.Type(), int64(len(b))}
		for dir := filepath.ToSlash(filepath.Dir(rel)); dir != "."; dir = filepath.ToSlash(filepath.Dir(dir)) {
			w.trackedDirs[dir] = true
		}
		if filepath.Base(rel) == ".gitignore" {
			domain := strings.Split(filepath.ToSlash(filepath.Dir(rel)), "/")
			if rel == ".gitignore" || filepath.Dir(rel) == "." {
				domain = nil
			}
			for _, line := range strings.Split(string(b), "\n") {
				line = strings.TrimRight(line, "\r")
				if strings.TrimSpace(line) != "" && !strings.HasPrefix(line, "#") {
					patterns = append(patterns, gitignore.ParsePattern(line, domain))
				}
			}
		}
		return nil
	})
	w.ignore = gitignore.NewMatcher(patterns)
	return err
}

// ErrRefused marks a workspace whose changes cannot become a prediction (the agent's
// fault, recorded as the attempt's reason).
var ErrRefused = errors.New("refused")

// walk calls fn for every file of the workspace the files object may hold: .git is left
// out, and so are new files .gitignore (at base_commit) ignores and new files under an
// install or build output directory (node_modules/, build/, target/, __pycache__/, ...).
// Files are read without following links (core/untrusted): a new or changed symbolic
// link, a hard link, a FIFO, a device, or a file over MaxFileBytes (over its size at
// base_commit, for a larger file of the project) are refused (ErrRefused, wrapped, with
// the path and what it is).
func (w *Workspace) walk(fn func(rel string, b []byte, mode fs.FileMode, tracked bool) error) error {
	return filepath.WalkDir(w.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(w.Dir, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		parts := strings.Split(rel, "/")
		if d.IsDir() {
			if rel == ".git" {
				return filepath.SkipDir
			}
			if !w.trackedDirs[rel] && (artifactDirs[d.Name()] || w.ignore.Match(parts, true)) {
				return filepath.SkipDir
			}
			return nil
		}
		base, tracked := w.baseline[rel]
		if !tracked && w.ignore.Match(parts, false) {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(p)
			if tracked && base.mode&fs.ModeSymlink != 0 && sha256.Sum256([]byte(target)) == base.sum {
				return nil // a link of the project, unchanged
			}
			return fmt.Errorf("%w: %s is a symbolic link the agent made (to %s); write files, not links", ErrRefused, rel, target)
		}
		limit := int64(MaxFileBytes)
		if tracked && base.size > limit {
			limit = base.size
		}
		b, err := untrusted.ReadFile(w.Dir, rel, limit)
		if errors.Is(err, untrusted.ErrUnsafe) {
			return fmt.Errorf("%w: %v", ErrRefused, err)
		}
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return fn(rel, b, info.Mode().Perm(), tracked)
	})
}

// Files returns the workspace's changes against base_commit as a prediction's files
// object: changed and new files with their content, deleted files as nil (with walk's
// rules). A changed file that is not UTF-8 text, or changes beyond the limits, are
// refused (ErrRefused, wrapped, with the path).
func (w *Workspace) Files() (map[string]*string, error) {
	files := map[string]*string{}
	seen := map[string]bool{}
	total := 0
	err := w.walk(func(rel string, b []byte, _ fs.FileMode, tracked bool) error {
		seen[rel] = true
		if tracked && sha256.Sum256(b) == w.baseline[rel].sum {
			return nil
		}
		if len(b) > MaxFileBytes {
			return fmt.Errorf("%w: %s is %d bytes, over %d for one environment file", ErrRefused, rel, len(b), MaxFileBytes)
		}
		if !utf8.Valid(b) || bytes.IndexByte(b, 0) >= 0 {
			return fmt.Errorf("%w: %s is not UTF-8 text", ErrRefused, rel)
		}
		total += len(b)
		if total > MaxDiffBytes || len(files) >= MaxDiffFiles {
			return fmt.Errorf("%w: the workspace changed more than %d files or %d bytes", ErrRefused, MaxDiffFiles, MaxDiffBytes)
		}
		s := string(b)
		files[rel] = &s
		return nil
	})
	if err != nil {
		return nil, err
	}
	var deleted []string
	for p, base := range w.baseline {
		if !seen[p] && base.mode&fs.ModeSymlink == 0 {
			deleted = append(deleted, p)
		}
	}
	sort.Strings(deleted)
	for _, p := range deleted {
		files[p] = nil
	}
	return files, nil
}

// Apply writes a files object into the workspace (the gold agent).
func (w *Workspace) Apply(files []schemas.File) error {
	for _, f := range files {
		if err := schemas.CheckRelPath(f.Path); err != nil {
			return err
		}
		p := filepath.Join(w.Dir, filepath.FromSlash(f.Path))
		if f.Content == nil {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(*f.Content), 0o644); err != nil {
			return err
		}
	}
	return nil
}
