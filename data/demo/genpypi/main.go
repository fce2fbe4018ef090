// Command genpypi writes the demo's fixture package index (data/demo/pypi) from
// demo.Packages. Run it with `go generate ./data/demo`; it rewrites only files whose
// bytes change and removes nothing.
package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/envgap/envgap/data/demo"
)

func main() {
	out := "pypi"
	if len(os.Args) > 1 {
		out = os.Args[1]
	}
	files, err := demo.BuildIndex(demo.Packages())
	if err != nil {
		fmt.Fprintln(os.Stderr, "genpypi:", err)
		os.Exit(1)
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		dst := filepath.Join(out, filepath.FromSlash(n))
		if old, err := os.ReadFile(dst); err == nil && bytes.Equal(old, files[n]) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "genpypi:", err)
			os.Exit(1)
		}
		if err := os.WriteFile(dst, files[n], 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "genpypi:", err)
			os.Exit(1)
		}
		fmt.Println("wrote", dst)
	}
}
