package registry

import (
	"strconv"
	"strings"
)

// mediaRange is one element of an Accept header.
type mediaRange struct {
	typ, sub string  // lower case; "*" for wildcards
	q        float64 // 0..1
	pos      int     // position in the header
}

// parseAccept parses an HTTP Accept header into media ranges. Malformed elements are
// skipped; a missing or invalid q counts as 1 and is clamped to [0, 1].
func parseAccept(h string) []mediaRange {
	var out []mediaRange
	for i, part := range strings.Split(h, ",") {
		fields := strings.Split(part, ";")
		mt := strings.ToLower(strings.TrimSpace(fields[0]))
		if mt == "" {
			continue
		}
		typ, sub, ok := strings.Cut(mt, "/")
		typ, sub = strings.TrimSpace(typ), strings.TrimSpace(sub)
		if !ok || typ == "" || sub == "" || (typ == "*" && sub != "*") || strings.ContainsAny(typ+sub, " \t/") {
			continue
		}
		q := 1.0
		for _, p := range fields[1:] {
			k, v, ok := strings.Cut(p, "=")
			if !ok || !strings.EqualFold(strings.TrimSpace(k), "q") {
				continue
			}
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || f != f { // NaN
				f = 1
			}
			q = max(0, min(1, f))
		}
		out = append(out, mediaRange{typ: typ, sub: sub, q: q, pos: i})
	}
	return out
}

// negotiate picks the offer the Accept header prefers. Each offer takes the q of its most
// specific matching range (exact, then type/*, then */*). The highest q wins; ties go to the
// more specific match, then to the range listed first, then to the earlier offer. An empty
// or unparseable header, or one that accepts no offer, yields offers[0] (the default) with
// ok=false when the header explicitly refused everything.
func negotiate(accept string, offers []string) (best string, ok bool) {
	ranges := parseAccept(accept)
	if len(ranges) == 0 {
		return offers[0], true
	}
	bestIdx, bestQ, bestSpec, bestPos := -1, 0.0, -1, 0
	for i, o := range offers {
		typ, sub, _ := strings.Cut(strings.ToLower(o), "/")
		q, spec, pos := -1.0, -1, 0
		for _, r := range ranges {
			s := -1
			switch {
			case r.typ == typ && r.sub == sub:
				s = 2
			case r.typ == typ && r.sub == "*":
				s = 1
			case r.typ == "*" && r.sub == "*":
				s = 0
			}
			if s > spec || (s == spec && r.q > q) {
				q, spec, pos = r.q, s, r.pos
			}
		}
		if spec < 0 || q <= 0 {
			continue
		}
		if bestIdx < 0 || q > bestQ || (q == bestQ && (spec > bestSpec || (spec == bestSpec && pos < bestPos))) {
			bestIdx, bestQ, bestSpec, bestPos = i, q, spec, pos
		}
	}
	if bestIdx < 0 {
		return offers[0], false
	}
	return offers[bestIdx], true
}
