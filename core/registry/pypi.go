package registry

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/envgap/envgap/schemas"
)

// PyPI content types (PEP 691).
const (
	ctPyPIJSON       = "application/vnd.pypi.simple.v1+json"
	ctPyPIHTMLv1     = "application/vnd.pypi.simple.v1+html"
	ctHTML           = "text/html"
	ctPyPILatestJSON = "application/vnd.pypi.simple.latest+json"
	ctPyPILatestHTML = "application/vnd.pypi.simple.latest+html"
	// upstreamPyPIAccept asks upstream for JSON only: HTML has no upload-time.
	upstreamPyPIAccept = ctPyPIJSON
)

var pypiNameSep = regexp.MustCompile(`[-_.]+`)

// NormalizePyPIName returns the PEP 503 normalised form of a project name.
func NormalizePyPIName(name string) string {
	return strings.ToLower(pypiNameSep.ReplaceAllString(name, "-"))
}

// pypiProject is a PEP 691 project page as upstream sends it.
type pypiProject struct {
	Name     string     `json:"name"`
	Files    []pypiFile `json:"files"`
	Versions []string   `json:"versions"`
}

type pypiFile struct {
	Filename         string            `json:"filename"`
	URL              string            `json:"url"`
	Hashes           map[string]string `json:"hashes"`
	RequiresPython   *string           `json:"requires-python"`
	CoreMetadata     json.RawMessage   `json:"core-metadata"`
	DistInfoMetadata json.RawMessage   `json:"dist-info-metadata"`
	GPGSig           *bool             `json:"gpg-sig"`
	Yanked           json.RawMessage   `json:"yanked"`
	UploadTime       *string           `json:"upload-time"`
	Size             *int64            `json:"size"`

	// derived
	uploaded   time.Time
	hasTime    bool
	version    string
	yanked     bool
	yankReason string
	metadata   map[string]string // nil: no metadata file
}

// pypiIndex is the parsed, per-document form that requests filter.
type pypiIndex struct {
	name     string
	files    []*pypiFile
	versions []string // upstream order
	byName   map[string]*pypiFile
}

func parsePyPI(project string) parseFunc {
	return func(r io.Reader) (any, error) {
		var p pypiProject
		dec := json.NewDecoder(bufio.NewReaderSize(r, 64<<10))
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("not a PEP 691 JSON project page: %w", err)
		}
		if p.Files == nil {
			return nil, errors.New(`not a PEP 691 JSON project page: no "files" key`)
		}
		// PEP 691: "name" is the normalised name, whatever upstream wrote.
		idx := &pypiIndex{name: project, byName: make(map[string]*pypiFile, len(p.Files))}
		for i := range p.Files {
			f := &p.Files[i]
			if f.Filename == "" || f.URL == "" {
				return nil, fmt.Errorf("file %d has no filename or url", i)
			}
			if f.UploadTime != nil {
				f.uploaded, f.hasTime = parseRegistryTime(*f.UploadTime)
			}
			f.version = fileVersion(project, f.Filename)
			f.yanked, f.yankReason = parseYank(f.Yanked)
			f.metadata = parseMetaFlag(f.CoreMetadata)
			if f.metadata == nil {
				f.metadata = parseMetaFlag(f.DistInfoMetadata)
			}
			if f.Hashes == nil {
				f.Hashes = map[string]string{}
			}
			idx.files = append(idx.files, f)
			idx.byName[f.Filename] = f
		}
		idx.versions = p.Versions
		if idx.versions == nil {
			seen := map[string]bool{}
			for _, f := range idx.files {
				if f.version != "" && !seen[f.version] {
					seen[f.version] = true
					idx.versions = append(idx.versions, f.version)
				}
			}
		}
		return idx, nil
	}
}

// parseYank reads PEP 691 "yanked": false/absent, true, or a reason string.
func parseYank(raw json.RawMessage) (bool, string) {
	if len(raw) == 0 {
		return false, ""
	}
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		return b, ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return true, s
	}
	return false, ""
}

// parseMetaFlag reads PEP 658/714 "core-metadata": true, false, or a hashes dict.
func parseMetaFlag(raw json.RawMessage) map[string]string {
	if len(raw) == 0 {
		return nil
	}
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		if b {
			return map[string]string{}
		}
		return nil
	}
	var h map[string]string
	if json.Unmarshal(raw, &h) == nil && h != nil {
		return h
	}
	return nil
}

