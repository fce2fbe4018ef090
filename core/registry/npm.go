package registry

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/envgap/envgap/schemas"
)

// npm content types.
const (
	ctNPMFull   = "application/json"
	ctNPMAbbrev = "application/vnd.npm.install-v1+json"
)

// abbrevVersionFields are the version fields kept in the abbreviated ("corgi") form.
var abbrevVersionFields = map[string]bool{
	"name": true, "version": true, "deprecated": true, "dependencies": true, "optionalDependencies": true,
	"devDependencies": true, "bundleDependencies": true, "bundledDependencies": true, "peerDependencies": true,
	"peerDependenciesMeta": true, "acceptDependencies": true, "bin": true, "directories": true, "dist": true,
	"engines": true, "cpu": true, "os": true, "libc": true, "_hasShrinkwrap": true, "hasInstallScript": true,
	"funding": true, "license": true,
}

// npmTarball is what the index knows about one version's tarball.
type npmTarball struct {
	version   string
	url       string
	integrity string
	shasum    string
}

// npmIndex is the small per-document summary built by one streaming pass over a packument:
// everything needed to decide, per cut-off, which versions and tags remain.
type npmIndex struct {
	name       string
	created    time.Time
	hasCreated bool
	createdRaw string
	times      map[string]time.Time // version -> publish time (parsable ones only)
	timesRaw   map[string]string
	tags       map[string]string
	versions   []string              // document order
	tarballs   map[string]npmTarball // tarball file name -> info
	tarballOf  map[string]string     // version -> upstream tarball URL
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	t, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := t.(json.Delim); !ok || d != want {
		return fmt.Errorf("expected %q, got %v", want, t)
	}
	return nil
}

func skipValue(dec *json.Decoder) error {
	var raw json.RawMessage
	return dec.Decode(&raw)
}

// indexPackument streams through a full packument once without holding it decoded.
func indexPackument(r io.Reader) (any, error) {
	dec := json.NewDecoder(bufio.NewReaderSize(r, 256<<10))
	if err := expectDelim(dec, '{'); err != nil {
		return nil, fmt.Errorf("not a packument: %w", err)
	}
	idx := &npmIndex{times: map[string]time.Time{}, timesRaw: map[string]string{}, tags: map[string]string{}, tarballs: map[string]npmTarball{}, tarballOf: map[string]string{}}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("not a packument: %w", err)
		}
		key, _ := t.(string)
		switch key {
		case "name":
			if err := dec.Decode(&idx.name); err != nil {
				return nil, fmt.Errorf("packument name: %w", err)
			}
		case "dist-tags":
			var m map[string]any
			if err := dec.Decode(&m); err != nil {
				return nil, fmt.Errorf("packument dist-tags: %w", err)
			}
			for k, v := range m {
				if s, ok := v.(string); ok {
					idx.tags[k] = s
				}
			}
		case "time":
			var m map[string]any
			if err := dec.Decode(&m); err != nil {
				return nil, fmt.Errorf("packument time: %w", err)
			}
			for k, v := range m {
				s, ok := v.(string)
				if !ok {
					continue
				}
				tm, ok := parseRegistryTime(s)
				switch {
				case k == "created":
					idx.created, idx.hasCreated, idx.createdRaw = tm, ok, s
				case k == "modified" || k == "unpublished":
				case ok:
					idx.times[k], idx.timesRaw[k] = tm, s
				}
			}
		case "versions":
			if err := expectDelim(dec, '{'); err != nil {
				return nil, fmt.Errorf("packument versions: %w", err)
			}
			for dec.More() {
				vt, err := dec.Token()
				if err != nil {
					return nil, fmt.Errorf("packument versions: %w", err)
				}
				ver, _ := vt.(string)
				var v struct {
					Dist struct {
						Tarball   string `json:"tarball"`
						Integrity string `json:"integrity"`
						Shasum    string `json:"shasum"`
					} `json:"dist"`
				}
				if err := dec.Decode(&v); err != nil {
					return nil, fmt.Errorf("packument version %q: %w", ver, err)
				}
				idx.versions = append(idx.versions, ver)
				if v.Dist.Tarball != "" {
					idx.tarballOf[ver] = v.Dist.Tarball
					idx.tarballs[tarballFile(v.Dist.Tarball)] = npmTarball{version: ver, url: v.Dist.Tarball, integrity: v.Dist.Integrity, shasum: strings.ToLower(v.Dist.Shasum)}
				}
			}
			if err := expectDelim(dec, '}'); err != nil {
				return nil, fmt.Errorf("packument versions: %w", err)
			}
		default:
			if err := skipValue(dec); err != nil {
				return nil, fmt.Errorf("packument %q: %w", key, err)
			}
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return nil, fmt.Errorf("not a packument: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("not a packument: data after the object")
	}
	return idx, nil
}

