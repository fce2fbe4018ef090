package export

import (
	"bytes"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"strconv"

	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/schemas"
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
	chartScale  = 2 // pixels per font dot
	glyphW      = 6 * chartScale
	chartWidth  = 960
	chartLeft   = 230 // where bars start
	chartRight  = 860 // longest bar ends here; counts follow
	rowHeight   = 36
	barHeight   = 22
	chartTop    = 100
	chartBottom = 30
)

// FunnelChart draws the candidates funnel as a PNG: one horizontal bar per outcome (the
// card's order), split by set, with the total at its end. The same funnel gives the same
// bytes.
func FunnelChart(f *catalog.Funnel) ([]byte, error) {
	h := chartTop + rowHeight*len(schemas.Outcomes) + chartBottom
	img := image.NewRGBA(image.Rect(0, 0, chartWidth, h))
	draw.Draw(img, img.Bounds(), &image.Uniform{paperColor}, image.Point{}, draw.Src)
	drawText(img, 20, 20, "candidates by outcome", inkColor)
	// Legend.
	x := 20
	for _, s := range schemas.Sources {
		fillRect(img, x, 56, x+20, 56+16, setColors[s])
		drawText(img, x+28, 57, string(s), inkColor)
		x += 28 + len(s)*glyphW + 30
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
		drawText(img, chartLeft-12-len(label)*glyphW, y+(barHeight-7*chartScale)/2, label, inkColor)
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
		drawText(img, x0+8, y+(barHeight-7*chartScale)/2, strconv.Itoa(totals[i]), inkColor)
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

// drawText draws s with its top-left corner at (x, y).
func drawText(img *image.RGBA, x, y int, s string, c color.RGBA) {
	for _, r := range s {
		g, ok := glyphs[r]
		if !ok {
			g = missingGlyph
		}
		for row := 0; row < 7; row++ {
			for col := 0; col < 5; col++ {
				if g[row][col] == '#' {
					fillRect(img, x+col*chartScale, y+row*chartScale, x+(col+1)*chartScale, y+(row+1)*chartScale, c)
				}
			}
		}
		x += glyphW
	}
}
