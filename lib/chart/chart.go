// Package chart holds what envgap's PNG charts share (the funnel chart of the dataset card,
// the resolved-rate chart of envgap report): the page's geometry, the colours and the text
// in Go Regular. The same input gives the same bytes.
package chart

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"sync"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// The colours every chart uses besides its bars.
var (
	Ink   = color.RGBA{0x22, 0x22, 0x22, 0xFF}
	Grid  = color.RGBA{0xDD, 0xDD, 0xDD, 0xFF}
	Paper = color.RGBA{0xFF, 0xFF, 0xFF, 0xFF}
)

// The page's geometry, in pixels.
const (
	FontSize = 15 // pixels per em of the labels (Go Regular)
	Width    = 960
	Left     = 230 // where bars start
	Right    = 860 // longest bar ends here; counts follow
	Top      = 100
	Bottom   = 30
)

// FillRect paints the rectangle [x0,x1)x[y0,y1) in c.
func FillRect(img *image.RGBA, x0, y0, x1, y1 int, c color.RGBA) {
	draw.Draw(img, image.Rect(x0, y0, x1, y1), &image.Uniform{c}, image.Point{}, draw.Src)
}

// EncodePNG encodes img at the best compression (the charts' bytes are part of exports).
func EncodePNG(img image.Image) ([]byte, error) {
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// chartFont is Go Regular (golang.org/x/image/font/gofont), parsed once.
var chartFont = sync.OnceValues(func() (*opentype.Font, error) { return opentype.Parse(goregular.TTF) })

// Text draws a chart's labels in Go Regular, antialiased. A face keeps caches and is not
// safe for concurrent use, so each chart makes its own.
type Text struct {
	face font.Face
	cap  int // height of a capital letter, in pixels
}

// NewText returns a Text at the charts' font size.
func NewText() (*Text, error) {
	f, err := chartFont()
	if err != nil {
		return nil, fmt.Errorf("chart font: %w", err)
	}
	face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: FontSize, DPI: 72, Hinting: font.HintingFull})
	if err != nil {
		return nil, fmt.Errorf("chart font: %w", err)
	}
	return &Text{face: face, cap: face.Metrics().CapHeight.Ceil()}, nil
}

// Fit returns s, or as much of it as fits in max pixels followed by "…".
func (t *Text) Fit(s string, max int) string {
	if t.Width(s) <= max {
		return s
	}
	r := []rune(s)
	for len(r) > 0 && t.Width(string(r)+"…") > max {
		r = r[:len(r)-1]
	}
	return string(r) + "…"
}

// Width returns the advance of s in pixels.
func (t *Text) Width(s string) int { return font.MeasureString(t.face, s).Ceil() }

// Draw writes s in ink from x, centred on the band of height h starting at y (capital
// letters and digits centred).
func (t *Text) Draw(img *image.RGBA, x, y, h int, s string) {
	d := font.Drawer{Dst: img, Src: image.NewUniform(Ink), Face: t.face,
		Dot: fixed.P(x, y+(h+t.cap)/2)}
	d.DrawString(s)
}
