package data

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/envgap/envgap/schemas"
)

// ErrCorrupt is returned when an object's bytes do not hash to its name.
var ErrCorrupt = errors.New("object is damaged: its content does not match its digest")

// ErrNotFound is returned for a missing object, ref or memo entry.
var ErrNotFound = errors.New("not found")

// EnvStore is the environment variable that names the store directory.
const EnvStore = "ENVGAP_STORE"

// DefaultDir is the store directory used when neither --store nor ENVGAP_STORE is given,
// relative to the working directory (git-ignored).
const DefaultDir = "data/store"

// Store is a content-addressed store in one directory. It is safe for concurrent use by
// several goroutines and several processes.
type Store struct {
	root string
	now  func() time.Time
}

// Open opens (creating if needed) the store in dir.
func Open(dir string) (*Store, error) {
	if dir == "" {
		return nil, errors.New("open store: empty directory name")
	}
	for _, sub := range []string{"objects", "refs", "memo", "logs", "tmp", "claims"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return nil, fmt.Errorf("open store %s: %w", dir, err)
		}
	}
	return &Store{root: dir, now: time.Now}, nil
}

// Dir returns the store's directory.
func (s *Store) Dir() string { return s.root }

func (s *Store) objectPath(d schemas.Digest) string {
	h := d.Hex()
	return filepath.Join(s.root, "objects", h[:2], h[2:])
}

// Has reports whether the object d is present (without checking its content).
func (s *Store) Has(d schemas.Digest) bool {
	_, err := os.Stat(s.objectPath(d))
	return err == nil
}

// Put stores b and returns its digest. Storing bytes that are already present does
// nothing and returns the same digest.
func (s *Store) Put(b []byte) (schemas.Digest, error) {
	d := schemas.Hash(b)
	if s.Has(d) {
		return d, nil
	}
	return d, s.writeObject(d, bytes.NewReader(b), int64(len(b)))
}

// PutReader stores everything read from r, hashing while it writes, so large blobs never
// sit in memory. It returns the digest and the size.
func (s *Store) PutReader(r io.Reader) (schemas.Digest, int64, error) {
	return s.putReader(r, nil)
}

// PutReaderExpect is PutReader for content whose digest is known: when the bytes do not
// hash to want, nothing is stored and the error wraps ErrCorrupt.
func (s *Store) PutReaderExpect(r io.Reader, want schemas.Digest) (int64, error) {
	_, n, err := s.putReader(r, &want)
	return n, err
}

func (s *Store) putReader(r io.Reader, want *schemas.Digest) (schemas.Digest, int64, error) {
	tmp, err := os.CreateTemp(filepath.Join(s.root, "tmp"), "put-*")
	if err != nil {
		return schemas.Digest{}, 0, fmt.Errorf("store put: %w", err)
	}
	defer os.Remove(tmp.Name())
	h := schemas.NewHasher()
	n, err := io.Copy(io.MultiWriter(tmp, h), r)
	if err != nil {
		tmp.Close()
		return schemas.Digest{}, 0, fmt.Errorf("store put: %w", err)
	}
	d := h.Digest()
	if want != nil && d != *want {
		tmp.Close()
		return d, n, fmt.Errorf("store put: content hashes to %s, not %s: %w", d, *want, ErrCorrupt)
	}
	if s.Has(d) {
		tmp.Close()
		return d, n, nil
	}
	if err := commitTemp(tmp, s.objectPath(d), 0o444, true); err != nil {
		return d, n, fmt.Errorf("store put %s: %w", d, err)
	}
	return d, n, nil
}

// commitTemp makes a written temp file dst: sync, close, set its mode, rename it into place
// (creating dst's directory when needed) and, when syncDst is set, sync that directory so
// the rename itself is durable.
func commitTemp(tmp *os.File, dst string, mode os.FileMode, syncDst bool) error {
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), mode); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.Rename(tmp.Name(), dst); err != nil {
			return err
		}
	}
	if syncDst {
		return syncDir(filepath.Dir(dst))
	}
	return nil
}

