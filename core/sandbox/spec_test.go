package sandbox

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestValidateRefusesBadSpecs(t *testing.T) {
	ok := Spec{Image: "img", Steps: []Step{{Name: "s", Command: "true"}}}
	tests := []struct {
		name   string
		edit   func(*Spec)
		reason string
	}{
		{"absolute file", func(s *Spec) { s.Files = []File{{Path: "/etc/passwd"}} }, "absolute"},
		{"dotdot file", func(s *Spec) { s.Files = []File{{Path: "../x"}} }, "`..`"},
		{"inner dotdot", func(s *Spec) { s.Files = []File{{Path: "a/../../x"}} }, "`..`"},
		{"unclean", func(s *Spec) { s.Files = []File{{Path: "a//b"}} }, "clean"},
		{"dot", func(s *Spec) { s.Files = []File{{Path: "."}} }, "empty"},
		{"empty", func(s *Spec) { s.Files = []File{{Path: ""}} }, "empty"},
		{"duplicate", func(s *Spec) { s.Files = []File{{Path: "a"}, {Path: "a"}} }, "twice"},
		{"file is dir", func(s *Spec) { s.Files = []File{{Path: "a"}, {Path: "a/b"}} }, "directory"},
		{"relative workdir", func(s *Spec) { s.WorkDir = "work" }, "work dir"},
		{"root workdir", func(s *Spec) { s.WorkDir = "/" }, "work dir"},
		{"network", func(s *Spec) { s.Network = "host" }, "network"},
		{"no steps", func(s *Spec) { s.Steps = nil }, "no steps"},
		{"empty command", func(s *Spec) { s.Steps = []Step{{Name: "x", Command: " "}} }, "no command"},
		{"no image", func(s *Spec) { s.Image = "" }, "no image"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := ok
			tt.edit(&s)
			_, err := validate(s)
			if !errors.Is(err, ErrBadSpec) || !strings.Contains(err.Error(), tt.reason) {
				t.Fatalf("validate: got %v, want ErrBadSpec mentioning %q", err, tt.reason)
			}
		})
	}
	got, err := validate(ok)
	if err != nil {
		t.Fatalf("valid spec refused: %v", err)
	}
	if got.WorkDir != "/work" || got.Network != NetworkNone || got.Limits != DefaultLimits() || strings.Join(got.Shell, " ") != "bash -c" {
		t.Fatalf("defaults not filled: %+v", got)
	}
}

func TestCaptureKeepsHeadAndTailAndHashesAll(t *testing.T) {
	tests := []struct {
		name  string
		limit int64
		data  string
		chunk int
		want  string
		trunc bool
	}{
		{"fits", 10, "hello", 2, "hello", false},
		{"exactly", 10, "0123456789", 3, "0123456789", false},
		{"over", 6, "0123456789", 4, "012\n[envgap: 4 bytes omitted]\n789", true},
		{"over one write", 6, "0123456789", 100, "012\n[envgap: 4 bytes omitted]\n789", true},
		{"odd limit", 5, "abcdefgh", 1, "abc\n[envgap: 3 bytes omitted]\ngh", true},
		{"zero", 0, "abc", 1, "\n[envgap: 3 bytes omitted]\n", true},
		{"empty", 4, "", 1, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCapture(tt.limit)
			for rest := tt.data; rest != ""; {
				k := min(tt.chunk, len(rest))
				c.Write([]byte(rest[:k]))
				rest = rest[k:]
			}
			out, trunc := c.output()
			sum := sha256.Sum256([]byte(tt.data))
			if string(out) != tt.want || trunc != tt.trunc || c.size() != int64(len(tt.data)) || c.digest() != hex.EncodeToString(sum[:]) {
				t.Fatalf("got %q trunc=%v size=%d digest=%s; want %q trunc=%v", out, trunc, c.size(), c.digest(), tt.want, tt.trunc)
			}
		})
	}
}

func TestFilesTarPlacesFilesUnderWorkDir(t *testing.T) {
	b, err := filesTar("/work/proj", []File{
		{Path: "src/b.py", Content: []byte("b")},
		{Path: "run.sh", Content: []byte("#!/bin/sh"), Mode: 0o755},
		{Path: "src/a.py", Content: []byte("a")},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(tr)
		got = append(got, h.Name+" "+strings.TrimPrefix(string(rune('0'+h.Mode>>6&7)), "")+" "+string(body))
	}
	want := []string{"work/ 7 ", "work/proj/ 7 ", "work/proj/run.sh 7 #!/bin/sh", "work/proj/src/ 7 ", "work/proj/src/a.py 6 a", "work/proj/src/b.py 6 b"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("tar entries:\n got %q\nwant %q", got, want)
	}
}
