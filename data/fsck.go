package data

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/envgap/envgap/schemas"
)

// Damage is one problem fsck found.
type Damage struct {
	// Kind is "damaged" (content does not hash to the name), "truncated" (an empty object
	// whose name is not the digest of nothing), "stray" (a file in objects/ that is not a
	// valid object name), "dangling-ref", "bad-ref", "dangling-memo" or "bad-memo"; the
	// catalogue's fsck adds "missing" (an object a record points at is gone) and
	// "conflict" (two candidate sets hold one instance id with different content).
	Kind   string `json:"kind"`
	Path   string `json:"path"`
	Detail string `json:"detail"`
}

func (d Damage) String() string { return fmt.Sprintf("%s %s: %s", d.Kind, d.Path, d.Detail) }

// FsckReport is what fsck checked and found.
type FsckReport struct {
	Objects   int      `json:"objects"`
	Bytes     int64    `json:"bytes"`
	Refs      int      `json:"refs"`
	Memos     int      `json:"memos"`
	TempFiles []string `json:"temp_files"`
	Damage    []Damage `json:"damage"`
}

// Clean reports whether fsck found no damage. Leftover temp files are not damage.
func (r *FsckReport) Clean() bool { return len(r.Damage) == 0 }

// Fsck re-hashes every object and checks every ref and memo entry. It never changes the
// store.
func (s *Store) Fsck(ctx context.Context) (*FsckReport, error) {
	rep := &FsckReport{TempFiles: []string{}, Damage: []Damage{}}
	objRoot := filepath.Join(s.root, "objects")
	buf := make([]byte, 1<<20)
	err := filepath.WalkDir(objRoot, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		rel, _ := filepath.Rel(s.root, p)
		if de.IsDir() {
			if p != objRoot && (filepath.Dir(p) != objRoot || !isHex(de.Name(), 2)) {
				rep.Damage = append(rep.Damage, Damage{"stray", rel, "unexpected directory in objects/"})
				return filepath.SkipDir
			}
			return nil
		}
		name := filepath.Base(filepath.Dir(p)) + de.Name()
		if filepath.Dir(filepath.Dir(p)) != objRoot || !isHex(name, 64) {
			rep.Damage = append(rep.Damage, Damage{"stray", rel, "not an object name (want objects/<2 hex>/<62 hex>)"})
			return nil
		}
		want, _ := schemas.ParseDigest(schemas.DigestPrefix + name)
		got, n, err := hashFile(p, buf)
		if err != nil {
			rep.Damage = append(rep.Damage, Damage{"damaged", rel, "unreadable: " + err.Error()})
			return nil
		}
		rep.Objects++
		rep.Bytes += n
		if got != want {
			kind := "damaged"
			detail := fmt.Sprintf("content (%d bytes) hashes to %s", n, got)
			if n == 0 {
				kind, detail = "truncated", "empty file"
			} else if s.isTruncatedJSON(p) {
				kind = "truncated"
				detail = fmt.Sprintf("ends mid-record after %d bytes", n)
			}
			rep.Damage = append(rep.Damage, Damage{kind, rel, detail})
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return rep, fmt.Errorf("fsck objects: %w", err)
	}
	if err := s.fsckRefs(ctx, rep); err != nil {
		return rep, err
	}
	if err := s.fsckMemo(ctx, rep); err != nil {
		return rep, err
	}
	entries, _ := os.ReadDir(filepath.Join(s.root, "tmp"))
	for _, e := range entries {
		rep.TempFiles = append(rep.TempFiles, filepath.Join("tmp", e.Name()))
	}
	sort.Slice(rep.Damage, func(i, j int) bool { return rep.Damage[i].Path < rep.Damage[j].Path })
	return rep, nil
}

// isTruncatedJSON reports whether a damaged object looks like a JSON record cut short.
func (s *Store) isTruncatedJSON(p string) bool {
	b, err := os.ReadFile(p)
	if err != nil || len(b) == 0 || b[0] != '{' {
		return false
	}
	_, err = schemas.CanonicalizeJSON(b)
	return err != nil && (strings.Contains(err.Error(), "unexpected end") || strings.Contains(err.Error(), "unexpected EOF"))
}

func (s *Store) fsckRefs(ctx context.Context, rep *FsckReport) error {
	base := filepath.Join(s.root, "refs")
	return filepath.WalkDir(base, func(p string, de fs.DirEntry, err error) error {
		if err != nil || de.IsDir() {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		rel, _ := filepath.Rel(base, p)
		name := filepath.ToSlash(rel)
		rep.Refs++
		d, err := s.Ref(name)
		if err != nil {
			rep.Damage = append(rep.Damage, Damage{"bad-ref", filepath.Join("refs", rel), err.Error()})
			return nil
		}
		if !s.Has(d) {
			rep.Damage = append(rep.Damage, Damage{"dangling-ref", filepath.Join("refs", rel), "points at missing object " + d.String()})
		}
		return nil
	})
}

func (s *Store) fsckMemo(ctx context.Context, rep *FsckReport) error {
	base := filepath.Join(s.root, "memo")
	return filepath.WalkDir(base, func(p string, de fs.DirEntry, err error) error {
		if err != nil || de.IsDir() {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		rel, _ := filepath.Rel(s.root, p)
		rep.Memos++
		b, err := os.ReadFile(p)
		if err != nil {
			rep.Damage = append(rep.Damage, Damage{"bad-memo", rel, err.Error()})
			return nil
		}
		d, err := schemas.ParseDigest(strings.TrimSpace(string(b)))
		if err != nil || !isHex(de.Name(), 64) {
			rep.Damage = append(rep.Damage, Damage{"bad-memo", rel, "not a memo entry"})
			return nil
		}
		if !s.Has(d) {
			rep.Damage = append(rep.Damage, Damage{"dangling-memo", rel, "result object missing: " + d.String()})
		}
		return nil
	})
}

func hashFile(p string, buf []byte) (schemas.Digest, int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return schemas.Digest{}, 0, err
	}
	defer f.Close()
	h := schemas.NewHasher()
	n, err := io.CopyBuffer(h, f, buf)
	return h.Digest(), n, err
}

func isHex(s string, n int) bool {
	if len(s) != n || strings.ToLower(s) != s {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}
