package submit

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/harness/eval"
	"github.com/envgap/envgap/schemas"
	"gopkg.in/yaml.v3"
)

// The bundle's layout: metadata.yaml, and one result folder a split under results/, each
// with the predictions of its attempts beside its own files.
const (
	ResultsDir      = "results"
	PredictionsFile = "predictions.jsonl"
)

// PredictionLine is one line of a bundle's predictions.jsonl: the prediction of one result
// line (the same instance id, run and attempt), in the order of results.jsonl.
type PredictionLine struct {
	InstanceID string         `json:"instance_id"`
	Run        int            `json:"run"`
	Attempt    int            `json:"attempt"`
	Digest     schemas.Digest `json:"digest"`
	// Prediction is the prediction scored (files, trajectory verbatim, cost); nil when the
	// harness stopped the attempt before scoring it and kept no prediction (Missing says
	// why).
	Prediction *schemas.Prediction `json:"prediction"`
	Missing    string              `json:"missing,omitempty"`
}

// PrepareOptions configure Prepare.
type PrepareOptions struct {
	// Results are result folders of envgap eval or envgap run, one a split.
	Results []string
	Meta    *Meta
	// Store is where the folders were scored: it holds each attempt's prediction.
	Store data.ObjectReader
	// Out is the bundle to write: a folder (new or empty), or a file ending .tar.gz.
	Out string
	// Now gives the bundle's date (UTC).
	Now time.Time
}

// Prepare writes a bundle (see the package doc and docs/submit.md) and returns its
// metadata. Folders that cannot make one entry (a subset, two folders of one split,
// another corpus or setting between them, a prediction the store lacks) are refused, each
// named.
func Prepare(o PrepareOptions) (*Metadata, error) {
	if len(o.Results) == 0 {
		return nil, errors.New("give at least one result folder")
	}
	md := &Metadata{SchemaVersion: MetadataVersion, Meta: *o.Meta, Date: o.Now.UTC().Format(time.DateOnly)}
	md.Setting.Label = o.Meta.Label
	type folder struct {
		dir string
		f   *eval.Folder
	}
	var folders []folder
	seen := map[string]string{}
	for i, dir := range o.Results {
		f, err := eval.ReadFolder(dir)
		if err != nil {
			return nil, err
		}
		s := f.Summary
		if s.Subset != nil {
			return nil, fmt.Errorf("result folder %s: a subset (%s), not a leaderboard entry: score the whole split", dir, s.Subset.Label(s.Tasks))
		}
		if prev, ok := seen[s.Split]; ok {
			return nil, fmt.Errorf("result folders %s and %s are both of split %s: a bundle has one folder a split", prev, dir, s.Split)
		}
		seen[s.Split] = dir
		set := settingOf(s)
		set.Label = o.Meta.Label
		if i == 0 {
			md.Setting, md.CorpusID = set, s.CorpusID
		} else {
			if s.CorpusID != md.CorpusID {
				return nil, fmt.Errorf("result folder %s was scored on corpus %s, %s on %s: one bundle is one release", dir, s.CorpusID, o.Results[0], md.CorpusID)
			}
			if set != md.Setting {
				return nil, fmt.Errorf("result folder %s has setting %q, %s %q: one bundle is one setting", dir, set.Text(), o.Results[0], md.Setting.Text())
			}
		}
		folders = append(folders, folder{dir, f})
	}
	sort.Slice(folders, func(i, j int) bool { return folders[i].f.Summary.Split < folders[j].f.Summary.Split })

	root, finish, err := outDir(o.Out)
	if err != nil {
		return nil, err
	}
	for _, fo := range folders {
		s := fo.f.Summary
		rel := path.Join(ResultsDir, s.Split)
		dst := filepath.Join(root, filepath.FromSlash(rel))
		if err := copyTree(fo.dir, dst); err != nil {
			return nil, finish(err)
		}
		if err := writePredictions(fo.dir, fo.f.Results, o.Store, filepath.Join(dst, PredictionsFile)); err != nil {
			return nil, finish(err)
		}
		md.Results = append(md.Results, Entry{Folder: rel, Split: s.Split, Agent: s.Agent, Tasks: s.Tasks, ScoredOn: s.ScoredOn})
	}
	b, err := yaml.Marshal(md)
	if err != nil {
		return nil, finish(err)
	}
	if err := os.WriteFile(filepath.Join(root, MetadataFile), b, 0o644); err != nil {
		return nil, finish(err)
	}
	return md, finish(nil)
}

