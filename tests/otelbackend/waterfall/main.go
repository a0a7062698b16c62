// Command waterfall draws one trace of the file tests/otelbackend writes
// (the OpenTelemetry Collector's file exporter: OTLP/JSON, a document a
// line) as a waterfall PNG: a row per span, in the order of the tree
// (children under their parent, by start time), its bar placed and sized
// by its start and end times, coloured by the process that made it
// (service.name and process.pid of its resource).
//
//	waterfall -in telemetry.json -trace a1f92f3577b34da6a3ce929d0e0e4701 -out trace.png
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

func main() {
	in := flag.String("in", "", "the backend's file (OTLP/JSON lines)")
	traceID := flag.String("trace", "", "the trace id to draw (hex)")
	out := flag.String("out", "trace.png", "the PNG to write")
	title := flag.String("title", "", "the title line (default: the trace id)")
	flag.Parse()
	if *in == "" || *traceID == "" {
		fmt.Fprintln(os.Stderr, "waterfall: -in and -trace are required")
		os.Exit(2)
	}
	if err := run(*in, *traceID, *out, *title); err != nil {
		fmt.Fprintf(os.Stderr, "waterfall: %v\n", err)
		os.Exit(1)
	}
}

// span is one span of the trace, with the process that made it.
type span struct {
	id, parent, name, kind string
	start, end             int64 // Unix nanoseconds
	process                string
	errorType              string
	children               []*span
}

type kv struct {
	Key   string         `json:"key"`
	Value map[string]any `json:"value"`
}

func attr(kvs []kv, key string) string {
	for _, a := range kvs {
		if a.Key == key {
			for _, v := range a.Value {
				return fmt.Sprint(v)
			}
		}
	}
	return ""
}

type doc struct {
	ResourceSpans []struct {
		Resource struct {
			Attributes []kv `json:"attributes"`
		} `json:"resource"`
		ScopeSpans []struct {
			Spans []struct {
				TraceID      string `json:"traceId"`
				SpanID       string `json:"spanId"`
				ParentSpanID string `json:"parentSpanId"`
				Name         string `json:"name"`
				Kind         int    `json:"kind"`
				Start        string `json:"startTimeUnixNano"`
				End          string `json:"endTimeUnixNano"`
				Attributes   []kv   `json:"attributes"`
			} `json:"spans"`
		} `json:"scopeSpans"`
	} `json:"resourceSpans"`
}

var kinds = map[int]string{1: "internal", 2: "server", 3: "client", 4: "producer", 5: "consumer"}

// read returns the spans of trace in the file.
func read(file, trace string) ([]*span, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var spans []*span
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		var d doc
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			continue
		}
		for _, rs := range d.ResourceSpans {
			proc := attr(rs.Resource.Attributes, "service.name") + " (pid " + attr(rs.Resource.Attributes, "process.pid") + ")"
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					if !strings.EqualFold(s.TraceID, trace) {
						continue
					}
					start, err1 := strconv.ParseInt(s.Start, 10, 64)
					end, err2 := strconv.ParseInt(s.End, 10, 64)
					if err := errors.Join(err1, err2); err != nil {
						return nil, fmt.Errorf("span %s: times: %w", s.SpanID, err)
					}
					spans = append(spans, &span{id: s.SpanID, parent: s.ParentSpanID, name: s.Name, kind: kinds[s.Kind],
						start: start, end: end, process: proc, errorType: attr(s.Attributes, "error.type")})
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(spans) == 0 {
		return nil, fmt.Errorf("no span of trace %s in %s", trace, file)
	}
	return spans, nil
}

// ordered is the spans depth first, children by start time, with depth.
func ordered(spans []*span) (rows []*span, depth map[*span]int) {
	byID := map[string]*span{}
	for _, s := range spans {
		byID[s.id] = s
	}
	var roots []*span
	for _, s := range spans {
		if p, ok := byID[s.parent]; ok {
			p.children = append(p.children, s)
		} else {
			roots = append(roots, s) // its parent is the client's, not exported
		}
	}
	byStart := func(ss []*span) { sort.SliceStable(ss, func(i, j int) bool { return ss[i].start < ss[j].start }) }
	depth = map[*span]int{}
	var walk func(s *span, d int)
	walk = func(s *span, d int) {
		rows = append(rows, s)
		depth[s] = d
		byStart(s.children)
		for _, c := range s.children {
			walk(c, d+1)
		}
	}
	byStart(roots)
	for _, r := range roots {
		walk(r, 0)
	}
	return rows, depth
}

