package egress

import (
	"net"
	"net/url"
	"sort"
	"strings"
)

// Env returns the environment ("KEY=VALUE", sorted) that sends a container's clients
// through the session: HTTP_PROXY, HTTPS_PROXY and their lower-case forms, NO_PROXY and
// no_proxy (direct is the registry proxy's host, given as direct, plus localhost), npm's
// npm_config_proxy, npm_config_https_proxy and npm_config_noproxy, and MAVEN_OPTS with
// the JVM's proxy properties (Maven also gets settings.xml proxies, see Files). Each
// proxy URL carries the session's credential in its userinfo, which pip, npm, curl and
// Go's clients send as Proxy-Authorization; the JVM gets it as http(s).proxyUser and
// http(s).proxyPassword.
func (s *Session) Env(direct ...string) []string {
	proxy := s.URL()
	u, _ := url.Parse(proxy)
	pass, _ := u.User.Password()
	noProxy := append([]string{"localhost", "127.0.0.1"}, direct...)
	np := strings.Join(noProxy, ",")
	env := map[string]string{
		"HTTP_PROXY":             proxy,
		"HTTPS_PROXY":            proxy,
		"http_proxy":             proxy,
		"https_proxy":            proxy,
		"NO_PROXY":               np,
		"no_proxy":               np,
		"npm_config_proxy":       proxy,
		"npm_config_https_proxy": proxy,
		"npm_config_noproxy":     np,
		"MAVEN_OPTS": "-Dhttp.proxyHost=" + u.Hostname() + " -Dhttp.proxyPort=" + u.Port() +
			" -Dhttps.proxyHost=" + u.Hostname() + " -Dhttps.proxyPort=" + u.Port() +
			" -Dhttp.proxyUser=" + ProxyUser + " -Dhttp.proxyPassword=" + pass +
			" -Dhttps.proxyUser=" + ProxyUser + " -Dhttps.proxyPassword=" + pass +
			" -Djdk.http.auth.tunneling.disabledSchemes= -Dhttp.nonProxyHosts=" + strings.Join(noProxy, "|"),
	}
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, k+"="+env[k])
	}
	return out
}

// File is a file the session writes outside the work dir (absolute path).
type File struct {
	Path    string
	Content []byte
}

// AptConfPath and MavenSettingsPath are where Files writes apt's and Maven's proxy
// settings in the container (Maven's user settings of root, merged with the image's
// global settings).
const (
	AptConfPath       = "/etc/apt/apt.conf.d/99envgap-egress"
	MavenSettingsPath = "/root/.m2/settings.xml"
)

// Files returns the tools' own proxy settings for the session: apt's
// Acquire::http::Proxy and Acquire::https::Proxy (the proxy URL with its credential),
// and Maven's settings.xml with an http and an https proxy (the credential as username
// and password; nonProxyHosts: the direct hosts).
func (s *Session) Files(direct ...string) []File {
	proxy := s.URL()
	u, _ := url.Parse(proxy)
	host, port := u.Hostname(), u.Port()
	pass, _ := u.User.Password()
	apt := "// Written by envgap: the sandbox's one door out (core/egress).\n" +
		"Acquire::http::Proxy \"" + proxy + "/\";\nAcquire::https::Proxy \"" + proxy + "/\";\n"
	non := strings.Join(append([]string{"localhost", "127.0.0.1"}, direct...), "|")
	var m strings.Builder
	m.WriteString("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- Written by envgap: the sandbox's one door out (core/egress). -->\n<settings>\n  <proxies>\n")
	for _, proto := range []string{"http", "https"} {
		m.WriteString("    <proxy>\n      <id>envgap-egress-" + proto + "</id>\n      <active>true</active>\n      <protocol>" + proto +
			"</protocol>\n      <username>" + ProxyUser + "</username>\n      <password>" + xmlEscape(pass) +
			"</password>\n      <host>" + xmlEscape(host) + "</host>\n      <port>" + port + "</port>\n      <nonProxyHosts>" +
			xmlEscape(non) + "</nonProxyHosts>\n    </proxy>\n")
	}
	m.WriteString("  </proxies>\n</settings>\n")
	return []File{{Path: AptConfPath, Content: []byte(apt)}, {Path: MavenSettingsPath, Content: []byte(m.String())}}
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

// HostOf returns the host of a URL ("http://10.88.0.1:8080" -> "10.88.0.1"), for the
// direct list of Env and Files.
func HostOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	if h, _, err := net.SplitHostPort(u.Host); err == nil {
		return h
	}
	return u.Host
}