// settingOf is a result folder's setting, as its summary records it.
func settingOf(s schemas.EvalSummary) Setting {
	set := Setting{Mode: string(s.Mode), K: s.K, MaxAttempts: s.MaxAttempts}
	if s.AttemptTimeoutS > 0 {
		set.AttemptTimeout = (time.Duration(s.AttemptTimeoutS) * time.Second).String()
	}
	return set
}

// isArchive reports whether a bundle path names a .tar.gz.
func isArchive(p string) bool {
	return strings.HasSuffix(p, ".tar.gz") || strings.HasSuffix(p, ".tgz")
}

// outDir returns the folder to write the bundle into, and what finishes it: for a
// .tar.gz, a temporary folder packed into the archive and removed.
func outDir(out string) (string, func(error) error, error) {
	if out == "" {
		return "", nil, errors.New("give --out BUNDLE (a new folder, or a file ending .tar.gz)")
	}
	if !isArchive(out) {
		if ents, err := os.ReadDir(out); err == nil && len(ents) > 0 {
			return "", nil, fmt.Errorf("--out %s is not empty: give a new folder", out)
		} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", nil, fmt.Errorf("--out %s: %w", out, err)
		}
		if err := os.MkdirAll(out, 0o755); err != nil {
			return "", nil, err
		}
		return out, func(err error) error { return err }, nil
	}
	if _, err := os.Lstat(out); err == nil {
		return "", nil, fmt.Errorf("--out %s exists: give a new file", out)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(out), ".envgap-bundle-*")
	if err != nil {
		return "", nil, err
	}
	return tmp, func(err error) error {
		defer os.RemoveAll(tmp)
		if err != nil {
			return err
		}
		return writeTarGz(tmp, out)
	}, nil
}

// copyTree copies a result folder: regular files and folders only (a link or a special
// file is refused, never followed).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case !d.Type().IsRegular():
			return fmt.Errorf("result folder %s: %s is not a regular file (%s): a bundle holds files only", src, rel, d.Type())
		}
		return copyFile(p, to)
	})
}

// copyFile copies one regular file, opened without following a link or blocking on a
// FIFO (a link or a special file put in its place after the walk saw it is refused).
func copyFile(src, dst string) error {
	in, err := os.OpenFile(src, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return fmt.Errorf("%s: %w (a bundle holds regular files only)", src, err)
	}
	defer in.Close()
	if fi, err := in.Stat(); err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file: a bundle holds regular files only", src)
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// writePredictions writes the prediction of each result line, read from the store by
// its digest.
func writePredictions(dir string, results []schemas.EvalResult, st data.ObjectReader, dst string) error {
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for i := range results {
		r := &results[i]
		line := PredictionLine{InstanceID: r.InstanceID, Run: r.Run, Attempt: r.Attempt, Digest: r.Prediction}
		var p schemas.Prediction
		err := st.GetJSON(r.Prediction, &p)
		switch {
		case err == nil:
			if d, derr := schemas.DigestOf(&p); derr != nil || d != r.Prediction {
				f.Close()
				return fmt.Errorf("result folder %s: %s run %d attempt %d: the store's prediction %s does not match its digest", dir, r.InstanceID, r.Run, r.Attempt, r.Prediction)
			}
			line.Prediction = &p
		case errors.Is(err, data.ErrNotFound) && StoppedBeforeScoring(r):
			line.Missing = "the harness stopped the attempt before scoring it: " + r.Reason
		default:
			f.Close()
			return fmt.Errorf("result folder %s: %s run %d attempt %d: prediction %s: %w (give --store where the folder was scored)", dir, r.InstanceID, r.Run, r.Attempt, r.Prediction, err)
		}
		if err := enc.Encode(line); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// StoppedBeforeScoring reports whether an attempt of envgap run was stopped by the harness
// before the evaluation ran it (the agent timed out, or wrote what the harness refuses):
// not resolved, no step run.
func StoppedBeforeScoring(r *schemas.EvalResult) bool {
	return r.Agent != nil && len(r.Steps) == 0 && !r.Resolved && r.Reason != "" &&
		(r.Status == schemas.EvalRejected || r.Status == schemas.EvalUnresolved)
}

// writeTarGz packs the folder dir into a new .tar.gz at out: folders and regular files,
// names relative and slash-separated, sorted, times zero.
func writeTarGz(dir, out string) error {
	var names []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		names = append(names, p)
		return nil
	})
	if err != nil {
		return err
	}
	sort.Strings(names)
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	zw := gzip.NewWriter(f)
	tw := tar.NewWriter(zw)
	fail := func(err error) error {
		f.Close()
		os.Remove(out)
		return err
	}
	for _, p := range names {
		fi, err := os.Lstat(p)
		if err != nil {
			return fail(err)
		}
		rel, _ := filepath.Rel(dir, p)
		h := &tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, ModTime: time.Unix(0, 0), Format: tar.FormatPAX}
		if fi.IsDir() {
			h.Typeflag, h.Name, h.Mode = tar.TypeDir, h.Name+"/", 0o755
			if err := tw.WriteHeader(h); err != nil {
				return fail(err)
			}
			continue
		}
		h.Typeflag, h.Size = tar.TypeReg, fi.Size()
		if err := tw.WriteHeader(h); err != nil {
			return fail(err)
		}
		in, err := os.Open(p)
		if err != nil {
			return fail(err)
		}
		_, err = io.Copy(tw, in)
		in.Close()
		if err != nil {
			return fail(err)
		}
	}
	if err := tw.Close(); err != nil {
		return fail(err)
	}
	if err := zw.Close(); err != nil {
		return fail(err)
	}
	return f.Close()
}