func tarballFile(u string) string {
	if pu, err := url.Parse(u); err == nil {
		return path.Base(pu.Path)
	}
	return path.Base(u)
}

// npmView is one cut-off's view of a packument.
type npmView struct {
	kept     map[string]bool
	keptList []string
	tags     map[string]string
	modified time.Time
}

func (p *Proxy) npmViewAt(idx *npmIndex, cutoff schemas.Cutoff, log *Log) (*npmView, error) {
	if idx.hasCreated && !cutoff.Includes(idx.created) {
		return nil, notFound("package %s was created %s, after cut-off %s", idx.name, idx.createdRaw, cutoff.String())
	}
	v := &npmView{kept: map[string]bool{}}
	for _, ver := range idx.versions {
		t, ok := idx.times[ver]
		why := ""
		switch {
		case !ok && !p.opts.IncludeUntimed:
			why = "no publish time"
		case ok && !cutoff.Includes(t):
			why = fmt.Sprintf("published %s after cut-off %s", idx.timesRaw[ver], cutoff.String())
		}
		if why != "" {
			log.hidden1(Event{Ecosystem: EcosystemNPM, Package: idx.name, Version: ver, Reason: why})
			continue
		}
		v.kept[ver] = true
		v.keptList = append(v.keptList, ver)
		if ok && t.After(v.modified) {
			v.modified = t
		}
	}
	if len(v.keptList) == 0 {
		return nil, notFound("package %s has no version published at or before %s", idx.name, cutoff.String())
	}
	v.tags = retargetTags(idx.tags, v.keptList)
	return v, nil
}

// npmName splits the path after "npm" into a package name and what follows.
func npmName(rest []string) (name string, tail []string, ok bool) {
	if len(rest) == 0 || rest[0] == "" {
		return "", nil, false
	}
	first := rest[0]
	if strings.HasPrefix(first, "@") {
		if strings.Contains(first, "/") { // @scope%2fname
			name, tail = first, rest[1:]
		} else if len(rest) >= 2 && rest[1] != "" {
			name, tail = first+"/"+rest[1], rest[2:]
		} else {
			return "", nil, false
		}
	} else {
		name, tail = first, rest[1:]
	}
	if strings.Contains(name, "..") || strings.Count(name, "/") > 1 || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
		return "", nil, false
	}
	if strings.Count(name, "/") == 1 && !strings.HasPrefix(name, "@") {
		return "", nil, false
	}
	return name, tail, true
}

func (p *Proxy) serveNPM(rc *reqCtx) {
	rest := rc.rest[1:]
	if len(rest) >= 1 && rest[0] == "-" {
		if len(rest) == 2 && rest[1] == "ping" {
			rc.w.Header().Set("Content-Type", ctNPMFull)
			io.WriteString(rc.w, "{}\n")
			return
		}
		p.fail(rc, EcosystemNPM, "", notFound("registry endpoint /-/%s is not served by the date-limited proxy", strings.Join(rest[1:], "/")))
		return
	}
	name, tail, ok := npmName(rest)
	if !ok {
		p.fail(rc, EcosystemNPM, "", notFound("use npm/<package>, npm/@scope%%2fname or npm/<package>/-/<file>.tgz"))
		return
	}
	if p.npmErr != nil {
		p.fail(rc, EcosystemNPM, name, badGateway(p.npmErr, "npm upstream unknown"))
		return
	}
	switch {
	case len(tail) == 0 || (len(tail) == 1 && tail[0] == ""):
		p.servePackument(rc, name, "")
	case len(tail) == 2 && tail[0] == "-":
		p.serveTarball(rc, name, tail[1])
	case len(tail) == 1:
		p.servePackument(rc, name, tail[0])
	default:
		p.fail(rc, EcosystemNPM, name, notFound("unknown npm path"))
	}
}

