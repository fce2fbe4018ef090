package demo

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"sort"
	"strings"
	"time"
)

//go:embed pypi
var pypiFiles embed.FS

// PyPIFS returns the committed fixture index, rooted at the folder that holds simple/.
func PyPIFS() fs.FS {
	sub, err := fs.Sub(pypiFiles, "pypi")
	if err != nil {
		panic(err) // the embedded folder always exists
	}
	return sub
}

// Package is one release of the fixture index: a pure-Python wheel holding one module.
type Package struct {
	Name           string // distribution and import name
	Version        string
	Summary        string
	RequiresPython string
	// UploadTime is the PEP 700 upload time the index reports.
	UploadTime time.Time
	// Module is the source of <Name>/__init__.py.
	Module string
}

// WheelName returns the wheel's file name.
func (p Package) WheelName() string {
	return fmt.Sprintf("%s-%s-py3-none-any.whl", strings.ReplaceAll(p.Name, "-", "_"), p.Version)
}

// wheelTime is the fixed modification time of every wheel entry (zip cannot store 1970).
var wheelTime = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

// BuildWheel returns the wheel of a package; the same package always gives the same bytes.
func BuildWheel(p Package) ([]byte, error) {
	mod := strings.ReplaceAll(p.Name, "-", "_")
	info := fmt.Sprintf("%s-%s.dist-info/", mod, p.Version)
	metadata := fmt.Sprintf("Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: %s\nRequires-Python: %s\n",
		p.Name, p.Version, p.Summary, p.RequiresPython)
	entries := []struct{ name, body string }{
		{mod + "/__init__.py", p.Module},
		{info + "METADATA", metadata},
		{info + "WHEEL", "Wheel-Version: 1.0\nGenerator: envgap-demo\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
		{info + "top_level.txt", mod + "\n"},
	}
	var record strings.Builder
	for _, e := range entries {
		sum := sha256.Sum256([]byte(e.body))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", e.name, base64.RawURLEncoding.EncodeToString(sum[:]), len(e.body))
	}
	record.WriteString(info + "RECORD,,\n")
	entries = append(entries, struct{ name, body string }{info + "RECORD", record.String()})
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: wheelTime}
		h.SetMode(0o644)
		w, err := zw.CreateHeader(h)
		if err != nil {
			return nil, fmt.Errorf("wheel %s: %w", p.WheelName(), err)
		}
		if _, err := w.Write([]byte(e.body)); err != nil {
			return nil, fmt.Errorf("wheel %s: %w", p.WheelName(), err)
		}
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("wheel %s: %w", p.WheelName(), err)
	}
	return buf.Bytes(), nil
}

// pageFile is one file entry of a PEP 691 project page.
type pageFile struct {
	Filename       string            `json:"filename"`
	URL            string            `json:"url"`
	Hashes         map[string]string `json:"hashes"`
	RequiresPython string            `json:"requires-python,omitempty"`
	Size           int               `json:"size"`
	UploadTime     string            `json:"upload-time"`
	Yanked         bool              `json:"yanked"`
}

type page struct {
	Meta     map[string]string `json:"meta"`
	Name     string            `json:"name"`
	Versions []string          `json:"versions"`
	Files    []pageFile        `json:"files"`
}