// Limits bound what Open reads of a bundle.
type Limits struct {
	File  int64 // bytes of one file
	Total int64 // bytes of every file together
	Files int   // files and folders
}

// DefaultLimits are Open's bounds: 1 GiB a file, 16 GiB in all, 4 million entries.
var DefaultLimits = Limits{File: 1 << 30, Total: 16 << 30, Files: 4_000_000}

// Bundle is a bundle opened for reading.
type Bundle struct {
	// Dir is the bundle's folder: the folder given, or where a .tar.gz was unpacked.
	Dir      string
	Metadata *Metadata
	// MetadataErr says why metadata.yaml could not be read (Metadata is nil then).
	MetadataErr error
	cleanup     func()
}

// Close removes what Open unpacked.
func (b *Bundle) Close() error {
	if b.cleanup != nil {
		b.cleanup()
	}
	return nil
}

// Folders are the bundle's result folders (its results/* folders, sorted).
func (b *Bundle) Folders() ([]string, error) {
	ents, err := os.ReadDir(filepath.Join(b.Dir, ResultsDir))
	if err != nil {
		return nil, fmt.Errorf("bundle: %w", err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, filepath.Join(b.Dir, ResultsDir, e.Name()))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("bundle %s: no result folder under %s/", b.Dir, ResultsDir)
	}
	return out, nil
}

// IsBundle reports whether p looks like a bundle: a .tar.gz, or a folder with metadata.yaml.
func IsBundle(p string) bool {
	if isArchive(p) {
		return true
	}
	fi, err := os.Lstat(filepath.Join(p, MetadataFile))
	return err == nil && fi.Mode().IsRegular()
}

// Open opens a bundle: a folder, or a .tar.gz unpacked into a temporary folder (removed by
// Close). A bundle is someone else's: a link, a device, a name that is absolute or climbs
// out with "..", a file over lim.File, more than lim.Total bytes or lim.Files entries is
// refused, and nothing of it is followed.
func Open(p string, lim Limits) (*Bundle, error) {
	b := &Bundle{Dir: p}
	if isArchive(p) {
		tmp, err := os.MkdirTemp("", "envgap-bundle-*")
		if err != nil {
			return nil, err
		}
		b.Dir, b.cleanup = tmp, func() { os.RemoveAll(tmp) }
		if err := unpack(p, tmp, lim); err != nil {
			b.Close()
			return nil, err
		}
	} else if err := checkTree(p, lim); err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(filepath.Join(b.Dir, MetadataFile))
	if err != nil {
		b.MetadataErr = fmt.Errorf("bundle %s: %w (envgap submit prepare writes it)", p, err)
	} else if b.Metadata, err = ReadMetadata(raw); err != nil {
		b.MetadataErr = err
	}
	return b, nil
}