func (p *Proxy) npmDoc(rc *reqCtx, name string, anyAge bool) (*doc, *npmIndex, error) {
	esc := url.PathEscape(name) // "@scope/name" -> "@scope%2Fname"
	u := p.npm.String() + esc
	d, err := p.f.getDoc(rc.r.Context(), u, ctNPMFull, "npm", anyAge, indexPackument)
	if err != nil {
		return nil, nil, err
	}
	return d, d.parsed.(*npmIndex), nil
}

func (p *Proxy) tarballBase(rc *reqCtx, name string) string {
	parts := strings.Split(name, "/")
	for i := range parts {
		parts[i] = url.PathEscape(parts[i])
	}
	return rc.root + "/npm/" + strings.Join(parts, "/") + "/-/"
}

// servePackument answers a packument (one==""), or one version's document (one = a
// version or a dist-tag).
func (p *Proxy) servePackument(rc *reqCtx, name, one string) {
	rc.w.Header().Set("Vary", "Accept")
	d, idx, err := p.npmDoc(rc, name, false)
	if err != nil {
		p.fail(rc, EcosystemNPM, name, err)
		return
	}
	if idx.name == "" {
		idx.name = name
	}
	view, err := p.npmViewAt(idx, rc.cutoff, rc.log)
	if err != nil {
		p.fail(rc, EcosystemNPM, name, err)
		return
	}
	abbrev := false
	if one == "" {
		ct, _ := negotiate(rc.r.Header.Get("Accept"), []string{ctNPMFull, ctNPMAbbrev})
		abbrev = ct == ctNPMAbbrev
	} else {
		if t, ok := view.tags[one]; ok {
			one = t
		}
		if !view.kept[one] {
			p.fail(rc, EcosystemNPM, name, notFound("version %s of %s is not available at cut-off %s", one, name, rc.cutoff.String()))
			return
		}
	}
	body, err := p.f.blobs.OpenBlob(d.meta.SHA256)
	if err != nil {
		p.fail(rc, EcosystemNPM, name, badGateway(err, "metadata cache"))
		return
	}
	defer body.Close()
	ct := ctNPMFull
	if abbrev {
		ct = ctNPMAbbrev
	}
	rc.w.Header().Set("Content-Type", ct)
	form := "full"
	if abbrev {
		form = "abbreviated"
	}
	if one != "" {
		form = "version " + one
	}
	rc.log.served1(Event{Ecosystem: EcosystemNPM, Package: name,
		Reason: fmt.Sprintf("metadata (%s): %d of %d versions, latest %s", form, len(view.keptList), len(idx.versions), view.tags["latest"])})
	if rc.r.Method == http.MethodHead {
		return
	}
	bw := bufio.NewWriterSize(rc.w, 64<<10)
	if one != "" {
		err = streamOneVersion(bw, body, one, idx.tarballOf[one], p.tarballBase(rc, name))
	} else {
		err = streamPackument(bw, body, idx, view, abbrev, p.tarballBase(rc, name))
	}
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		// Headers are gone; the client sees a truncated body. The index pass validated
		// the document, so this is an I/O failure.
		p.log.Error("streaming packument failed", "package", name, "err", err)
	}
}

func writeJSONString(w *bufio.Writer, s string) {
	b, _ := json.Marshal(s)
	w.Write(b)
}