// BuildIndex returns every file of the fixture index for the packages, by path relative
// to the index root (simple/<name>/index.json and simple/<name>/<wheel>).
func BuildIndex(pkgs []Package) (map[string][]byte, error) {
	out := map[string][]byte{}
	byName := map[string][]Package{}
	for _, p := range pkgs {
		byName[p.Name] = append(byName[p.Name], p)
	}
	for name, ps := range byName {
		sort.Slice(ps, func(i, j int) bool { return ps[i].UploadTime.Before(ps[j].UploadTime) })
		pg := page{Meta: map[string]string{"api-version": "1.1"}, Name: name}
		for _, p := range ps {
			whl, err := BuildWheel(p)
			if err != nil {
				return nil, err
			}
			sum := sha256.Sum256(whl)
			out["simple/"+name+"/"+p.WheelName()] = whl
			pg.Versions = append(pg.Versions, p.Version)
			pg.Files = append(pg.Files, pageFile{Filename: p.WheelName(), URL: p.WheelName(),
				Hashes: map[string]string{"sha256": hex.EncodeToString(sum[:])}, RequiresPython: p.RequiresPython,
				Size: len(whl), UploadTime: p.UploadTime.UTC().Format("2006-01-02T15:04:05.000000Z")})
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(pg); err != nil {
			return nil, err
		}
		out["simple/"+name+"/index.json"] = b.Bytes()
	}
	return out, nil
}

// Content types of the PEP 691 JSON simple API.
const contentTypePyPIJSON = "application/vnd.pypi.simple.v1+json"

// PyPIHandler serves a fixture index folder (see the package documentation) as a PEP 691
// JSON simple index under /simple/.
func PyPIHandler(fsys fs.FS) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		p := r.URL.Path
		if name, ok := strings.CutPrefix(p, "/pypi/"); ok && strings.HasSuffix(name, "/json") {
			servePyPIJSON(w, fsys, strings.TrimSuffix(name, "/json"))
			return
		}
		if !strings.HasPrefix(p, "/simple/") {
			http.Error(w, "not found: the index is under /simple/", http.StatusNotFound)
			return
		}
		rest := strings.TrimPrefix(p, "/simple/")
		parts := strings.Split(rest, "/")
		switch {
		case rest == "":
			ents, err := fs.ReadDir(fsys, "simple")
			if err != nil {
				http.Error(w, "index unreadable", http.StatusInternalServerError)
				return
			}
			type proj struct {
				Name string `json:"name"`
			}
			list := struct {
				Meta     map[string]string `json:"meta"`
				Projects []proj            `json:"projects"`
			}{Meta: map[string]string{"api-version": "1.1"}, Projects: []proj{}}
			for _, e := range ents {
				if e.IsDir() {
					list.Projects = append(list.Projects, proj{e.Name()})
				}
			}
			w.Header().Set("Content-Type", contentTypePyPIJSON)
			_ = json.NewEncoder(w).Encode(list)
		case len(parts) == 1:
			http.Redirect(w, r, "/simple/"+parts[0]+"/", http.StatusMovedPermanently)
		case len(parts) == 2 && parts[1] == "":
			b, err := fs.ReadFile(fsys, path.Join("simple", parts[0], "index.json"))
			if err != nil {
				http.Error(w, "no such project in the fixture index", http.StatusNotFound)
				return
			}
			w.Header().Set("Content-Type", contentTypePyPIJSON)
			w.Header().Set("Vary", "Accept")
			_, _ = w.Write(b)
		case len(parts) == 2 && parts[1] != "index.json" && !strings.Contains(parts[1], ".."):
			b, err := fs.ReadFile(fsys, path.Join("simple", parts[0], parts[1]))
			if err != nil {
				http.Error(w, "no such file in the fixture index", http.StatusNotFound)
				return
			}
			w.Header().Set("Content-Type", "application/octet-stream")
			_, _ = w.Write(b)
		default:
			http.Error(w, "not found", http.StatusNotFound)
		}
	})
}

// servePyPIJSON answers PyPI's JSON API (/pypi/<name>/json: releases with their files and
// upload times) from the fixture index, for the registry audit.
func servePyPIJSON(w http.ResponseWriter, fsys fs.FS, name string) {
	if strings.Contains(name, "/") || strings.Contains(name, "..") {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	b, err := fs.ReadFile(fsys, path.Join("simple", name, "index.json"))
	if err != nil {
		http.Error(w, "no such project in the fixture index", http.StatusNotFound)
		return
	}
	var idx struct {
		Name     string   `json:"name"`
		Versions []string `json:"versions"`
		Files    []struct {
			Filename   string            `json:"filename"`
			Hashes     map[string]string `json:"hashes"`
			UploadTime string            `json:"upload-time"`
		} `json:"files"`
	}
	if err := json.Unmarshal(b, &idx); err != nil {
		http.Error(w, "index unreadable", http.StatusInternalServerError)
		return
	}
	type file struct {
		Filename   string            `json:"filename"`
		Digests    map[string]string `json:"digests"`
		UploadTime string            `json:"upload_time_iso_8601"`
	}
	releases := map[string][]file{}
	for _, v := range idx.Versions {
		releases[v] = []file{}
	}
	latest := ""
	for _, f := range idx.Files {
		parts := strings.Split(strings.TrimSuffix(f.Filename, ".tar.gz"), "-")
		if len(parts) < 2 {
			continue
		}
		v := parts[1]
		releases[v] = append(releases[v], file{f.Filename, f.Hashes, f.UploadTime})
		latest = v
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"info":     map[string]string{"name": idx.Name, "version": latest},
		"releases": releases,
	})
}
