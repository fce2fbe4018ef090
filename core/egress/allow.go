package egress

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"net"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/envgap/envgap/core/sandbox"
)

// Runner is the part of the sandbox ImageHosts uses.
type Runner interface {
	Run(ctx context.Context, spec sandbox.Spec) (*sandbox.Result, error)
}

// ProbeLabel marks the container ImageHosts runs to read an image's sources.
const ProbeLabel = "org.envgap.egress-probe"

// probeDir is where the probe copies Maven's files for collection.
const probeDir = "/tmp/envgap-egress-probe"

// probeCommand prints the image's apt sources and copies Maven's super POM carrier (the
// maven-model-builder jar) and settings files into probeDir.
const probeCommand = `cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null
mkdir -p ` + probeDir + `
m=$(command -v mvn 2>/dev/null) && m=$(readlink -f "$m") && d=$(dirname "$(dirname "$m")")
for f in "${MAVEN_HOME:-/nonexistent}"/lib/maven-model-builder-*.jar "${d:-/nonexistent}"/lib/maven-model-builder-*.jar /usr/share/maven/lib/maven-model-builder-*.jar; do
  [ -f "$f" ] && cp "$f" ` + probeDir + `/model-builder.jar && break
done
i=0
for f in "${MAVEN_HOME:-/nonexistent}"/conf/settings.xml "${d:-/nonexistent}"/conf/settings.xml /etc/maven/settings.xml /usr/share/maven/conf/settings.xml "$HOME/.m2/settings.xml"; do
  [ -f "$f" ] && i=$((i+1)) && cp "$f" ` + probeDir + `/settings-$i.xml
done
true`

// ImageHosts returns the allowlist of an image ("host:port", sorted): the hosts of its
// apt sources (one-line and deb822 files, http and https URIs) and of its Maven
// repositories (the super POM's repositories in Maven's own jar, and the repositories and
// mirrors of its settings files). It runs the image once without network. file: and
// other non-http URIs are not hosts and are left out.
func ImageHosts(ctx context.Context, r Runner, image string) ([]string, error) {
	res, err := r.Run(ctx, sandbox.Spec{Image: image, Network: sandbox.NetworkNone,
		Steps:   []sandbox.Step{{Name: "egress:probe", Command: probeCommand, Timeout: time.Minute}},
		Collect: []string{probeDir}, Labels: map[string]string{ProbeLabel: "1"}})
	if err != nil {
		return nil, fmt.Errorf("reading the package sources of %s: %w", image, err)
	}
	if len(res.Steps) != 1 || res.Steps[0].ExitCode != 0 {
		return nil, fmt.Errorf("reading the package sources of %s: the probe failed: %s", image, res.Steps[0].Output)
	}
	set := map[string]bool{}
	for _, u := range AptSourceURLs(res.Steps[0].Output) {
		addURL(set, u)
	}
	for p, b := range res.Collected {
		var urls []string
		switch {
		case path.Base(p) == "model-builder.jar":
			urls, err = superPOMURLs(b)
		case strings.HasSuffix(p, ".xml"):
			urls, err = MavenURLs(b)
		}
		if err != nil {
			return nil, fmt.Errorf("reading the Maven repositories of %s (%s): %w", image, path.Base(p), err)
		}
		for _, u := range urls {
			addURL(set, u)
		}
	}
	out := make([]string, 0, len(set))
	for h := range set {
		out = append(out, h)
	}
	slices.Sort(out)
	return out, nil
}

func addURL(set map[string]bool, raw string) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return
	}
	if strings.ContainsAny(u.Host, "$@") { // an unexpanded ${variable} or credentials
		return
	}
	set[strings.ToLower(net.JoinHostPort(u.Hostname(), strconv.Itoa(portOf(u))))] = true
}

// AptSourceURLs returns the URIs of apt source lines: one-line format ("deb [opts] URI
// suite ...", "deb-src ...") and deb822 stanzas ("URIs: a b").
func AptSourceURLs(text []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		switch {
		case f[0] == "deb" || f[0] == "deb-src":
			rest := strings.TrimSpace(strings.TrimPrefix(line, f[0]))
			if strings.HasPrefix(rest, "[") {
				end := strings.IndexByte(rest, ']')
				if end < 0 {
					continue
				}
				rest = rest[end+1:]
			}
			if g := strings.Fields(rest); len(g) > 0 {
				out = append(out, g[0])
			}
		case strings.EqualFold(f[0], "URIs:"):
			out = append(out, f[1:]...)
		}
	}
	return out
}

// MavenURLs returns the url of every mirror, repository and pluginRepository of a Maven
// settings file or POM.
func MavenURLs(doc []byte) ([]string, error) {
	d := xml.NewDecoder(bytes.NewReader(doc))
	d.Strict = false
	var stack []string
	var out []string
	var text strings.Builder
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			stack = append(stack, t.Name.Local)
			text.Reset()
		case xml.CharData:
			text.Write(t)
		case xml.EndElement:
			if n := len(stack); n >= 2 && stack[n-1] == "url" {
				switch stack[n-2] {
				case "mirror", "repository", "pluginRepository":
					out = append(out, strings.TrimSpace(text.String()))
				}
			}
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			text.Reset()
		}
	}
}

// superPOM is where Maven keeps the POM every project inherits from (and with it the
// default repository).
const superPOM = "org/apache/maven/model/pom-4.0.0.xml"

func superPOMURLs(jar []byte) ([]string, error) {
	zr, err := zip.NewReader(bytes.NewReader(jar), int64(len(jar)))
	if err != nil {
		return nil, err
	}
	f, err := zr.Open(superPOM)
	if err != nil {
		return nil, fmt.Errorf("no %s: %w", superPOM, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return nil, err
	}
	return MavenURLs(b)
}