// rewriteVersion turns one version object into its served form: the tarball URL points
// at the proxy and, for the abbreviated form, only install-relevant fields remain. The full
// form is copied as is apart from the URL (a byte-level replacement of the JSON string the
// index recorded), so that a large packument streams without re-encoding.
func rewriteVersion(raw json.RawMessage, oldTarball string, abbrev bool, tarballBase string) ([]byte, error) {
	var oldJS, newJS []byte
	if oldTarball != "" {
		oldJS, _ = json.Marshal(oldTarball)
		newJS, _ = json.Marshal(tarballBase + url.PathEscape(tarballFile(oldTarball)))
	}
	if !abbrev && oldJS != nil && bytes.Contains(raw, oldJS) {
		return bytes.ReplaceAll(raw, oldJS, newJS), nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	if abbrev {
		if _, ok := m["hasInstallScript"]; !ok {
			var scripts map[string]any
			if json.Unmarshal(m["scripts"], &scripts) == nil {
				for _, s := range []string{"preinstall", "install", "postinstall"} {
					if _, ok := scripts[s]; ok {
						m["hasInstallScript"] = json.RawMessage("true")
						break
					}
				}
			}
		}
		for k := range m {
			if !abbrevVersionFields[k] {
				delete(m, k)
			}
		}
	}
	if d, ok := m["dist"]; ok && oldJS != nil && bytes.Contains(d, oldJS) {
		m["dist"] = bytes.ReplaceAll(d, oldJS, newJS)
	} else if ok {
		var dist map[string]json.RawMessage
		if err := json.Unmarshal(d, &dist); err == nil {
			var tb string
			if json.Unmarshal(dist["tarball"], &tb) == nil && tb != "" {
				dist["tarball"], _ = json.Marshal(tarballBase + url.PathEscape(tarballFile(tb)))
				if b, err := json.Marshal(dist); err == nil {
					m["dist"] = b
				}
			}
		}
	}
	// Write the object by hand: the values are valid JSON from the decoder already.
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, k := range sortedKeys(m) {
		if i > 0 {
			buf.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(m[k])
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// streamPackument writes the filtered packument while reading the cached upstream copy
// token by token: only one version object is decoded at a time.
func streamPackument(w *bufio.Writer, r io.Reader, idx *npmIndex, view *npmView, abbrev bool, tarballBase string) error {
	dec := json.NewDecoder(bufio.NewReaderSize(r, 256<<10))
	if err := expectDelim(dec, '{'); err != nil {
		return err
	}
	w.WriteByte('{')
	first := true
	writeKey := func(k string) {
		if !first {
			w.WriteByte(',')
		}
		first = false
		writeJSONString(w, k)
		w.WriteByte(':')
	}
	wroteTime := false
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := t.(string)
		switch key {
		case "versions":
			if err := expectDelim(dec, '{'); err != nil {
				return err
			}
			writeKey("versions")
			w.WriteByte('{')
			vfirst := true
			for dec.More() {
				vt, err := dec.Token()
				if err != nil {
					return err
				}
				ver, _ := vt.(string)
				if !view.kept[ver] {
					if err := skipValue(dec); err != nil {
						return err
					}
					continue
				}
				var raw json.RawMessage
				if err := dec.Decode(&raw); err != nil {
					return err
				}
				b, err := rewriteVersion(raw, idx.tarballOf[ver], abbrev, tarballBase)
				if err != nil {
					return err
				}
				if !vfirst {
					w.WriteByte(',')
				}
				vfirst = false
				writeJSONString(w, ver)
				w.WriteByte(':')
				w.Write(b)
			}
			if err := expectDelim(dec, '}'); err != nil {
				return err
			}
			w.WriteByte('}')
		case "time":
			if err := skipValue(dec); err != nil {
				return err
			}
			writeKey("time")
			writeTimes(w, idx, view)
			wroteTime = true
		case "dist-tags":
			if err := skipValue(dec); err != nil {
				return err
			}
			writeKey("dist-tags")
			b, _ := json.Marshal(view.tags)
			w.Write(b)
		case "modified":
			if err := skipValue(dec); err != nil {
				return err
			}
		default:
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return err
			}
			if abbrev && key != "name" {
				continue
			}
			writeKey(key)
			w.Write(raw)
		}
	}
	if !wroteTime && len(idx.timesRaw) > 0 {
		writeKey("time")
		writeTimes(w, idx, view)
	}
	if abbrev && !view.modified.IsZero() {
		writeKey("modified")
		writeJSONString(w, view.modified.Format("2006-01-02T15:04:05.000Z"))
	}
	w.WriteByte('}')
	return nil
}

// writeTimes writes the time object of the view: created (if at or before the cut-off,
// which npmViewAt guarantees), modified = the newest kept publish time, and one entry per
// kept version, in document order.
func writeTimes(w *bufio.Writer, idx *npmIndex, view *npmView) {
	w.WriteByte('{')
	first := true
	put := func(k, v string) {
		if !first {
			w.WriteByte(',')
		}
		first = false
		writeJSONString(w, k)
		w.WriteByte(':')
		writeJSONString(w, v)
	}
	if idx.hasCreated {
		put("created", idx.createdRaw)
	}
	if !view.modified.IsZero() {
		put("modified", view.modified.Format("2006-01-02T15:04:05.000Z"))
	}
	for _, v := range view.keptList {
		if s, ok := idx.timesRaw[v]; ok {
			put(v, s)
		}
	}
	w.WriteByte('}')
}

// streamOneVersion writes the document of one version.
func streamOneVersion(w *bufio.Writer, r io.Reader, ver, oldTarball, tarballBase string) error {
	dec := json.NewDecoder(bufio.NewReaderSize(r, 256<<10))
	if err := expectDelim(dec, '{'); err != nil {
		return err
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		if key, _ := t.(string); key != "versions" {
			if err := skipValue(dec); err != nil {
				return err
			}
			continue
		}
		if err := expectDelim(dec, '{'); err != nil {
			return err
		}
		for dec.More() {
			vt, err := dec.Token()
			if err != nil {
				return err
			}
			if v, _ := vt.(string); v != ver {
				if err := skipValue(dec); err != nil {
					return err
				}
				continue
			}
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return err
			}
			b, err := rewriteVersion(raw, oldTarball, false, tarballBase)
			if err != nil {
				return err
			}
			_, err = w.Write(b)
			return err
		}
		break
	}
	return fmt.Errorf("version %s not in document", ver)
}

func (p *Proxy) serveTarball(rc *reqCtx, name, file string) {
	find := func(anyAge bool) (npmTarball, *npmIndex, bool, error) {
		_, idx, err := p.npmDoc(rc, name, anyAge)
		if err != nil {
			return npmTarball{}, nil, false, err
		}
		tb, ok := idx.tarballs[file]
		return tb, idx, ok, nil
	}
	tb, idx, ok, err := find(true)
	if err == nil && !ok {
		tb, idx, ok, err = find(false)
	}
	if err != nil {
		p.fail(rc, EcosystemNPM, name, err)
		return
	}
	if !ok {
		p.fail(rc, EcosystemNPM, name, notFound("%s has no tarball %s", name, file))
		return
	}
	why := ""
	t, hasTime := idx.times[tb.version]
	switch {
	case idx.hasCreated && !rc.cutoff.Includes(idx.created):
		why = fmt.Sprintf("package created %s after cut-off %s", idx.createdRaw, rc.cutoff.String())
	case !hasTime && !p.opts.IncludeUntimed:
		why = "no publish time"
	case hasTime && !rc.cutoff.Includes(t):
		why = fmt.Sprintf("published %s after cut-off %s", idx.timesRaw[tb.version], rc.cutoff.String())
	}
	if why != "" {
		rc.log.hidden1(Event{Ecosystem: EcosystemNPM, Package: name, Version: tb.version, File: file, Reason: why})
		if !p.opts.Lenient {
			p.fail(rc, EcosystemNPM, name, notFound("%s@%s is hidden at cut-off %s: %s", name, tb.version, rc.cutoff.String(), why))
			return
		}
	}
	want := digests{sha1: tb.shasum}
	if strings.HasPrefix(tb.integrity, "sha512-") {
		want.integrity = tb.integrity
	}
	sha, err := p.f.getBlob(rc.r.Context(), tb.url, want)
	if err != nil {
		p.fail(rc, EcosystemNPM, name, err)
		return
	}
	rc.log.served1(Event{Ecosystem: EcosystemNPM, Package: name, Version: tb.version, File: file})
	if err := p.serveBlob(rc, sha, "application/octet-stream", file); err != nil {
		p.fail(rc, EcosystemNPM, name, err)
	}
}

// sortedKeys is a small helper for deterministic output in tests and logs.
func sortedKeys[M ~map[string]V, V any](m M) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
