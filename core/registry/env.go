package registry

import (
	"net/url"
	"sort"

	"github.com/envgap/envgap/schemas"
)

// ClientEnv returns the environment ("KEY=VALUE", sorted) that points package clients in
// a container at the proxy for one cut-off. baseURL is the proxy's root as the container
// reaches it, or a session root (Session.Root). It sets:
//
//   - PIP_INDEX_URL, UV_INDEX_URL, UV_DEFAULT_INDEX, PIPENV_PYPI_MIRROR: the PyPI index;
//     PIP_TRUSTED_HOST when the proxy is plain http; PIP_DISABLE_PIP_VERSION_CHECK=1,
//     PIP_NO_INPUT=1, UV_EXCLUDE_NEWER (the cut-off, a second guard for uv).
//   - npm_config_registry, YARN_REGISTRY, YARN_NPM_REGISTRY_SERVER: the npm registry;
//     npm_config_before (RFC 3339: a second guard for npm clients that honour it);
//     YARN_UNSAFE_HTTP_WHITELIST for plain http; npm_config_audit=false,
//     npm_config_fund=false, npm_config_update_notifier=false (endpoints the proxy does
//     not serve).
func ClientEnv(baseURL string, cutoff schemas.Cutoff) []string {
	root := trimSlash(baseURL) + "/c/" + cutoff.String()
	pypi := root + "/pypi/simple/"
	npm := root + "/npm/"
	env := map[string]string{
		"PIP_INDEX_URL":                 pypi,
		"PIP_DISABLE_PIP_VERSION_CHECK": "1",
		"PIP_NO_INPUT":                  "1",
		"UV_INDEX_URL":                  pypi,
		"UV_DEFAULT_INDEX":              pypi,
		"UV_EXCLUDE_NEWER":              cutoff.String(),
		"PIPENV_PYPI_MIRROR":            pypi,
		"npm_config_registry":           npm,
		"npm_config_before":             cutoff.String(),
		"npm_config_audit":              "false",
		"npm_config_fund":               "false",
		"npm_config_update_notifier":    "false",
		"YARN_REGISTRY":                 npm,
		"YARN_NPM_REGISTRY_SERVER":      npm,
	}
	if u, err := url.Parse(baseURL); err == nil && u.Scheme == "http" {
		hp, h := hostPort(u)
		env["PIP_TRUSTED_HOST"] = hp
		env["YARN_UNSAFE_HTTP_WHITELIST"] = h
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
