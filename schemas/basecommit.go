package schemas

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
)

// The fixed identity and message of a Lite task's base commit.
const (
	BaseCommitAuthorName  = "envgap"
	BaseCommitAuthorEmail = "envgap@invalid"
	BaseCommitMessage     = "project as written\n"
)

// LiteBaseCommit returns the git hash of the one commit made from a Lite project's files:
// every file mode 100644, author and committer "envgap <envgap@invalid>" at createdAt in
// UTC, the message "project as written\n", no parent. It is computed from git's object
// format (SHA-1 of blobs, trees and the commit), so it needs no repository and equals what
// the git CLI makes from the same inputs. Paths must be clean relative paths with content.
func LiteBaseCommit(files []File, createdAt time.Time) (string, error) {
	if createdAt.IsZero() {
		return "", errors.New("base commit: created_at is not set")
	}
	root := &gitDir{files: map[string][]byte{}, dirs: map[string]*gitDir{}}
	for i, f := range files {
		if err := CheckRelPath(f.Path); err != nil {
			return "", fmt.Errorf("base commit: file %d: %w", i, err)
		}
		if f.Content == nil {
			return "", fmt.Errorf("base commit: %s has no content (project files are never deletions)", f.Path)
		}
		parts := strings.Split(f.Path, "/")
		d := root
		for _, p := range parts[:len(parts)-1] {
			if _, clash := d.files[p]; clash {
				return "", fmt.Errorf("base commit: %s is both a file and a folder", f.Path)
			}
			next, ok := d.dirs[p]
			if !ok {
				next = &gitDir{files: map[string][]byte{}, dirs: map[string]*gitDir{}}
				d.dirs[p] = next
			}
			d = next
		}
		name := parts[len(parts)-1]
		if _, clash := d.dirs[name]; clash {
			return "", fmt.Errorf("base commit: %s is both a file and a folder", f.Path)
		}
		if _, dup := d.files[name]; dup {
			return "", fmt.Errorf("base commit: %s is given twice", f.Path)
		}
		d.files[name] = gitObjectID("blob", []byte(*f.Content))
	}
	tree := root.id()
	when := fmt.Sprintf("%d +0000", createdAt.UTC().Unix())
	ident := BaseCommitAuthorName + " <" + BaseCommitAuthorEmail + "> " + when
	var c bytes.Buffer
	fmt.Fprintf(&c, "tree %s\nauthor %s\ncommitter %s\n\n%s", hex.EncodeToString(tree), ident, ident, BaseCommitMessage)
	return hex.EncodeToString(gitObjectID("commit", c.Bytes())), nil
}

// gitDir is one directory of a project: file names to blob ids, sub-directories.
type gitDir struct {
	files map[string][]byte
	dirs  map[string]*gitDir
}

// id returns the tree object id of the directory: entries sorted as git sorts them (a
// directory as its name followed by "/").
func (d *gitDir) id() []byte {
	type entry struct {
		key, mode, name string
		id              []byte
	}
	var es []entry
	for n, id := range d.files {
		es = append(es, entry{n, "100644", n, id})
	}
	for n, sub := range d.dirs {
		es = append(es, entry{n + "/", "40000", n, sub.id()})
	}
	sort.Slice(es, func(i, j int) bool { return es[i].key < es[j].key })
	var b bytes.Buffer
	for _, e := range es {
		b.WriteString(e.mode + " " + e.name + "\x00")
		b.Write(e.id)
	}
	return gitObjectID("tree", b.Bytes())
}

// gitObjectID is git's object id: SHA-1 of "<kind> <size>\0" and the content.
func gitObjectID(kind string, content []byte) []byte {
	h := sha1.New()
	fmt.Fprintf(h, "%s %d\x00", kind, len(content))
	h.Write(content)
	return h.Sum(nil)
}
