package schemas

import "strings"

// RedactedToken replaces a credential in text that came from elsewhere.
const RedactedToken = "[token]"

// RedactToken returns text with every occurrence of token replaced by RedactedToken: for
// what a server sends back (an error body or a header that echoes the Authorization
// header) before it is printed or stored. An empty token changes nothing.
func RedactToken[T ~string | ~[]byte](text T, token string) T {
	s := string(text)
	if token == "" || !strings.Contains(s, token) {
		return text
	}
	return T(strings.ReplaceAll(s, token, RedactedToken))
}
