package export

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/envgap/envgap/lib/publish"
)

// An export is written into a sibling folder .<OUT>.export-<random> and published by one
// rename (lib/publish: a kill at any moment leaves OUT as the old release or the new one).

// outFolder is the export folder out as lib/publish publishes it.
func outFolder(out string) publish.Folder { return publish.Folder{Out: out, Tag: "export"} }

// publishExport makes the finished export in tmp the folder out in one step. Files of out
// that the export does not own (a maintainer's LICENSE.md, say) are carried over into tmp
// first. tmp is left holding the old release (or nothing) for the caller to remove.
func publishExport(tmp, out string) error {
	if _, err := os.Lstat(out); err == nil {
		if err := carryOver(out, tmp, ownedPaths()); err != nil {
			return fmt.Errorf("keeping the files of %s that export does not own: %w", out, err)
		}
	}
	return outFolder(out).Publish(tmp)
}

// carryOver links (or copies) into tmp every entry of out that is not one of the owned
// paths (slash-separated, relative) and that tmp does not have.
func carryOver(out, tmp string, owned []string) error {
	isOwned := func(rel string) bool {
		for _, o := range owned {
			if rel == o || strings.HasPrefix(rel, o+"/") {
				return true
			}
		}
		return false
	}
	return filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(out, p)
		if err != nil || rel == "." {
			return err
		}
		if isOwned(filepath.ToSlash(rel)) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		dst := filepath.Join(tmp, rel)
		if _, err := os.Lstat(dst); err == nil {
			return nil // the new release has it (a folder such as data/): look inside
		}
		switch {
		case d.IsDir():
			return os.Mkdir(dst, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, dst)
		default:
			if os.Link(p, dst) == nil {
				return nil
			}
			return copyFile(p, dst)
		}
	})
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return writeSmallFile(dst, b)
}
