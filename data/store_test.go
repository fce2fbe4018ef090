package data

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/envgap/envgap/schemas"
)

func newStore(t testing.TB) *Store {
	t.Helper()
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestPutGetAndReadOnly(t *testing.T) {
	s := newStore(t)
	d, err := s.Put([]byte("hello"))
	if err != nil {
		t.Fatal(err)
	}
	if d != schemas.Hash([]byte("hello")) {
		t.Fatalf("digest %s", d)
	}
	b, err := s.Get(d)
	if err != nil || string(b) != "hello" {
		t.Fatalf("get: %q %v", b, err)
	}
	fi, _ := os.Stat(s.objectPath(d))
	if fi.Mode().Perm()&0o222 != 0 {
		t.Errorf("object is writable: %v", fi.Mode())
	}
	d2, n, err := s.PutReader(strings.NewReader("hello"))
	if err != nil || d2 != d || n != 5 {
		t.Fatalf("put reader: %s %d %v", d2, n, err)
	}
	if _, err := s.Get(schemas.Hash([]byte("absent"))); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing object: %v", err)
	}
	rc, err := s.OpenObject(d)
	if err != nil {
		t.Fatal(err)
	}
	all, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || string(all) != "hello" {
		t.Fatalf("stream: %q %v", all, err)
	}
}

func flip(t *testing.T, p string, trunc bool) {
	t.Helper()
	os.Chmod(p, 0o644)
	b, _ := os.ReadFile(p)
	if trunc {
		b = b[:len(b)/2]
	} else {
		b[len(b)/2] ^= 0x01
	}
	if err := os.WriteFile(p, b, 0o444); err != nil {
		t.Fatal(err)
	}
}

func TestCorruptionIsDetected(t *testing.T) {
	s := newStore(t)
	rec := map[string]any{"kind": "x", "items": []int{1, 2, 3, 4, 5, 6, 7, 8, 9}}
	dj, _ := s.PutJSON(rec)
	db, _ := s.Put([]byte(strings.Repeat("blob ", 1000)))
	dOK, _ := s.Put([]byte("fine"))
	if err := s.SetRef("things/ok", dOK); err != nil {
		t.Fatal(err)
	}
	if err := s.SetMemo("verify", schemas.Hash([]byte("k")), dOK); err != nil {
		t.Fatal(err)
	}
	rep, err := s.Fsck(context.Background())
	if err != nil || !rep.Clean() || rep.Objects != 3 || rep.Refs != 1 || rep.Memos != 1 {
		t.Fatalf("fresh store: %+v %v", rep, err)
	}
	flip(t, s.objectPath(db), false)
	flip(t, s.objectPath(dj), true)
	os.WriteFile(filepath.Join(s.Dir(), "objects", "zz-stray"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(s.Dir(), "tmp", "obj-123"), []byte("half"), 0o644)
	if _, err := s.Get(db); !errors.Is(err, ErrCorrupt) {
		t.Errorf("get of flipped object: %v", err)
	}
	rc, _ := s.OpenObject(db)
	if _, err := io.ReadAll(rc); !errors.Is(err, ErrCorrupt) {
		t.Errorf("stream of flipped object: %v", err)
	}
	rep, err = s.Fsck(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{}
	for _, d := range rep.Damage {
		kinds[d.Path] = d.Kind
	}
	rel := func(d schemas.Digest) string { r, _ := filepath.Rel(s.Dir(), s.objectPath(d)); return r }
	if kinds[rel(db)] != "damaged" || kinds[rel(dj)] != "truncated" || kinds[filepath.Join("objects", "zz-stray")] != "stray" {
		t.Errorf("damage: %+v", rep.Damage)
	}
	if len(rep.TempFiles) != 1 {
		t.Errorf("temp files: %v", rep.TempFiles)
	}
	if len(rep.Damage) != 3 {
		t.Errorf("want exactly 3 problems, got %v", rep.Damage)
	}
}

func TestRefsAndMemo(t *testing.T) {
	s := newStore(t)
	d1, _ := s.Put([]byte("1"))
	d2, _ := s.Put([]byte("2"))
	for _, bad := range []string{"", "/a", "a/../b", "a//b", ".hidden", "a b"} {
		if err := s.SetRef(bad, d1); err == nil {
			t.Errorf("ref name %q accepted", bad)
		}
	}
	if err := s.SetRef("verdicts/x", schemas.Hash([]byte("missing"))); !errors.Is(err, ErrNotFound) {
		t.Errorf("ref to a missing object: %v", err)
	}
	s.SetRef("verdicts/b", d1)
	s.SetRef("verdicts/a", d1)
	s.SetRef("verdicts/a", d2)
	s.SetRef("tasks/a", d1)
	refs, err := s.Refs("verdicts/")
	if err != nil || len(refs) != 2 || refs[0].Name != "verdicts/a" || refs[0].Digest != d2 {
		t.Fatalf("refs: %+v %v", refs, err)
	}
	if got, _ := s.Ref("verdicts/b"); got != d1 {
		t.Errorf("ref b: %s", got)
	}
	log, _ := os.ReadFile(filepath.Join(s.Dir(), "logs", "refs.jsonl"))
	if n := strings.Count(string(log), "\n"); n != 4 {
		t.Errorf("ref log has %d lines, want 4", n)
	}
	key := schemas.Hash([]byte("key"))
	if _, err := s.Memo("verify", key); !errors.Is(err, ErrNotFound) {
		t.Errorf("empty memo: %v", err)
	}
	s.SetMemo("verify", key, d2)
	if got, err := s.Memo("verify", key); err != nil || got != d2 {
		t.Errorf("memo: %s %v", got, err)
	}
	if err := s.SetMemo("Bad Stage", key, d2); err == nil {
		t.Error("bad stage accepted")
	}
}
