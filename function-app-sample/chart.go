package main

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"

	"github.com/funcmcp/funcmcp/worker"
)

// Chart geometry, in pixels.
const (
	chartHeight = 120
	barWidth    = 24
	barGap      = 8
	maxBars     = 24
)

// chartColors are the palette bar_chart offers.
var chartColors = map[string]color.RGBA{
	"blue":   {R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	"green":  {R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	"orange": {R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
	"purple": {R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
}

// views holds the bar_chart MCP App view, served from the binary itself.
//
//go:embed view/bar_chart.html
var views embed.FS

func registerBarChart(app *worker.App) {
	// An image result: a PNG drawn with the standard library, plus a caption.
	// The declared content kinds are checked on every result, by this worker
	// and again by funchost.
	//docs:begin kinds
	app.ConfigureMcpTool("bar_chart").
		WithContentKinds("image/png", "text/plain").
		//docs:end kinds
		WithTitle("Bar chart").
		WithDescription("Draw a bar chart of up to 24 non-negative numbers as a PNG image. "+
			"Bars are scaled so that the largest value fills the chart height.").
		WithProperty("values", worker.Number.Array(), "The bar heights, left to right (1 to 24 non-negative numbers).", worker.Required).
		WithProperty("color", worker.String.Enum("blue", "green", "orange", "purple"), "Bar colour; blue when omitted.", worker.Optional).
		// An MCP App: clients that show UI views draw the result in the
		// view, served at ui://bar_chart/view by a function of its own.
		//docs:begin app
		AsMcpApp(func(a *worker.AppBuilder) {
			a.WithView(worker.ViewFromFS(views, "view/bar_chart.html")).
				WithTitle("Bar chart").
				WithBorder(true)
		}).
		//docs:end app
		Handle(func(_ context.Context, tc *worker.ToolContext) (*worker.Result, error) {
			var args struct {
				Values []float64 `json:"values"`
				Color  string    `json:"color"`
			}
			if err := tc.BindArguments(&args); err != nil {
				return nil, err
			}
			img, err := barChart(args.Values, args.Color)
			if err != nil {
				return nil, err
			}
			caption := fmt.Sprintf("Bar chart of %d values (PNG, %d bytes).", len(args.Values), len(img))
			return &worker.Result{Content: []worker.Content{worker.Image(img, "image/png"), worker.Text(caption)}}, nil
		})
}

// barChart draws the values as a PNG bar chart on a white background with a
// grey baseline.
func barChart(values []float64, colorName string) ([]byte, error) {
	if len(values) == 0 || len(values) > maxBars {
		return nil, fmt.Errorf("values must hold 1 to %d numbers, not %d", maxBars, len(values))
	}
	if colorName == "" {
		colorName = "blue"
	}
	bar, ok := chartColors[colorName]
	if !ok {
		return nil, fmt.Errorf("color %q is not one of blue, green, orange, purple", colorName)
	}
	top := 0.0
	for i, v := range values {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("values[%d] must be a non-negative number, not %v", i, v)
		}
		top = math.Max(top, v)
	}
	width := barGap + len(values)*(barWidth+barGap)
	img := image.NewRGBA(image.Rect(0, 0, width, chartHeight))
	fill(img, img.Bounds(), color.RGBA{R: 0xff, G: 0xff, B: 0xff, A: 0xff})
	const baseline = chartHeight - 4
	fill(img, image.Rect(0, baseline, width, baseline+1), color.RGBA{R: 0x99, G: 0x99, B: 0x99, A: 0xff})
	for i, v := range values {
		h := 0
		if top > 0 {
			h = int(math.Round(v / top * float64(baseline-barGap)))
		}
		x := barGap + i*(barWidth+barGap)
		fill(img, image.Rect(x, baseline-h, x+barWidth, baseline), bar)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("encoding the chart: %w", err)
	}
	return buf.Bytes(), nil
}

func fill(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			img.SetRGBA(x, y, c)
		}
	}
}