// checkTree refuses a bundle folder holding anything but folders and regular files, or
// over the limits (walked without following links).
func checkTree(dir string, lim Limits) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("bundle %s: not a folder or a .tar.gz", dir)
	}
	var total int64
	n := 0
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		n++
		if n > lim.Files {
			return fmt.Errorf("bundle %s: more than %d entries", dir, lim.Files)
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("bundle %s: %s is not a regular file (%s): a bundle holds files and folders only", dir, p, d.Type())
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Size() > lim.File {
			return fmt.Errorf("bundle %s: %s is %d bytes, over the bound of %d", dir, p, info.Size(), lim.File)
		}
		if total += info.Size(); total > lim.Total {
			return fmt.Errorf("bundle %s: over %d bytes in all", dir, lim.Total)
		}
		return nil
	})
}

// unpack extracts a .tar.gz bundle into dir: folders and regular files only, each name
// clean, relative and inside dir, within the limits.
func unpack(archive, dir string, lim Limits) error {
	f, err := os.Open(archive)
	if err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("bundle %s: not a gzip file: %w", archive, err)
	}
	tr := tar.NewReader(zr)
	var total int64
	for n := 1; ; n++ {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("bundle %s: %w", archive, err)
		}
		if n > lim.Files {
			return fmt.Errorf("bundle %s: more than %d entries", archive, lim.Files)
		}
		name := strings.TrimSuffix(h.Name, "/")
		if name == "" || strings.HasPrefix(name, "/") || strings.Contains(name, "\\") || path.Clean(name) != name || name == ".." || strings.HasPrefix(name, "../") || strings.Contains(name, "\x00") {
			return fmt.Errorf("bundle %s: entry %q is not a clean relative name inside the bundle", archive, h.Name)
		}
		to := filepath.Join(dir, filepath.FromSlash(name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(to, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if h.Size > lim.File {
				return fmt.Errorf("bundle %s: %s is %d bytes, over the bound of %d", archive, name, h.Size, lim.File)
			}
			if total += h.Size; total > lim.Total {
				return fmt.Errorf("bundle %s: over %d bytes in all", archive, lim.Total)
			}
			if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
				return err
			}
			// O_EXCL: a name given twice is refused, and nothing unpacked earlier is a link.
			out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			if err != nil {
				return fmt.Errorf("bundle %s: %s: %w", archive, name, err)
			}
			w, err := io.Copy(out, io.LimitReader(tr, h.Size+1))
			if cerr := out.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return fmt.Errorf("bundle %s: %s: %w", archive, name, err)
			}
			if w != h.Size {
				return fmt.Errorf("bundle %s: %s holds %d bytes, its header says %d", archive, name, w, h.Size)
			}
		default:
			return fmt.Errorf("bundle %s: %s is a %s, not a file or folder: links and special files are refused", archive, name, typeName(h.Typeflag))
		}
	}
}

func typeName(t byte) string {
	switch t {
	case tar.TypeSymlink:
		return "symbolic link"
	case tar.TypeLink:
		return "hard link"
	case tar.TypeChar, tar.TypeBlock:
		return "device"
	case tar.TypeFifo:
		return "FIFO"
	}
	return fmt.Sprintf("entry of type %q", t)
}

// ReadPredictions reads a bundle folder's predictions.jsonl.
func ReadPredictions(p string) ([]PredictionLine, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	var out []PredictionLine
	for i, line := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var l PredictionLine
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			return nil, fmt.Errorf("%s line %d: %v", p, i+1, err)
		}
		out = append(out, l)
	}
	return out, nil
}

// Folder is a result folder to read (Dir) and the name to show it by.
type Folder struct{ Name, Dir string }

// ResultFolders expands paths that are result folders or bundles (IsBundle: a .tar.gz,
// or a folder with metadata.yaml) into result folders: a bundle gives each of its
// results/<split> folders, named by the bundle's path as given and the folder's path
// inside it. Close removes what was unpacked; call it when done, also after an error.
func ResultFolders(paths []string, lim Limits) ([]Folder, func(), error) {
	var opened []*Bundle
	closeAll := func() {
		for _, b := range opened {
			b.Close()
		}
	}
	var out []Folder
	for _, p := range paths {
		if !IsBundle(p) {
			out = append(out, Folder{Name: p, Dir: p})
			continue
		}
		b, err := Open(p, lim)
		if err != nil {
			return nil, closeAll, err
		}
		opened = append(opened, b)
		dirs, err := b.Folders()
		if err != nil {
			return nil, closeAll, err
		}
		for _, d := range dirs {
			out = append(out, Folder{Name: path.Join(filepath.ToSlash(p), ResultsDir, filepath.Base(d)), Dir: d})
		}
	}
	return out, closeAll, nil
}
