package site

import (
	"fmt"
	"html"
	"strings"
)

// Chart is a board's bar chart as inline SVG, drawn from the board's rows: per row (in
// rank order) the first-attempt resolved share as a solid bar and the best within the
// attempts as an outlined bar behind it. Text is SVG text; colours are presentation
// attributes (the pages allow no inline style).
func Chart(b Board) string {
	const (
		width, left, right = 760, 230, 60
		top, rowH, barH    = 44, 30, 18
	)
	h := top + rowH*len(b.Rows) + 16
	span := float64(width - left - right)
	var s strings.Builder
	fmt.Fprintf(&s, `<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="%s">`,
		width, h, width, h, html.EscapeString(fmt.Sprintf("%s board: resolved on the first attempt, per agent", b.Set)))
	fmt.Fprintf(&s, `<title>%s</title>`, html.EscapeString(fmt.Sprintf("%s: resolved, first attempt (percent of scored tasks)", b.Set)))
	s.WriteString(`<rect x="0" y="0" width="100%" height="100%" fill="#ffffff"/>`)
	fmt.Fprintf(&s, `<rect x="%d" y="10" width="14" height="14" fill="#0072b2"/><text x="%d" y="22" font-size="13" fill="#222222">resolved, first attempt (ranked)</text>`, left, left+20)
	fmt.Fprintf(&s, `<rect x="%d" y="10" width="14" height="14" fill="none" stroke="#e69f00" stroke-width="2"/><text x="%d" y="22" font-size="13" fill="#222222">best within attempts</text>`, left+250, left+270)
	fmt.Fprintf(&s, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#999999"/>`, left, top-6, left, top+rowH*len(b.Rows))
	for i, r := range b.Rows {
		y := top + i*rowH
		label := fmt.Sprintf("%d%s. %s", r.Rank, map[bool]string{true: "=", false: ""}[r.Tied], r.Row.Agent)
		if len([]rune(label)) > 32 {
			label = string([]rune(label)[:31]) + "…"
		}
		fmt.Fprintf(&s, `<text x="%d" y="%d" font-size="13" text-anchor="end" fill="#222222">%s</text>`, left-8, y+barH-4, html.EscapeString(label))
		if r.Row.MaxAttempts > 1 && r.Row.Best.Of > 0 {
			fmt.Fprintf(&s, `<rect class="best" x="%d" y="%d" width="%.1f" height="%d" fill="none" stroke="#e69f00" stroke-width="2"/>`, left, y, r.Row.Best.Share*span, barH)
		}
		w := r.Row.Resolved.Share * span
		fmt.Fprintf(&s, `<rect class="first" x="%d" y="%d" width="%.1f" height="%d" fill="#0072b2"/>`, left, y+3, w, barH-6)
		text := "-"
		if r.Row.Resolved.Of > 0 {
			text = fmt.Sprintf("%.1f%%", 100*r.Row.Resolved.Share)
		}
		fmt.Fprintf(&s, `<text x="%.1f" y="%d" font-size="12" fill="#222222">%s</text>`, float64(left)+max(w, r.Row.Best.Share*span)+6, y+barH-4, text)
	}
	s.WriteString(`</svg>`)
	return s.String()
}
