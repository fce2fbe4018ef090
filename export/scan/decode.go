package scan

import (
	"encoding/base64"
	"strings"
)

// The decoding pre-check (see the package doc, "Speed"): gitleaks' decoder
// (detect/codec) finds encoded values with one regex,
//
//	%[0-9A-Fa-f]{2}(?:.*%[0-9A-Fa-f]{2})?                                   percent
//	(?:U\+[a-fA-F0-9]{4}(?:\s|$))+|(?i)(?:\\{1,2}u[a-fA-F0-9]{4})+            unicode
//	[0-9A-Fa-f]{32,}                                                        hex
//	[\w\/+-]{16,}={0,2}                                                     base64
//
// tried in this order at each position (leftmost-first), and keeps a value when its
// decoding is not empty: hex and base64 only decode to printable ASCII (bytes 0x09 to
// 0x7e), and only values holding a digit (hex) or one of 0-9+/-_ (base64).
//
// On a line without a percent, unicode or U+ candidate only the hex and base64
// alternatives can match, and only at the start of a maximal run R of base64
// characters of at least 16 bytes (a match of either is such a run's prefix, and no
// earlier match can end inside R except a hex match at R's start): the hex run at R's
// start when it is 32 bytes or longer (then the rest of R, at most, as base64), or R
// with up to two '=' after it as base64. decodeCandidate decodes exactly those values
// as the decoder would, so a line it rejects holds nothing the decoder decodes.

// decodeCandidate is a necessary condition for gitleaks' decoder to decode part of line.
// It reads the line once: a percent or backslash escape outside the runs of base64
// characters, and in each run a "U+" escape or the hex and base64 values above.
func decodeCandidate(l string) bool {
	return decodeCandidateU(l, true)
}

// decodeCandidateU is decodeCandidate; with unicodePlus false the line holds no "U+".
// Escapes are found with IndexByte. Runs of 16 or more bytes of the base64 class are
// found with a stride of 16: such a run holds the last byte of each block of 16 it
// covers, so a block whose last byte is outside the class is skipped whole, and
// otherwise the run through that byte is measured both ways (it starts in the block:
// the byte before the block is outside the class).
func decodeCandidateU(l string, unicodePlus bool) bool {
	n := len(l)
	for i := 0; ; i++ {
		j := strings.IndexByte(l[i:], '%')
		if j < 0 {
			break
		}
		i += j
		if i+2 < n && isHex(l[i+1]) && isHex(l[i+2]) {
			return true
		}
	}
	for i := 0; ; i++ {
		// \u1234 or \\u1234 (case-insensitive).
		j := strings.IndexByte(l[i:], '\\')
		if j < 0 {
			break
		}
		i += j
		if i+1 < n && (l[i+1] == 'u' || l[i+1] == 'U') && countClass(l, i+2, 4, clsHex) == 4 {
			return true
		}
	}
	for i := 0; unicodePlus; i++ {
		// U+1234.
		j := strings.Index(l[i:], "U+")
		if j < 0 {
			break
		}
		i += j
		if countClass(l, i+2, 4, clsHex) == 4 {
			return true
		}
	}
	for i := 0; i+16 <= n; {
		if !isB64Class(l[i+15]) {
			i += 16
			continue
		}
		s, e := i+15, i+16
		for s > i && isB64Class(l[s-1]) {
			s--
		}
		for e < n && isB64Class(l[e]) {
			e++
		}
		if r := e - s; r >= 16 {
			h := countClass(l, s, r, clsHex)
			if h >= 32 {
				if hexDecodes(l[s : s+h]) {
					return true
				}
				if r-h >= 16 && b64Decodes(l[s+h:e]+l[e:e+count(l, e, 2, isEq)]) {
					return true
				}
			} else if b64Decodes(l[s : e+count(l, e, 2, isEq)]) {
				return true
			}
		}
		i = e + 1
	}
	return false
}

func isHex(c byte) bool { return byteClass[c]&clsHex != 0 }
func isEq(c byte) bool  { return c == '=' }

// isB64Class is the decoder's base64 class [\w\/+-].
func isB64Class(c byte) bool { return byteClass[c]&clsB64 != 0 }

func isPrintable(c byte) bool { return 0x08 < c && c < 0x7f }

func hexVal(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// hexDecodes is the decoder's decodeHex(s) != "" for s of hex digits.
func hexDecodes(s string) bool {
	if len(s)%2 != 0 {
		return false
	}
	digit := false
	for i := 0; i < len(s); i++ {
		if '0' <= s[i] && s[i] <= '9' {
			digit = true
			break
		}
	}
	if !digit {
		return false
	}
	for i := 0; i < len(s); i += 2 {
		if !isPrintable(hexVal(s[i])<<4 | hexVal(s[i+1])) {
			return false
		}
	}
	return true
}

// b64Decodes is the decoder's decodeBase64(s) != "".
func b64Decodes(s string) bool {
	likely := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if '0' <= c && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_' {
			likely = true
			break
		}
	}
	if !likely {
		return false
	}
	// Every decoded byte below 0x7f: the first of each group of four characters
	// encodes a byte's top six bits, so its value is below 32 (A-Z, a-f) in both
	// alphabets. A cheap test that rejects most identifiers before decoding.
	for i := 0; i < len(s); i += 4 {
		if c := s[i]; !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && printableBytes(b) {
			return true
		}
	}
	return false
}

func printableBytes(b []byte) bool {
	for _, c := range b {
		if !isPrintable(c) {
			return false
		}
	}
	return true
}