// fileVersion extracts the version from a wheel or sdist file name; "" when it cannot.
func fileVersion(project, filename string) string {
	if strings.HasSuffix(filename, ".whl") {
		parts := strings.Split(strings.TrimSuffix(filename, ".whl"), "-")
		if len(parts) >= 5 {
			return parts[1]
		}
		return ""
	}
	stem := filename
	for _, ext := range []string{".tar.gz", ".tar.bz2", ".tar.xz", ".tgz", ".zip", ".tar", ".egg", ".exe", ".msi", ".rpm", ".dmg"} {
		if strings.HasSuffix(strings.ToLower(stem), ext) {
			stem = stem[:len(stem)-len(ext)]
			break
		}
	}
	if strings.HasSuffix(filename, ".egg") {
		parts := strings.Split(stem, "-")
		if len(parts) >= 2 {
			return parts[1]
		}
		return ""
	}
	norm := NormalizePyPIName(project)
	for i := 0; i < len(stem); i++ {
		if stem[i] == '-' && NormalizePyPIName(stem[:i]) == norm {
			return stem[i+1:]
		}
	}
	if i := strings.LastIndexByte(stem, '-'); i > 0 {
		return stem[i+1:]
	}
	return ""
}

// versionKey compares a file-name version with a listed version loosely (case, "_"/"-"/"."
// separators and a leading "v" differ between the two spellings).
func versionKey(v string) string {
	v = strings.TrimPrefix(strings.ToLower(v), "v")
	return strings.NewReplacer("_", ".", "-", ".").Replace(v)
}

// hideReason says why a file is withheld at the cut-off, or "" when it is served.
func (p *Proxy) hideReasonPyPI(f *pypiFile, cutoff schemas.Cutoff) string {
	switch {
	case !f.hasTime && !p.opts.IncludeUntimed:
		return "no upload time"
	case f.hasTime && !cutoff.Includes(f.uploaded):
		return fmt.Sprintf("uploaded %s after cut-off %s", formatUploadTime(f.uploaded), cutoff.String())
	case f.yanked && p.opts.Yanked == YankHide:
		if f.yankReason != "" {
			return "yanked: " + f.yankReason
		}
		return "yanked"
	}
	return ""
}

func (p *Proxy) servePyPI(rc *reqCtx) {
	if len(rc.rest) < 2 {
		httpErrorText(rc.w, http.StatusNotFound, "use pypi/simple/<project>/")
		return
	}
	switch rc.rest[1] {
	case "simple":
		switch len(rc.rest) {
		case 2:
			httpErrorText(rc.w, http.StatusNotFound, "the list of all projects is not served; ask for /pypi/simple/<project>/")
			return
		case 3:
			name := rc.rest[2]
			norm := NormalizePyPIName(name)
			if norm != name || !rc.trail {
				redirect(rc, rc.prefix+"/pypi/simple/"+url.PathEscape(norm)+"/")
				return
			}
			p.servePyPIProject(rc, norm)
			return
		}
	case "files":
		if len(rc.rest) == 4 {
			p.servePyPIFile(rc, NormalizePyPIName(rc.rest[2]), rc.rest[3])
			return
		}
	}
	httpErrorText(rc.w, http.StatusNotFound, "use pypi/simple/<project>/ or pypi/files/<project>/<file>")
}

func (p *Proxy) pypiDoc(rc *reqCtx, project string, anyAge bool) (*doc, *pypiIndex, error) {
	u := p.pypi.JoinPath(project) // no trailing slash from JoinPath
	us := u.String() + "/"
	d, err := p.f.getDoc(rc.r.Context(), us, upstreamPyPIAccept, "pypi:"+project, anyAge, parsePyPI(project))
	if err != nil {
		return nil, nil, err
	}
	return d, d.parsed.(*pypiIndex), nil
}