// writeTemp writes size bytes from r to a temp file and commits it to dst with mode;
// syncDst as for commitTemp.
func (s *Store) writeTemp(dst string, r io.Reader, size int64, mode os.FileMode, syncDst bool) error {
	tmp, err := os.CreateTemp(filepath.Join(s.root, "tmp"), "w-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	n, err := io.Copy(tmp, r)
	if err != nil || n != size {
		tmp.Close()
		return fmt.Errorf("wrote %d of %d bytes: %v", n, size, err)
	}
	return commitTemp(tmp, dst, mode, syncDst)
}

// writeSmall replaces a small mutable file (a ref or memo entry) atomically and durably.
func (s *Store) writeSmall(dst string, b []byte) error {
	return s.writeTemp(dst, bytes.NewReader(b), int64(len(b)), 0o644, true)
}

// PutJSON stores the canonical JSON of v and returns its digest.
func (s *Store) PutJSON(v any) (schemas.Digest, error) {
	b, err := schemas.Canonical(v)
	if err != nil {
		return schemas.Digest{}, fmt.Errorf("store put: %w", err)
	}
	return s.Put(b)
}

// Batch writes many objects and syncs their directories once, at Commit: the objects are
// durable only after Commit returns. Refs to them must be set after Commit.
type Batch struct {
	s    *Store
	dirs map[string]bool
}

// NewBatch starts a batch of writes.
func (s *Store) NewBatch() *Batch { return &Batch{s: s, dirs: map[string]bool{}} }

// Put stores b within the batch.
func (b *Batch) Put(p []byte) (schemas.Digest, error) {
	d := schemas.Hash(p)
	if b.s.Has(d) {
		return d, nil
	}
	dst := b.s.objectPath(d)
	if err := b.s.writeTemp(dst, bytes.NewReader(p), int64(len(p)), 0o444, false); err != nil {
		return d, fmt.Errorf("store put %s: %w", d, err)
	}
	b.dirs[filepath.Dir(dst)] = true
	return d, nil
}

// PutJSON stores the canonical JSON of v within the batch.
func (b *Batch) PutJSON(v any) (schemas.Digest, error) {
	p, err := schemas.Canonical(v)
	if err != nil {
		return schemas.Digest{}, fmt.Errorf("store put: %w", err)
	}
	return b.Put(p)
}

// Commit makes every object of the batch durable.
func (b *Batch) Commit() error {
	for dir := range b.dirs {
		if err := syncDir(dir); err != nil {
			return err
		}
	}
	b.dirs = map[string]bool{}
	return nil
}

func (s *Store) writeObject(d schemas.Digest, r io.Reader, size int64) error {
	if err := s.writeTemp(s.objectPath(d), r, size, 0o444, true); err != nil {
		return fmt.Errorf("store put %s: %w", d, err)
	}
	return nil
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("store sync dir: %w", err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("store sync dir: %w", err)
	}
	return nil
}

// Get returns the bytes of object d after checking that they hash to d.
func (s *Store) Get(d schemas.Digest) ([]byte, error) {
	b, err := os.ReadFile(s.objectPath(d))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("object %s: %w", d, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("object %s: %w", d, err)
	}
	if schemas.Hash(b) != d {
		return nil, fmt.Errorf("object %s: %w", d, ErrCorrupt)
	}
	return b, nil
}

// GetJSON reads object d and decodes it into v.
func (s *Store) GetJSON(d schemas.Digest, v any) error {
	b, err := s.Get(d)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("object %s: decoding: %w", d, err)
	}
	return nil
}

// OpenObject streams object d. The reader checks the hash as it goes and returns
// ErrCorrupt instead of io.EOF when the content does not match.
func (s *Store) OpenObject(d schemas.Digest) (io.ReadCloser, error) {
	f, err := os.Open(s.objectPath(d))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("object %s: %w", d, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("object %s: %w", d, err)
	}
	return &verifyingReader{f: f, h: schemas.NewHasher(), want: d}, nil
}

