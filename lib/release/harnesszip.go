package release

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/envgap/envgap/schemas"
)

// The harness zip: envgap's own source at the version that wrote the release, with its copy
// of the release's task rows. Its layout (every entry under HarnessRoot):
//
//	envgap-source/go.mod, cmd/, export/, ...   the source tree (envgap.Source) without tests
//	envgap-source/release/tasks.jsonl          the task rows (the full config)
//	envgap-source/release/release.json         HarnessManifest: corpus id, task count, ...
//
// tasks.jsonl holds one line per task, the row's canonical JSON, sorted bytewise, each line
// followed by "\n": the exact text the corpus id hashes, so the first 12 hex digits of its
// SHA-256 are the corpus id. The zip is deterministic: entries sorted by name, one fixed
// modification time, fixed modes (0755 for files starting with "#!", else 0644), so one
// release always gives the same bytes.
const (
	// HarnessPath is where an exported folder carries the harness zip.
	HarnessPath = "harness/envgap-source.zip"
	// HarnessRoot is the folder every entry of the zip sits in.
	HarnessRoot = "envgap-source/"
	// HarnessTasks and HarnessManifestPath are the release files inside the tree.
	HarnessTasks        = "release/tasks.jsonl"
	HarnessManifestPath = "release/release.json"
)

// HarnessManifest is release/release.json inside the harness zip.
type HarnessManifest struct {
	Kind     schemas.RecordKind `json:"kind"`
	CorpusID string             `json:"corpus_id"`
	Tasks    int                `json:"tasks"`
	// Repo is the Hub dataset the release was exported for.
	Repo string `json:"repo"`
	// Release is the release name given to export (--release), if any.
	Release string `json:"release,omitempty"`
}

// Harness is what a harness zip holds about its release.
type Harness struct {
	Path     string
	Manifest HarnessManifest
	Tasks    []schemas.Task
	// CorpusID is computed from the zip's task rows.
	CorpusID string
	// SourceFiles counts the entries of the source tree.
	SourceFiles int
}

// ErrNotHarness is returned by ReadHarness for a zip that is not an envgap harness zip.
var ErrNotHarness = errors.New("not an envgap harness zip")

// ReadHarness reads a harness zip: its manifest, its task rows (checked like any task rows,
// sorted by instance id) and the corpus id they give.
func ReadHarness(zipPath string) (*Harness, error) {
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		return nil, fmt.Errorf("harness %s: %w", zipPath, err)
	}
	defer zr.Close()
	h := &Harness{Path: zipPath}
	var tasks, man []byte
	hasGoMod := false
	for _, f := range zr.File {
		name, ok := strings.CutPrefix(f.Name, HarnessRoot)
		if !ok {
			return nil, fmt.Errorf("harness %s: entry %q is outside %s: %w", zipPath, f.Name, HarnessRoot, ErrNotHarness)
		}
		switch name {
		case HarnessTasks:
			tasks, err = readZipFile(f)
		case HarnessManifestPath:
			man, err = readZipFile(f)
		case "go.mod":
			hasGoMod = true
			h.SourceFiles++
		default:
			if !f.FileInfo().IsDir() {
				h.SourceFiles++
			}
		}
		if err != nil {
			return nil, fmt.Errorf("harness %s: %s: %w", zipPath, f.Name, err)
		}
	}
	switch {
	case tasks == nil:
		return nil, fmt.Errorf("harness %s: no %s%s: %w", zipPath, HarnessRoot, HarnessTasks, ErrNotHarness)
	case man == nil:
		return nil, fmt.Errorf("harness %s: no %s%s: %w", zipPath, HarnessRoot, HarnessManifestPath, ErrNotHarness)
	case !hasGoMod:
		return nil, fmt.Errorf("harness %s: no %sgo.mod (the source tree is missing): %w", zipPath, HarnessRoot, ErrNotHarness)
	}
	dec := json.NewDecoder(bytes.NewReader(man))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h.Manifest); err != nil {
		return nil, fmt.Errorf("harness %s: %s: %w", zipPath, HarnessManifestPath, err)
	}
	ts, problems, err := schemas.ReadTasks(HarnessRoot+HarnessTasks, bytes.NewReader(tasks))
	if err != nil {
		return nil, fmt.Errorf("harness %s: %w", zipPath, err)
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("harness %s: %w", zipPath, problems)
	}
	if len(ts) == 0 {
		return nil, fmt.Errorf("harness %s: %s holds no task", zipPath, HarnessTasks)
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].InstanceID < ts[j].InstanceID })
	h.Tasks = ts
	if h.CorpusID, err = schemas.CorpusID(ts); err != nil {
		return nil, fmt.Errorf("harness %s: %w", zipPath, err)
	}
	return h, nil
}

// maxZipEntry bounds what ReadHarness decompresses from one entry.
const maxZipEntry = 1 << 30

func readZipFile(f *zip.File) ([]byte, error) {
	if f.UncompressedSize64 > maxZipEntry {
		return nil, fmt.Errorf("%d bytes is over the %d-byte limit", f.UncompressedSize64, maxZipEntry)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, maxZipEntry+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxZipEntry {
		return nil, fmt.Errorf("more than %d bytes", maxZipEntry)
	}
	return b, nil
}