// palette colours the processes in the order they appear.
var palette = []color.RGBA{{0x3b, 0x75, 0xaf, 0xff}, {0xef, 0x85, 0x36, 0xff}, {0x51, 0x9e, 0x3e, 0xff}, {0x8d, 0x69, 0xb8, 0xff}}

const (
	width   = 960
	labelW  = 330
	rowH    = 24
	top     = 46
	padding = 12
)

func run(in, trace, out, title string) error {
	spans, err := read(in, trace)
	if err != nil {
		return err
	}
	rows, depth := ordered(spans)
	t0, t1 := rows[0].start, rows[0].end
	for _, s := range rows {
		t0, t1 = min(t0, s.start), max(t1, s.end)
	}
	total := max(t1-t0, 1)
	var procs []string
	colour := map[string]color.RGBA{}
	for _, s := range rows {
		if _, ok := colour[s.process]; !ok {
			colour[s.process] = palette[len(procs)%len(palette)]
			procs = append(procs, s.process)
		}
	}

	height := top + len(rows)*rowH + 2*rowH + padding
	img := image.NewRGBA(image.Rect(0, 0, width, height))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	if title == "" {
		title = "trace " + trace
	}
	text(img, padding, 18, title, color.Black)
	barX0, barW := labelW, width-labelW-padding
	text(img, padding, 36, "span (kind)", grey)
	text(img, barX0, 36, "0", grey)
	end := dur(total)
	text(img, barX0+barW-7*len(end), 36, end, grey)
	// Vertical guides at each quarter of the trace.
	for q := 0; q <= 4; q++ {
		x := barX0 + barW*q/4
		fill(img, x, top-4, 1, len(rows)*rowH+4, light)
	}
	for i, s := range rows {
		y := top + i*rowH
		if i%2 == 1 {
			fill(img, 0, y, width, rowH, stripe)
		}
		label := strings.Repeat("  ", depth[s]) + s.name + " (" + s.kind + ")"
		if len(label) > (labelW-padding-4)/7 {
			label = label[:(labelW-padding-4)/7-1] + "…"
		}
		text(img, padding, y+16, label, color.Black)
		x := barX0 + int(int64(barW)*(s.start-t0)/total)
		w := max(int(int64(barW)*(s.end-s.start)/total), 2)
		c := colour[s.process]
		fill(img, x, y+5, w, rowH-10, c)
		if s.errorType != "" {
			fill(img, x, y+rowH-6, w, 2, color.RGBA{0xd6, 0x27, 0x28, 0xff})
		}
		d := dur(s.end - s.start)
		if s.errorType != "" {
			d += " error.type=" + s.errorType
		}
		switch tx := x + w + 4; {
		case tx+7*len(d) <= width-padding: // after the bar
			text(img, tx, y+16, d, grey)
		case x-4-7*len(d) >= barX0: // before it
			text(img, x-4-7*len(d), y+16, d, grey)
		default: // on it
			text(img, x+4, y+16, d, color.White)
		}
	}
	y := top + len(rows)*rowH + rowH
	x := padding
	for _, p := range procs {
		fill(img, x, y-10, 14, 12, colour[p])
		text(img, x+20, y, p, color.Black)
		x += 20 + 7*len(p) + 24
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// dur is a duration in ASCII (the font has no µ): 68us, 1.874ms.
func dur(ns int64) string {
	d := time.Duration(ns)
	if d < time.Millisecond {
		return strconv.FormatInt(d.Round(time.Microsecond).Microseconds(), 10) + "us"
	}
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 3, 64) + "ms"
}

var (
	grey   = color.RGBA{0x55, 0x55, 0x55, 0xff}
	light  = color.RGBA{0xdd, 0xdd, 0xdd, 0xff}
	stripe = color.RGBA{0xf4, 0xf6, 0xf8, 0xff}
)

func fill(img *image.RGBA, x, y, w, h int, c color.Color) {
	draw.Draw(img, image.Rect(x, y, x+w, y+h), image.NewUniform(c), image.Point{}, draw.Over)
}

func text(img *image.RGBA, x, y int, s string, c color.Color) {
	d := font.Drawer{Dst: img, Src: image.NewUniform(c), Face: basicfont.Face7x13, Dot: fixed.P(x, y)}
	d.DrawString(s)
}