type verifyingReader struct {
	f    *os.File
	h    *schemas.Hasher
	want schemas.Digest
}

func (r *verifyingReader) Read(p []byte) (int, error) {
	n, err := r.f.Read(p)
	r.h.Write(p[:n])
	if errors.Is(err, io.EOF) && r.h.Digest() != r.want {
		return n, fmt.Errorf("object %s: %w", r.want, ErrCorrupt)
	}
	return n, err
}

func (r *verifyingReader) Close() error { return r.f.Close() }

var refNameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@+-]*(/[A-Za-z0-9][A-Za-z0-9._@+-]*)*$`)

// CheckRefName checks that name is a valid ref name: slash-separated parts of letters,
// digits and ._@+- that do not start with a dot or dash.
func CheckRefName(name string) error {
	if !refNameRe.MatchString(name) || strings.Contains(name, "..") {
		return fmt.Errorf("ref name %q: use slash-separated parts of letters, digits and ._@+-", name)
	}
	return nil
}

// setRef points ref name at d and logs the change; the caller holds the store's lock.
func (s *Store) setRef(name string, d schemas.Digest) error {
	if err := CheckRefName(name); err != nil {
		return err
	}
	if !s.Has(d) {
		return fmt.Errorf("set ref %s: object %s: %w", name, d, ErrNotFound)
	}
	old, _ := s.Ref(name)
	if old == d {
		return nil
	}
	if err := s.writeSmall(filepath.Join(s.root, "refs", filepath.FromSlash(name)), []byte(d.String()+"\n")); err != nil {
		return fmt.Errorf("set ref %s: %w", name, err)
	}
	return s.logRef(name, old, d)
}

func (s *Store) logRef(name string, old, d schemas.Digest) error {
	entry, _ := json.Marshal(struct {
		Time string         `json:"time"`
		Ref  string         `json:"ref"`
		Old  schemas.Digest `json:"old"`
		New  schemas.Digest `json:"new"`
	}{s.now().UTC().Format(time.RFC3339Nano), name, old, d})
	f, err := os.OpenFile(filepath.Join(s.root, "logs", "refs.jsonl"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("ref log: %w", err)
	}
	defer f.Close()
	if _, err := f.Write(append(entry, '\n')); err != nil {
		return fmt.Errorf("ref log: %w", err)
	}
	return nil
}

// Ref returns the digest ref name points at, or ErrNotFound.
func (s *Store) Ref(name string) (schemas.Digest, error) {
	if err := CheckRefName(name); err != nil {
		return schemas.Digest{}, err
	}
	b, err := os.ReadFile(filepath.Join(s.root, "refs", filepath.FromSlash(name)))
	if errors.Is(err, fs.ErrNotExist) {
		return schemas.Digest{}, fmt.Errorf("ref %s: %w", name, ErrNotFound)
	}
	if err != nil {
		return schemas.Digest{}, fmt.Errorf("ref %s: %w", name, err)
	}
	d, err := schemas.ParseDigest(strings.TrimSpace(string(b)))
	if err != nil {
		return schemas.Digest{}, fmt.Errorf("ref %s is damaged: %w", name, err)
	}
	return d, nil
}

// RefEntry is one ref and what it points at.
type RefEntry struct {
	Name   string
	Digest schemas.Digest
}

// Refs lists the refs whose names start with prefix (e.g. "verdicts/"), sorted by name.
func (s *Store) Refs(prefix string) ([]RefEntry, error) {
	base := filepath.Join(s.root, "refs")
	start := base
	if dir := prefix[:strings.LastIndex(prefix, "/")+1]; dir != "" {
		start = filepath.Join(base, filepath.FromSlash(dir))
	}
	var out []RefEntry
	err := walkFiles(start, func(p string) error {
		rel, _ := filepath.Rel(base, p)
		name := filepath.ToSlash(rel)
		if !strings.HasPrefix(name, prefix) {
			return nil
		}
		d, err := s.Ref(name)
		if err != nil {
			return err
		}
		out = append(out, RefEntry{Name: name, Digest: d})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list refs %s: %w", prefix, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

var stageRe = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

func (s *Store) memoPath(stage string, key schemas.Digest) (string, error) {
	if !stageRe.MatchString(stage) {
		return "", fmt.Errorf("memo stage %q: use lower-case letters, digits and -", stage)
	}
	return filepath.Join(s.root, "memo", stage, key.Hex()), nil
}

// Memo returns the result recorded for a stage key, or ErrNotFound. A result whose object
// is missing counts as not found.
func (s *Store) Memo(stage string, key schemas.Digest) (schemas.Digest, error) {
	p, err := s.memoPath(stage, key)
	if err != nil {
		return schemas.Digest{}, err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return schemas.Digest{}, ErrNotFound
	}
	if err != nil {
		return schemas.Digest{}, fmt.Errorf("memo %s/%s: %w", stage, key.Short(), err)
	}
	d, err := schemas.ParseDigest(strings.TrimSpace(string(b)))
	if err != nil || !s.Has(d) {
		return schemas.Digest{}, ErrNotFound
	}
	return d, nil
}

// SetMemo records that stage key gives result (which must be stored).
func (s *Store) SetMemo(stage string, key, result schemas.Digest) error {
	p, err := s.memoPath(stage, key)
	if err != nil {
		return err
	}
	if !s.Has(result) {
		return fmt.Errorf("memo %s: result %s: %w", stage, result, ErrNotFound)
	}
	if err := s.writeSmall(p, []byte(result.String()+"\n")); err != nil {
		return fmt.Errorf("memo %s/%s: %w", stage, key.Short(), err)
	}
	return nil
}

// ErrDangling is returned (wrapped in a *DanglingError) when a ref exists but the object
// it points at is gone. It is not ErrNotFound: a lost record is damage, never "none".
var ErrDangling = errors.New("ref points at a missing object")

// DanglingError names a ref whose object is gone.
type DanglingError struct {
	Ref    string
	Object schemas.Digest
}

func (e *DanglingError) Error() string {
	return fmt.Sprintf("ref %s points at %s, which is missing from the store (run envgap store fsck)", e.Ref, e.Object)
}

func (e *DanglingError) Unwrap() error { return ErrDangling }

// RefJSON decodes the object ref name points at into v and returns its digest. It
// returns ErrNotFound only when the ref does not exist; a ref whose object is missing is
// a *DanglingError.
func (s *Store) RefJSON(name string, v any) (schemas.Digest, error) {
	d, err := s.Ref(name)
	if err != nil {
		return d, err
	}
	if err := s.GetJSON(d, v); err != nil {
		if errors.Is(err, ErrNotFound) {
			return d, &DanglingError{Ref: name, Object: d}
		}
		return d, fmt.Errorf("ref %s: %w", name, err)
	}
	return d, nil
}

// MemoEntry is one memo entry: a stage key and its result.
type MemoEntry struct {
	Stage  string
	Key    string // hex
	Result schemas.Digest
}

// MemoEntries lists every readable memo entry (fsck reports the others), by stage and key.
func (s *Store) MemoEntries() ([]MemoEntry, error) {
	base := filepath.Join(s.root, "memo")
	var out []MemoEntry
	err := walkFiles(base, func(p string) error {
		rel, _ := filepath.Rel(base, p)
		stage, key, ok := strings.Cut(filepath.ToSlash(rel), "/")
		if !ok || strings.Contains(key, "/") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		d, err := schemas.ParseDigest(strings.TrimSpace(string(b)))
		if err != nil {
			return nil
		}
		out = append(out, MemoEntry{Stage: stage, Key: key, Result: d})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list memo: %w", err)
	}
	return out, nil
}

// walkFiles calls fn for every file under dir (none when dir does not exist).
func walkFiles(dir string, fn func(p string) error) error {
	err := filepath.WalkDir(dir, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if de.IsDir() {
			return nil
		}
		return fn(p)
	})
	return err
}
