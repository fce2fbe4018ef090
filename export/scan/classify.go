package scan

import (
	"regexp"
	"strings"

	"github.com/envgap/envgap/schemas"
)

// Kinds of public example, used as the card phrase of an automatic decision.
const (
	exampleAWSKey     = "AWS's documentation example key"
	exampleJWT        = "jwt.io's sample token"
	exampleAuthHeader = "an example Authorization header"
	examplePEMMarkers = "PEM key markers as string literals in code"
	examplePlaceholer = "a placeholder instead of a credential"
)

// knownExamples are credentials published as examples by their providers' documentation.
var knownExamples = []struct{ text, kind string }{
	{"AKIAIOSFODNN7EXAMPLE", exampleAWSKey},
	{"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", exampleAWSKey},
	{"AKIAI44QH8DHBEXAMPLE", exampleAWSKey},
	{"je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY", exampleAWSKey},
	// jwt.io's default token: header {"alg":"HS256","typ":"JWT"}, payload John Doe.
	{"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ", exampleJWT},
}

var (
	placeholderRe = regexp.MustCompile(`(?i)^(?:<[^>]*>|\{[^}]*\}|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|%[A-Za-z_]+%|\[[^\]]*\]|x{3,}|\*{3,}|\.{3,}|[._-]+|` +
		`(?:your|my|the|an?|some|insert|example|sample|dummy|fake|test|placeholder)[-_ ]?[a-z_-]*|` +
		`(?:api[-_]?)?(?:token|key|secret|password|passwd|credentials?|access[-_]?token|bearer[-_]?token|jwt|auth[-_]?token)s?|` +
		`<?(?:your|my)[-_ ].*|[A-Z][A-Z0-9_]*(?:TOKEN|KEY|SECRET|PASSWORD)[A-Z0-9_]*)$`)
	base64LineRe = regexp.MustCompile(`^[A-Za-z0-9+/=]{40,}$`)
	pemBeginRe   = regexp.MustCompile(`(?i)-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----`)
	pemEndRe     = regexp.MustCompile(`(?i)-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----`)
)

// genericRules match by context rather than by a provider's token format.
var genericRules = map[string]bool{
	"generic-api-key":   true,
	"curl-auth-header":  true,
	"curl-auth-user":    true,
	RuleAuthHeader:      true,
	RuleGitHubLookalike: true,
}

// classify returns the tier of a hit and, for public examples, what kind of example it is.
// text is the whole scanned text (to look at a private key's body).
func classify(h hit, text string) (schemas.Tier, string) {
	for _, ex := range knownExamples {
		if strings.Contains(h.secret, ex.text) {
			return schemas.TierPublicExample, ex.kind
		}
	}
	if h.rule == "private-key" {
		if pemHasBody(text[h.matchStart:h.matchEnd]) {
			return schemas.TierLikelyReal, ""
		}
		return schemas.TierPublicExample, examplePEMMarkers
	}
	if !genericRules[h.rule] && !strings.Contains(h.rule, "generic") {
		// A provider's token format is never waved through as a placeholder: only the
		// exact published examples above are.
		return schemas.TierLikelyReal, ""
	}
	if h.rule != RuleGitHubLookalike && isPlaceholder(h.secret) {
		if h.rule == RuleAuthHeader || h.rule == "curl-auth-header" {
			return schemas.TierPublicExample, exampleAuthHeader
		}
		return schemas.TierPublicExample, examplePlaceholer
	}
	return schemas.TierToReview, ""
}

// isPlaceholder reports whether a matched value is a stand-in for a credential rather
// than one: <your-token>, ${TOKEN}, YOUR_API_KEY, xxxx, ...
func isPlaceholder(s string) bool {
	s = strings.Trim(s, `"'`+"`")
	if s == "" {
		return true
	}
	if placeholderRe.MatchString(s) {
		return true
	}
	low := strings.ToLower(s)
	for _, w := range []string{"your_", "your-", "<", ">", "{{", "}}", "${", "changeme", "example", "placeholder", "redacted", "dummy"} {
		if strings.Contains(low, w) {
			return true
		}
	}
	return false
}

// pemHasBody reports whether the text between PEM BEGIN and END markers holds key
// material: a line (real or a \n escape) of 40 or more base64 characters.
func pemHasBody(match string) bool {
	b := pemBeginRe.FindStringIndex(match)
	if b == nil {
		return false
	}
	body := match[b[1]:]
	if e := pemEndRe.FindStringIndex(body); e != nil {
		body = body[:e[0]]
	}
	body = strings.NewReplacer(`\r\n`, "\n", `\n`, "\n", `\r`, "\n", "\r", "\n").Replace(body)
	for _, line := range strings.Split(body, "\n") {
		line = strings.Trim(line, " \t\"'`+,;()")
		if strings.HasPrefix(line, "-----END") {
			break
		}
		if base64LineRe.MatchString(line) {
			return true
		}
	}
	return false
}