func (p *Proxy) servePyPIProject(rc *reqCtx, project string) {
	offers := []string{ctHTML, ctPyPIHTMLv1, ctPyPIJSON, ctPyPILatestHTML, ctPyPILatestJSON}
	accept := rc.r.Header.Get("Accept")
	if f := rc.r.URL.Query().Get("format"); f != "" {
		accept = strings.ReplaceAll(f, " ", "+") // an unescaped "+" in a query reads as a space
	}
	ct, _ := negotiate(accept, offers)
	switch ct {
	case ctPyPILatestHTML:
		ct = ctPyPIHTMLv1
	case ctPyPILatestJSON:
		ct = ctPyPIJSON
	}
	rc.w.Header().Set("Vary", "Accept")
	_, idx, err := p.pypiDoc(rc, project, false)
	if err != nil {
		p.fail(rc, EcosystemPyPI, project, err)
		return
	}
	var visible []*pypiFile
	versionsLeft := map[string]bool{}
	for _, f := range idx.files {
		if why := p.hideReasonPyPI(f, rc.cutoff); why != "" {
			rc.log.hidden1(Event{Ecosystem: EcosystemPyPI, Package: project, Version: f.version, File: f.Filename, Reason: why})
			continue
		}
		visible = append(visible, f)
		versionsLeft[versionKey(f.version)] = true
	}
	if len(visible) == 0 {
		p.fail(rc, EcosystemPyPI, project, notFound("project %s has no file published at or before %s", project, rc.cutoff.String()))
		return
	}
	var versions []string
	for _, v := range idx.versions {
		if versionsLeft[versionKey(v)] {
			versions = append(versions, v)
		}
	}
	rc.log.served1(Event{Ecosystem: EcosystemPyPI, Package: project,
		Reason: fmt.Sprintf("metadata: %d of %d files, %d of %d versions", len(visible), len(idx.files), len(versions), len(idx.versions))})
	filesBase := rc.root + "/pypi/files/" + url.PathEscape(project) + "/"
	if ct == ctPyPIJSON {
		p.writePyPIJSON(rc, idx, visible, versions, filesBase)
		return
	}
	p.writePyPIHTML(rc, ct, idx, visible, filesBase)
}

type pypiOutFile struct {
	Filename         string            `json:"filename"`
	URL              string            `json:"url"`
	Hashes           map[string]string `json:"hashes"`
	RequiresPython   *string           `json:"requires-python,omitempty"`
	CoreMetadata     any               `json:"core-metadata,omitempty"`
	DistInfoMetadata any               `json:"dist-info-metadata,omitempty"`
	GPGSig           *bool             `json:"gpg-sig,omitempty"`
	Yanked           any               `json:"yanked,omitempty"`
	UploadTime       string            `json:"upload-time,omitempty"`
	Size             *int64            `json:"size,omitempty"`
}

type pypiOutPage struct {
	Meta struct {
		APIVersion string `json:"api-version"`
	} `json:"meta"`
	Name     string        `json:"name"`
	Files    []pypiOutFile `json:"files"`
	Versions []string      `json:"versions"`
}

func (p *Proxy) yankOut(f *pypiFile) (bool, string) {
	if !f.yanked || p.opts.Yanked == YankIgnore {
		return false, ""
	}
	return true, f.yankReason
}

func (p *Proxy) writePyPIJSON(rc *reqCtx, idx *pypiIndex, files []*pypiFile, versions []string, base string) {
	var page pypiOutPage
	page.Meta.APIVersion = "1.1"
	page.Name = idx.name
	page.Versions = versions
	if page.Versions == nil {
		page.Versions = []string{}
	}
	page.Files = make([]pypiOutFile, 0, len(files))
	for _, f := range files {
		o := pypiOutFile{Filename: f.Filename, URL: base + url.PathEscape(f.Filename), Hashes: f.Hashes,
			RequiresPython: f.RequiresPython, GPGSig: f.GPGSig, Size: f.Size}
		if f.RequiresPython != nil && *f.RequiresPython == "" {
			o.RequiresPython = nil
		}
		if f.metadata != nil {
			var m any = true
			if len(f.metadata) > 0 {
				m = f.metadata
			}
			o.CoreMetadata, o.DistInfoMetadata = m, m
		}
		if y, reason := p.yankOut(f); y {
			if reason != "" {
				o.Yanked = reason
			} else {
				o.Yanked = true
			}
		}
		if f.hasTime {
			o.UploadTime = formatUploadTime(f.uploaded)
		}
		page.Files = append(page.Files, o)
	}
	rc.w.Header().Set("Content-Type", ctPyPIJSON)
	if rc.r.Method == http.MethodHead {
		return
	}
	bw := bufio.NewWriterSize(rc.w, 64<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(page)
	_ = bw.Flush()
}

func hashFragment(h map[string]string) string {
	if v, ok := h["sha256"]; ok {
		return "sha256=" + v
	}
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys) == 0 {
		return ""
	}
	return keys[0] + "=" + h[keys[0]]
}

