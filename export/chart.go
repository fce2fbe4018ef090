package export

import (
	"image"
	"image/color"
	"image/draw"
	"strconv"

	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/lib/chart"
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

const (
	rowHeight = 36
	barHeight = 22
)

// FunnelChart draws the candidates funnel as a PNG: one horizontal bar per outcome (the
// card's order), split by set, with the total at its end. The same funnel gives the same
// bytes.
func FunnelChart(f *catalog.Funnel) ([]byte, error) {
	tw, err := chart.NewText()
	if err != nil {
		return nil, err
	}
	h := chart.Top + rowHeight*len(schemas.Outcomes) + chart.Bottom
	img := image.NewRGBA(image.Rect(0, 0, chart.Width, h))
	draw.Draw(img, img.Bounds(), &image.Uniform{chart.Paper}, image.Point{}, draw.Src)
	tw.Draw(img, 20, 20, 16, "candidates by outcome")
	// Legend.
	x := 20
	for _, s := range schemas.Sources {
		chart.FillRect(img, x, 56, x+20, 56+16, setColors[s])
		tw.Draw(img, x+28, 56, 16, string(s))
		x += 28 + tw.Width(string(s)) + 30
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
		return n * (chart.Right - chart.Left) / max
	}
	// Axis line.
	chart.FillRect(img, chart.Left-1, chart.Top-6, chart.Left, chart.Top+rowHeight*len(schemas.Outcomes), chart.Grid)
	for i, o := range schemas.Outcomes {
		y := chart.Top + i*rowHeight
		label := string(o)
		tw.Draw(img, chart.Left-12-tw.Width(label), y, barHeight, label)
		x0, acc := chart.Left, 0
		for _, s := range schemas.Sources {
			n := f.Candidates[s][o]
			if n == 0 {
				continue
			}
			acc += n
			x1 := chart.Left + scale(acc)
			if x1 <= x0 {
				x1 = x0 + 1 // a non-zero count is always visible
			}
			chart.FillRect(img, x0, y, x1, y+barHeight, setColors[s])
			x0 = x1
		}
		tw.Draw(img, x0+8, y, barHeight, strconv.Itoa(totals[i]))
	}
	return chart.EncodePNG(img)
}
