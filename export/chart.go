package export

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"strconv"
	"sync"

	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/schemas"
	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// FunnelChartPath is where the candidates funnel chart goes in the export folder.
const FunnelChartPath = "images/candidates-funnel.png"

// setColors are the bar colours of the three sets (colour-blind-safe Okabe-Ito).
var setColors = map[schemas.Source]color.RGBA{
	schemas.SourceReported: {0xE6, 0x9F, 0x00, 0xFF},
	schemas.SourceRepaired: {0x00, 0x72, 0xB2, 0xFF},
	schemas.SourceLite:     {0x00, 0x9E, 0x73, 0xFF},
}

var (
	inkColor   = color.RGBA{0x22, 0x22, 0x22, 0xFF}
	gridColor  = color.RGBA{0xDD, 0xDD, 0xDD, 0xFF}
	paperColor = color.RGBA{0xFF, 0xFF, 0xFF, 0xFF}
)

const (
	chartFontSize = 15 // pixels per em of the labels (Go Regular)
	chartWidth    = 960
	chartLeft     = 230 // where bars start
	chartRight    = 860 // longest bar ends here; counts follow
	rowHeight     = 36
	barHeight     = 22
	chartTop      = 100
	chartBottom   = 30
)

// FunnelChart draws the candidates funnel as a PNG: one horizontal bar per outcome (the
// card's order), split by set, with the total at its end. The same funnel gives the same
// bytes.
func FunnelChart(f *catalog.Funnel) ([]byte, error) {
	tw, err := newTextWriter()
	if err != nil {
		return nil, err
	}
	h := chartTop + rowHeight*len(schemas.Outcomes) + chartBottom
	img := image.NewRGBA(image.Rect(0, 0, chartWidth, h))
	draw.Draw(img, img.Bounds(), &image.Uniform{paperColor}, image.Point{}, draw.Src)
	tw.draw(img, 20, 20, 16, "candidates by outcome")
	// Legend.
	x := 20
	for _, s := range schemas.Sources {
		fillRect(img, x, 56, x+20, 56+16, setColors[s])
		tw.draw(img, x+28, 56, 16, string(s))
		x += 28 + tw.width(string(s)) + 30
	}
	max := 0
	totals := make([]int, len(schemas.Outcomes))
	for i, o := range schemas.Outcomes {
		for _, s := range schemas.Sources {
			totals[i] += f.Candidates[s][o]
		}
		if totals[i] > max {
			max = totals[i]
		}
	}
	scale := func(n int) int {
		if max == 0 {
			return 0
		}
		return n * (chartRight - chartLeft) / max
	}
	// Axis line.
	fillRect(img, chartLeft-1, chartTop-6, chartLeft, chartTop+rowHeight*len(schemas.Outcomes), gridColor)
	for i, o := range schemas.Outcomes {
		y := chartTop + i*rowHeight
		label := string(o)
		tw.draw(img, chartLeft-12-tw.width(label), y, barHeight, label)
		x0, acc := chartLeft, 0
		for _, s := range schemas.Sources {
			n := f.Candidates[s][o]
			if n == 0 {
				continue
			}
			acc += n
			x1 := chartLeft + scale(acc)
			if x1 <= x0 {
				x1 = x0 + 1 // a non-zero count is always visible
			}
			fillRect(img, x0, y, x1, y+barHeight, setColors[s])
			x0 = x1
		}
		tw.draw(img, x0+8, y, barHeight, strconv.Itoa(totals[i]))
	}
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func fillRect(img *image.RGBA, x0, y0, x1, y1 int, c color.RGBA) {
	draw.Draw(img, image.Rect(x0, y0, x1, y1), &image.Uniform{c}, image.Point{}, draw.Src)
}

// chartFont is Go Regular (golang.org/x/image/font/gofont), parsed once.
var chartFont = sync.OnceValues(func() (*opentype.Font, error) { return opentype.Parse(goregular.TTF) })

// textWriter draws the chart's labels in Go Regular, antialiased. A face keeps caches and
// is not safe for concurrent use, so each chart makes its own.
type textWriter struct {
	face font.Face
	cap  int // height of a capital letter, in pixels
}

func newTextWriter() (*textWriter, error) {
	f, err := chartFont()
	if err != nil {
		return nil, fmt.Errorf("chart font: %w", err)
	}
	face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: chartFontSize, DPI: 72, Hinting: font.HintingFull})
	if err != nil {
		return nil, fmt.Errorf("chart font: %w", err)
	}
	return &textWriter{face: face, cap: face.Metrics().CapHeight.Ceil()}, nil
}

// fit returns s, or as much of it as fits in max pixels followed by "…".
func (t *textWriter) fit(s string, max int) string {
	if t.width(s) <= max {
		return s
	}
	r := []rune(s)
	for len(r) > 0 && t.width(string(r)+"…") > max {
		r = r[:len(r)-1]
	}
	return string(r) + "…"
}

// width returns the advance of s in pixels.
func (t *textWriter) width(s string) int { return font.MeasureString(t.face, s).Ceil() }

// draw writes s in ink from x, centred on the band of height h starting at y (capital
// letters and digits centred).
func (t *textWriter) draw(img *image.RGBA, x, y, h int, s string) {
	d := font.Drawer{Dst: img, Src: image.NewUniform(inkColor), Face: t.face,
		Dot: fixed.P(x, y+(h+t.cap)/2)}
	d.DrawString(s)
}