func (p *Proxy) writePyPIHTML(rc *reqCtx, ct string, idx *pypiIndex, files []*pypiFile, base string) {
	if ct == ctHTML {
		ct = "text/html; charset=utf-8"
	}
	rc.w.Header().Set("Content-Type", ct)
	if rc.r.Method == http.MethodHead {
		return
	}
	bw := bufio.NewWriterSize(rc.w, 64<<10)
	esc := html.EscapeString
	fmt.Fprintf(bw, "<!DOCTYPE html>\n<html>\n  <head>\n    <meta name=\"pypi:repository-version\" content=\"1.1\">\n    <title>Links for %s</title>\n  </head>\n  <body>\n    <h1>Links for %s</h1>\n", esc(idx.name), esc(idx.name))
	for _, f := range files {
		href := base + url.PathEscape(f.Filename)
		if frag := hashFragment(f.Hashes); frag != "" {
			href += "#" + frag
		}
		fmt.Fprintf(bw, "    <a href=\"%s\"", esc(href))
		if f.RequiresPython != nil && *f.RequiresPython != "" {
			fmt.Fprintf(bw, " data-requires-python=\"%s\"", esc(*f.RequiresPython))
		}
		if f.metadata != nil {
			v := "true"
			if frag := hashFragment(f.metadata); frag != "" {
				v = frag
			}
			fmt.Fprintf(bw, " data-dist-info-metadata=\"%s\" data-core-metadata=\"%s\"", esc(v), esc(v))
		}
		if f.GPGSig != nil {
			fmt.Fprintf(bw, " data-gpg-sig=\"%t\"", *f.GPGSig)
		}
		if y, reason := p.yankOut(f); y {
			fmt.Fprintf(bw, " data-yanked=\"%s\"", esc(reason))
		}
		fmt.Fprintf(bw, ">%s</a><br />\n", esc(f.Filename))
	}
	io.WriteString(bw, "  </body>\n</html>\n")
	_ = bw.Flush()
}

func (p *Proxy) servePyPIFile(rc *reqCtx, project, filename string) {
	find := func(idx *pypiIndex) (*pypiFile, bool) {
		if f, ok := idx.byName[filename]; ok {
			return f, false
		}
		if base, ok := strings.CutSuffix(filename, ".metadata"); ok {
			if f, ok := idx.byName[base]; ok && f.metadata != nil {
				return f, true
			}
		}
		return nil, false
	}
	d, idx, err := p.pypiDoc(rc, project, true)
	if err != nil {
		p.fail(rc, EcosystemPyPI, project, err)
		return
	}
	f, isMeta := find(idx)
	if f == nil { // maybe new upstream: revalidate once
		if d, idx, err = p.pypiDoc(rc, project, false); err != nil {
			p.fail(rc, EcosystemPyPI, project, err)
			return
		}
		f, isMeta = find(idx)
	}
	if f == nil {
		p.fail(rc, EcosystemPyPI, project, notFound("%s has no file %s", project, filename))
		return
	}
	if why := p.hideReasonPyPI(f, rc.cutoff); why != "" {
		rc.log.hidden1(Event{Ecosystem: EcosystemPyPI, Package: project, Version: f.version, File: filename, Reason: why})
		if !p.opts.Lenient {
			p.fail(rc, EcosystemPyPI, project, notFound("%s is hidden at cut-off %s: %s", filename, rc.cutoff.String(), why))
			return
		}
	}
	base, err := url.Parse(d.meta.URL)
	if err != nil {
		p.fail(rc, EcosystemPyPI, project, badGateway(err, "cached document url"))
		return
	}
	ref, err := url.Parse(f.URL)
	if err != nil {
		p.fail(rc, EcosystemPyPI, project, badGateway(err, "upstream file url %q", f.URL))
		return
	}
	src := base.ResolveReference(ref)
	src.Fragment = ""
	want := digests{sha256: strings.ToLower(f.Hashes["sha256"])}
	if isMeta {
		src.Path += ".metadata"
		src.RawPath = ""
		want = digests{sha256: strings.ToLower(f.metadata["sha256"])}
	}
	if want.sha256 != "" && !validHex(want.sha256) {
		p.fail(rc, EcosystemPyPI, project, badGateway(nil, "upstream lists an invalid sha256 for %s", filename))
		return
	}
	sha, err := p.f.getBlob(rc.r.Context(), src.String(), want)
	if err != nil {
		p.fail(rc, EcosystemPyPI, project, err)
		return
	}
	ct := "application/octet-stream"
	if isMeta {
		ct = "text/plain; charset=utf-8"
	}
	served := Event{Ecosystem: EcosystemPyPI, Package: project, Version: f.version, File: filename}
	if y, reason := p.yankOut(f); y {
		served.Reason = strings.TrimSuffix("yanked: "+reason, ": ")
	}
	rc.log.served1(served)
	if err := p.serveBlob(rc, sha, ct, filename); err != nil {
		p.fail(rc, EcosystemPyPI, project, err)
	}
}
