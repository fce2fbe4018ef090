package harbor

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/image"
)

// LocalBase is the local stand-in base image (images/setup-engine.sh makes it).
const LocalBase = "localhost/envgap-base:bookworm"

// EnsureGoImage makes GoImage available on the engine: present, or pulled, or, where no
// container registry is reachable, built from the local base image and this machine's Go
// toolchain (the same Go release line, a notice is printed), so that the environments
// build as Harbor builds them elsewhere.
func (e *Engine) EnsureGoImage(ctx context.Context, log io.Writer) error {
	if log == nil {
		log = io.Discard
	}
	if _, err := e.cli.ImageInspect(ctx, GoImage); err == nil {
		return nil
	}
	if rc, err := e.cli.ImagePull(ctx, GoImage, image.PullOptions{}); err == nil {
		_, cerr := io.Copy(io.Discard, rc)
		rc.Close()
		if _, err := e.cli.ImageInspect(ctx, GoImage); cerr == nil && err == nil {
			return nil
		}
	}
	goroot, err := exec.CommandContext(ctx, "go", "env", "GOROOT").Output()
	if err != nil {
		return fmt.Errorf("%s can be neither found nor pulled, and no Go toolchain is here to build it from: %w", GoImage, err)
	}
	root := strings.TrimSpace(string(goroot))
	ver, err := os.ReadFile(filepath.Join(root, "VERSION"))
	if err != nil || !strings.HasPrefix(string(ver), "go1.26") {
		return fmt.Errorf("%s can be neither found nor pulled, and the Go toolchain at %s is not Go 1.26", GoImage, root)
	}
	if _, err := e.cli.ImageInspect(ctx, LocalBase); err != nil {
		return fmt.Errorf("%s can be neither found nor pulled, and the local base %s is missing (run images/setup-engine.sh)", GoImage, LocalBase)
	}
	fmt.Fprintf(log, "notice: %s cannot be pulled; building it from %s and the Go toolchain at %s\n", GoImage, LocalBase, root)
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(goContext(pw, root)) }()
	resp, err := e.cli.ImageBuild(ctx, pr, build.ImageBuildOptions{Tags: []string{"docker.io/library/" + GoImage}, Dockerfile: "Dockerfile", Remove: true, ForceRemove: true})
	if err != nil {
		pr.Close()
		return fmt.Errorf("building %s: %w", GoImage, err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(log, resp.Body); err != nil {
		return fmt.Errorf("building %s: %w", GoImage, err)
	}
	if _, err := e.cli.ImageInspect(ctx, GoImage); err != nil {
		return fmt.Errorf("building %s gave no image: %w", GoImage, err)
	}
	return nil
}

// goContext writes the build context of the local Go image: a Dockerfile and the
// toolchain (bin, pkg/tool, pkg/include, src without testdata, go.env, VERSION, lib).
func goContext(w io.Writer, root string) error {
	tw := tar.NewWriter(w)
	df := "FROM " + LocalBase + "\nCOPY go /usr/local/go\nENV PATH=/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin GOTOOLCHAIN=local GOPATH=/go\nWORKDIR /go\n"
	if err := tw.WriteHeader(&tar.Header{Name: "Dockerfile", Mode: 0o644, Size: int64(len(df)), ModTime: archiveTime}); err != nil {
		return err
	}
	io.WriteString(tw, df)
	keep := func(rel string) bool {
		for _, p := range []string{"bin", "pkg/tool", "pkg/include", "src", "lib", "go.env", "VERSION"} {
			if rel == p || strings.HasPrefix(rel, p+"/") {
				return true
			}
		}
		return rel == "pkg"
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if !keep(rel) || (d.IsDir() && d.Name() == "testdata") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		link := ""
		if d.Type()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(p); err != nil {
				return err
			}
		}
		h, err := tar.FileInfoHeader(info, link)
		if err != nil {
			return err
		}
		h.Name = "go/" + rel
		if d.IsDir() {
			h.Name += "/"
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if d.Type().IsRegular() {
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			_, err = io.Copy(tw, f)
			f.Close()
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	return tw.Close()
}
