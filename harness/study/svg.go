package study

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/envgap/envgap/data"
	"github.com/envgap/envgap/schemas"
)

// The figures are SVG files written by hand: no plotting library, text a browser or a
// Markdown viewer shows as it is, and small.

var palette = []string{"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f"}

type svg struct {
	b    strings.Builder
	w, h int
}

func newSVG(w, h int, title string) *svg {
	s := &svg{w: w, h: h}
	fmt.Fprintf(&s.b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", w, h, w, h)
	s.b.WriteString(`<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="6" stroke="#555" stroke-width="2"/></pattern></defs>` + "\n")
	fmt.Fprintf(&s.b, `<rect width="%d" height="%d" fill="white"/>`+"\n", w, h)
	s.text(float64(w)/2, 20, "middle", 14, title)
	return s
}

func (s *svg) text(x, y float64, anchor string, size int, t string) {
	fmt.Fprintf(&s.b, `<text x="%.1f" y="%.1f" text-anchor="%s" font-size="%d">%s</text>`+"\n", x, y, anchor, size, html.EscapeString(t))
}

func (s *svg) rect(x, y, w, h float64, fill, title string) {
	fmt.Fprintf(&s.b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" stroke="#333" stroke-width="0.5"><title>%s</title></rect>`+"\n", x, y, w, h, fill, html.EscapeString(title))
}

func (s *svg) line(x1, y1, x2, y2 float64, stroke, dash string) {
	d := ""
	if dash != "" {
		d = fmt.Sprintf(` stroke-dasharray="%s"`, dash)
	}
	fmt.Fprintf(&s.b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s"%s/>`+"\n", x1, y1, x2, y2, stroke, d)
}

func (s *svg) String() string { return s.b.String() + "</svg>\n" }

// legend draws colour keys in a row at y.
func (s *svg) legend(x, y float64, names []string, fills []string) {
	for i, n := range names {
		s.rect(x, y-9, 10, 10, fills[i], n)
		s.text(x+14, y, "start", 11, n)
		x += 24 + 7*float64(len(n))
	}
}

// bars is a grouped bar chart over [0, 1] (shares): one group per category, one bar per
// series; extra, when not nil, stacks a hatched extension on each bar (the self-correction
// gain on top of SR(0)). ref, when > 0, draws a dotted reference line.
func bars(title string, cats, series []string, val, extra [][]float64, ref float64, legend []string) string {
	const left, top, bottom, ph = 50.0, 50.0, 70.0, 220.0
	bw := 14.0
	gw := float64(len(series))*bw + 16
	w := int(left + gw*float64(len(cats)) + 20)
	if w < 420 {
		w = 420
	}
	s := newSVG(w, int(top+ph+bottom), title)
	y := func(v float64) float64 { return top + ph - v*ph }
	for _, t := range []float64{0, 0.25, 0.5, 0.75, 1} {
		s.line(left, y(t), float64(w)-10, y(t), "#ddd", "")
		s.text(left-4, y(t)+4, "end", 10, fmt.Sprintf("%.0f%%", t*100))
	}
	if ref > 0 {
		s.line(left, y(ref), float64(w)-10, y(ref), "#333", "3,3")
	}
	for c, cat := range cats {
		x0 := left + float64(c)*gw + 8
		for i := range series {
			v := clamp01(val[i][c])
			x := x0 + float64(i)*bw
			s.rect(x, y(v), bw-2, v*ph, palette[i%len(palette)], fmt.Sprintf("%s, %s: %.1f%%", series[i], cat, v*100))
			if extra != nil {
				e := clamp01(v+extra[i][c]) - v
				if e > 0 {
					fmt.Fprintf(&s.b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" fill-opacity="0.35"/>`+"\n", x, y(v+e), bw-2, e*ph, palette[i%len(palette)])
					s.rect(x, y(v+e), bw-2, e*ph, "url(#hatch)", fmt.Sprintf("%s, %s: +%.1f%% after repair", series[i], cat, e*100))
				}
			}
		}
		s.text(x0+gw/2-8, top+ph+16, "middle", 11, cat)
	}
	fills := make([]string, len(series))
	for i := range series {
		fills[i] = palette[i%len(palette)]
	}
	names := append([]string(nil), series...)
	if legend != nil {
		names = append(names, legend...)
		for range legend {
			fills = append(fills, "url(#hatch)")
		}
	}
	s.legend(left, top+ph+45, names, fills)
	return s.String()
}

func clamp01(v float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return math.Max(0, math.Min(1, v))
}

// stacked draws one horizontal bar per row, split into segments by share.
func stacked(title string, rows []string, segs []string, fills []string, val [][]float64) string {
	const left, top, bw, rh = 180.0, 40.0, 420.0, 18.0
	h := int(top + rh*float64(len(rows)) + 50)
	s := newSVG(int(left+bw+30), h, title)
	for r, row := range rows {
		y := top + float64(r)*rh
		s.text(left-6, y+rh-6, "end", 11, row)
		x := left
		for i, seg := range segs {
			w := val[r][i] * bw
			if w > 0 {
				s.rect(x, y+2, w, rh-4, fills[i], fmt.Sprintf("%s, %s: %.1f%%", row, seg, val[r][i]*100))
			}
			x += w
		}
	}
	s.legend(left, top+rh*float64(len(rows))+30, segs, fills)
	return s.String()
}

// boxes draws one box plot per group on a log10 axis.
func boxes(title string, names []string, ins []Inflation) string {
	const left, top, ph = 60.0, 40.0, 240.0
	w := int(left + 110*float64(len(names)) + 20)
	s := newSVG(w, int(top+ph+50), title)
	lo, hi := 0.0, 1.0 // log10 range, at least 1..10
	for _, in := range ins {
		for _, v := range in.Values {
			if v > 0 {
				lo, hi = math.Min(lo, math.Floor(math.Log10(v))), math.Max(hi, math.Ceil(math.Log10(v)))
			}
		}
	}
	y := func(v float64) float64 {
		if v <= 0 {
			v = math.Pow(10, lo)
		}
		return top + ph - (math.Log10(v)-lo)/(hi-lo)*ph
	}
	for e := lo; e <= hi; e++ {
		v := math.Pow(10, e)
		s.line(left, y(v), float64(w)-10, y(v), "#ddd", "")
		s.text(left-4, y(v)+4, "end", 10, fmt.Sprintf("%g", v))
	}
	s.text(14, top+ph/2, "middle", 11, "rho")
	for i, in := range ins {
		cx := left + 110*float64(i) + 55
		s.text(cx, top+ph+18, "middle", 11, fmt.Sprintf("%s (n=%d)", names[i], in.N))
		if in.N == 0 {
			continue
		}
		fill := palette[i%len(palette)]
		s.line(cx, y(*in.Min), cx, y(*in.Q1), "#333", "")
		s.line(cx, y(*in.Q3), cx, y(*in.Max), "#333", "")
		s.line(cx-12, y(*in.Min), cx+12, y(*in.Min), "#333", "")
		s.line(cx-12, y(*in.Max), cx+12, y(*in.Max), "#333", "")
		s.rect(cx-25, y(*in.Q3), 50, math.Max(1, y(*in.Q1)-y(*in.Q3)), fill, fmt.Sprintf("%s: Q1 %.2f, median %.2f, Q3 %.2f, mean %.2f", names[i], *in.Q1, *in.Median, *in.Q3, *in.Mean))
		s.line(cx-25, y(*in.Median), cx+25, y(*in.Median), "black", "")
		fmt.Fprintf(&s.b, `<circle cx="%.1f" cy="%.1f" r="3" fill="white" stroke="black"><title>mean %.2f</title></circle>`+"\n", cx, y(*in.Mean), *in.Mean)
	}
	return s.String()
}

// grid draws Figure 4: a row per (agent, language), a cell per task; green worked first
// time, red did not (darker red: never made to work), grey not in the study.
func grid(title string, cells []GridCell) string {
	type rowKey struct {
		agent string
		lang  schemas.Ecosystem
	}
	var rows []rowKey
	seen := map[rowKey]bool{}
	probs := map[int64]bool{}
	at := map[rowKey]map[int64]GridCell{}
	for _, c := range cells {
		k := rowKey{c.Agent, c.Language}
		if !seen[k] {
			seen[k] = true
			rows = append(rows, k)
			at[k] = map[int64]GridCell{}
		}
		at[k][c.Problem] = c
		probs[c.Problem] = true
	}
	cols := sortedKeys(probs)
	const left, top = 170.0, 50.0
	cw := math.Max(6, math.Min(18, 700/math.Max(1, float64(len(cols)))))
	s := newSVG(int(left+cw*float64(len(cols))+20), int(top+14*float64(len(rows))+60), title)
	for j, p := range cols {
		if len(cols) <= 60 && (len(cols) <= 20 || p%5 == 0) {
			s.text(left+cw*float64(j)+cw/2, top-6, "middle", 9, fmt.Sprint(p))
		}
	}
	for i, k := range rows {
		y := top + 14*float64(i)
		s.text(left-6, y+10, "end", 11, k.agent+" · "+langName(k.lang))
		for j, p := range cols {
			c, ok := at[k][p]
			fill, what := "#e0e0e0", "not in the study"
			switch {
			case ok && c.WorkedFirst:
				fill, what = "#59a14f", "worked first time"
			case ok && c.MadeToWork:
				fill, what = "#e15759", "failed first, repaired"
			case ok:
				fill, what = "#8b1a1a", "never made to work"
			}
			s.rect(left+cw*float64(j), y, cw-1, 12, fill, fmt.Sprintf("%s %s p%d: %s", k.agent, langName(k.lang), p, what))
		}
	}
	s.legend(left, top+14*float64(len(rows))+30, []string{"worked first time", "failed first, repaired", "never made to work", "missing"},
		[]string{"#59a14f", "#e15759", "#8b1a1a", "#e0e0e0"})
	return s.String()
}

// Figures returns the report's figures as SVG documents by file name.
func Figures(r *Report) map[string]string {
	out := map[string]string{}
	out["fig4-first-attempt-grid.svg"] = grid("Figure 4: first-attempt success (Gen)", r.Grid)
	// Figure 5: buckets per (agent, language), as shares.
	var rows []string
	var val [][]float64
	for _, c := range r.Convergence {
		rows = append(rows, c.Agent+" · "+langName(c.Language))
		v := make([]float64, len(r.Buckets))
		for i, b := range r.Buckets {
			v[i] = float64(c.Buckets[b]) / float64(c.N)
		}
		val = append(val, v)
	}
	// Colours: first attempt green, the ranges from light green to orange, over the
	// budget pink, failed red, unknown grey.
	ranges := []string{"#8cd17d", "#f1ce63", "#f28e2b", "#b07aa1"}
	colours := []string{"#59a14f"}
	for i := 1; i < len(r.Buckets)-3; i++ {
		colours = append(colours, ranges[(i-1)%len(ranges)])
	}
	colours = append(colours, "#d37295", "#e15759", "#bab0ac")
	out["fig5-repair-cycles.svg"] = stacked(fmt.Sprintf("Figure 5: repair cycles to converge (budget k = %d)", r.Options.K), rows, r.Buckets, colours, val)
	// Figure 6: SR(0) and gain per agent, grouped by language.
	var cats []string
	for _, l := range Languages {
		cats = append(cats, langName(l))
	}
	sr0, gain := make([][]float64, len(r.Agents)), make([][]float64, len(r.Agents))
	for i, a := range r.Agents {
		sr0[i], gain[i] = make([]float64, len(Languages)), make([]float64, len(Languages))
		for _, c := range r.Convergence {
			if c.Agent == a {
				j := indexLang(c.Language)
				sr0[i][j], gain[i][j] = c.SR0, c.Gain
			}
		}
	}
	out["fig6-convergence.svg"] = bars("Figure 6: SR(0) (solid) and self-correction gain (hatched)", cats, r.Agents, sr0, gain, 0, []string{"gain after repair"})
	// Figure 7: phantom, hidden, bloat per ecosystem (pooled).
	rates := [][]float64{make([]float64, 4), make([]float64, 4), make([]float64, 4)}
	for _, x := range r.Rates {
		if x.Agent != "" {
			continue
		}
		j := indexLang(x.Language)
		for i, v := range []*float64{x.Phantom, x.Hidden, x.Bloat} {
			if v != nil {
				rates[i][j] = *v
			}
		}
	}
	out["fig7-rates.svg"] = bars("Figure 7: phantom, hidden and bloat rates", cats, []string{"phantom", "hidden", "bloat"}, rates, nil, 0, nil)
	// Figure 8: rho per ecosystem, C++ included (its D2 from the CMake configure).
	var names []string
	var ins []Inflation
	for _, in := range r.Inflation {
		names, ins = append(names, langName(in.Language)), append(ins, in)
	}
	out["fig8-inflation.svg"] = boxes("Figure 8: inflation ratio rho = |D2|/|D1| over successful projects (log scale)", names, ins)
	// Figure 9: mean Jaccard per agent pair, grouped by language, 0.5 dotted.
	var pairs []string
	pairIdx := map[string]int{}
	for _, p := range r.CrossPairs {
		k := p.A + " / " + p.B
		if _, ok := pairIdx[k]; !ok {
			pairIdx[k] = len(pairs)
			pairs = append(pairs, k)
		}
	}
	jv := make([][]float64, len(pairs))
	for i := range jv {
		jv[i] = make([]float64, len(Languages))
	}
	for _, p := range r.CrossPairs {
		if p.MeanJ != nil {
			jv[pairIdx[p.A+" / "+p.B]][indexLang(p.Language)] = *p.MeanJ
		}
	}
	out["fig9-cross-agent-jaccard.svg"] = bars("Figure 9: cross-agent Jaccard of declared dependencies", cats, pairs, jv, nil, 0.5, nil)
	// Figure 10: by domain.
	var domains []string
	dIdx := map[string]int{}
	for _, c := range r.ByDomain {
		if _, ok := dIdx[c.Domain]; !ok {
			dIdx[c.Domain] = len(domains)
			domains = append(domains, c.Domain)
		}
	}
	d0, dg := make([][]float64, len(r.Agents)), make([][]float64, len(r.Agents))
	for i, a := range r.Agents {
		d0[i], dg[i] = make([]float64, len(domains)), make([]float64, len(domains))
		for _, c := range r.ByDomain {
			if c.Agent == a {
				d0[i][dIdx[c.Domain]], dg[i][dIdx[c.Domain]] = c.SR0, c.Gain
			}
		}
	}
	out["fig10-domains.svg"] = bars("Figure 10: convergence by task domain", domains, r.Agents, d0, dg, 0, []string{"gain after repair"})
	return out
}

func indexLang(l schemas.Ecosystem) int {
	for i, x := range Languages {
		if x == l {
			return i
		}
	}
	return 0
}

// figureKeys maps the Markdown's figure slots to file names.
var figureKeys = map[string]string{
	"grid": "fig4-first-attempt-grid.svg", "buckets": "fig5-repair-cycles.svg", "convergence": "fig6-convergence.svg",
	"rates": "fig7-rates.svg", "inflation": "fig8-inflation.svg", "jaccard": "fig9-cross-agent-jaccard.svg", "domains": "fig10-domains.svg",
}

// WriteDir writes the report into dir: report.md (linking the figures), report.json and
// the figures as SVG files. Each file is written atomically.
func WriteDir(dir string, r *Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	figs := Figures(r)
	for name, body := range figs {
		if err := writeFile(filepath.Join(dir, name), []byte(body)); err != nil {
			return err
		}
	}
	var md strings.Builder
	WriteMarkdown(&md, r, figureKeys)
	if err := writeFile(filepath.Join(dir, "report.md"), []byte(md.String())); err != nil {
		return err
	}
	b, err := JSON(r)
	if err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, "report.json"), b)
}

// JSON is the report as indented JSON with a final newline.
func JSON(r *Report) ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

func writeFile(path string, b []byte) error {
	return data.WriteFile(path, 0o644, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}
