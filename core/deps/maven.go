package deps

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"

	"github.com/envgap/envgap/schemas"
)

// pomFile is the part of a pom.xml D1 reads. Paths are relative to <project>, so
// dependencies of plugins (build/plugins/plugin/dependencies) and of profiles are not
// matched.
type pomFile struct {
	GroupID    string    `xml:"groupId"`
	ArtifactID string    `xml:"artifactId"`
	Version    string    `xml:"version"`
	Packaging  string    `xml:"packaging"`
	Parent     pomParent `xml:"parent"`
	Properties pomProps  `xml:"properties"`
	Deps       []pomDep  `xml:"dependencies>dependency"`
	Managed    []pomDep  `xml:"dependencyManagement>dependencies>dependency"`
	Modules    []string  `xml:"modules>module"`
}

type pomParent struct {
	GroupID    string `xml:"groupId"`
	ArtifactID string `xml:"artifactId"`
	Version    string `xml:"version"`
}

type pomDep struct {
	GroupID    string `xml:"groupId"`
	ArtifactID string `xml:"artifactId"`
	Version    string `xml:"version"`
	Scope      string `xml:"scope"`
	Type       string `xml:"type"`
	Classifier string `xml:"classifier"`
	Optional   string `xml:"optional"`
}

// pomProps is <properties>: element name → text.
type pomProps map[string]string

// UnmarshalXML reads every child element of <properties>.
func (p *pomProps) UnmarshalXML(d *xml.Decoder, start xml.StartElement) error {
	*p = pomProps{}
	for {
		tok, err := d.Token()
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			var v string
			if err := d.DecodeElement(&v, &t); err != nil {
				return err
			}
			(*p)[t.Name.Local] = strings.TrimSpace(v)
		case xml.EndElement:
			return nil
		}
	}
}

// pomContext is what a module inherits from its parent pom.
type pomContext struct {
	props   map[string]string
	managed map[string]string // groupId:artifactId → version
}

var propRe = regexp.MustCompile(`\$\{([^}]+)\}`)

// MavenPinned reports whether a Maven version is one concrete release: not missing, not
// a range ("[1.0,2.0)"), not LATEST/RELEASE, not a -SNAPSHOT (which moves), and with
// every ${property} resolved.
func MavenPinned(v string) bool {
	v = strings.TrimSpace(v)
	return v != "" && !strings.ContainsAny(v, "[](),${}") && v != "LATEST" && v != "RELEASE" &&
		!strings.HasSuffix(v, "-SNAPSHOT")
}

// pom reads <dependencies> of a pom.xml (not dependencyManagement, not plugins), then the
// <modules> inside the project. Name is groupId:artifactId: Maven's identity, which the
// registry audit needs; Compare matches Java names by artifactId, as the paper does.
// Versions are resolved from <properties> (the parent's too), project.* values and the
// dependencyManagement of the pom and its parents. test-scoped dependencies are left
// out, like devDependencies: the classpath execution traces only runtime jars.
func (c *collector) pom(p string, parent *pomContext) error {
	if !c.markRead(p) {
		return nil
	}
	data, err := fs.ReadFile(c.files, p)
	if err != nil {
		return err
	}
	var pf pomFile
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict = false
	if err := dec.Decode(&pf); err != nil {
		c.unread("%s is not valid XML (Maven cannot read it either): %v", p, err)
		return nil
	}
	ctx := &pomContext{props: map[string]string{}, managed: map[string]string{}}
	if parent != nil {
		for k, v := range parent.props {
			ctx.props[k] = v
		}
		for k, v := range parent.managed {
			ctx.managed[k] = v
		}
	}
	group := firstNonEmpty(pf.GroupID, pf.Parent.GroupID)
	version := firstNonEmpty(pf.Version, pf.Parent.Version)
	for k, v := range pf.Properties {
		ctx.props[k] = v
	}
	for k, v := range map[string]string{
		"project.groupId": group, "project.artifactId": pf.ArtifactID, "project.version": version,
		"pom.groupId": group, "pom.artifactId": pf.ArtifactID, "pom.version": version,
		"groupId": group, "artifactId": pf.ArtifactID, "version": version,
		"project.parent.version": pf.Parent.Version, "project.parent.groupId": pf.Parent.GroupID,
	} {
		if v != "" {
			ctx.props[k] = v
		}
	}
	resolve := func(s string) string {
		for n := 0; n < 10 && strings.Contains(s, "${"); n++ {
			s = propRe.ReplaceAllStringFunc(s, func(m string) string {
				if v, ok := ctx.props[m[2:len(m)-1]]; ok {
					return v
				}
				return m
			})
		}
		return strings.TrimSpace(s)
	}
	if group != "" && pf.ArtifactID != "" {
		c.self = append(c.self, resolve(group)+":"+resolve(pf.ArtifactID))
	}
	for _, m := range pf.Managed {
		if m.Scope == "import" {
			continue
		}
		ctx.managed[resolve(m.GroupID)+":"+resolve(m.ArtifactID)] = resolve(m.Version)
	}
	for _, d := range pf.Deps {
		name := resolve(d.GroupID) + ":" + resolve(d.ArtifactID)
		if strings.TrimSpace(d.Scope) == "test" {
			c.testScope = append(c.testScope, name)
			continue
		}
		v := resolve(d.Version)
		if v == "" {
			v = ctx.managed[name]
		}
		c.add(schemas.Dependency{Name: name, Spec: v, Pinned: MavenPinned(v), From: p})
	}
	for _, m := range pf.Modules {
		m = strings.TrimSpace(m)
		dir, ok := inside(p, m)
		if !ok {
			c.note("%s: module %s is outside the project, not followed", p, m)
			continue
		}
		mp := dir
		if !strings.HasSuffix(mp, ".xml") {
			mp = path.Join(dir, "pom.xml")
		}
		exists, err := IsFile(c.files, mp)
		if err != nil {
			return err
		}
		if !exists {
			c.unread("%s: module %s has no %s", p, m, mp)
			continue
		}
		if err := c.pom(mp, ctx); err != nil {
			return fmt.Errorf("module %s: %w", m, err)
		}
	}
	if parent == nil {
		c.dropSelf()
	}
	return nil
}

// dropSelf removes dependencies on the project's own modules (a multi-module build's
// modules depend on each other).
func (c *collector) dropSelf() {
	self := map[string]bool{}
	for _, s := range c.self {
		self[s] = true
	}
	var keep []schemas.Dependency
	for _, d := range c.deps {
		if !self[d.Name] {
			keep = append(keep, d)
		}
	}
	c.deps = keep
	c.index = map[string]int{}
	for i, d := range c.deps {
		c.index[d.Name] = i
	}
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x = strings.TrimSpace(x); x != "" {
			return x
		}
	}
	return ""
}
