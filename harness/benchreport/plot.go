package benchreport

import (
	"fmt"
	"html"
	"math"
	"slices"
	"strings"
)

// palette colours the classes of a plot in order of first appearance.
var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"}

// SVG draws s as a scatter plot: linear axes with rounded ticks, one colour
// per class with a legend, and each mark as a dashed vertical line with its
// label. It is a standalone SVG document (results.md links it as an image).
func SVG(s Series) string {
	const (
		width, height            = 760, 340
		left, right, top, bottom = 64, 20, 36, 64
	)
	pw, ph := float64(width-left-right), float64(height-top-bottom)
	xmin, xmax, ymax := math.Inf(1), math.Inf(-1), 0.0
	for _, p := range s.Points {
		xmin, xmax, ymax = math.Min(xmin, p.X), math.Max(xmax, p.X), math.Max(ymax, p.Y)
	}
	for _, m := range s.Marks {
		xmin, xmax = math.Min(xmin, m.X), math.Max(xmax, m.X)
	}
	if math.IsInf(xmin, 0) {
		xmin, xmax = 0, 1
	}
	xt := ticks(xmin, xmax)
	yt := ticks(0, math.Max(ymax, 1e-9))
	xmin, xmax = math.Min(xmin, xt[0]), math.Max(xmax, xt[len(xt)-1])
	ymaxAxis := yt[len(yt)-1]
	if xmax == xmin {
		xmax = xmin + 1
	}
	px := func(x float64) float64 { return float64(left) + (x-xmin)/(xmax-xmin)*pw }
	py := func(y float64) float64 { return float64(top) + ph - y/ymaxAxis*ph }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" `+
		`font-family="sans-serif" font-size="11">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%d" y="18" font-size="13" font-weight="bold">%s</text>`+"\n", left, html.EscapeString(s.Title))
	for _, y := range yt {
		fmt.Fprintf(&b, `<line x1="%d" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#e5e5e5"/>`, left, float64(left)+pw, py(y), py(y))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", left-6, py(y)+4, tickLabel(y))
	}
	for _, x := range xt {
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%.1f" stroke="#e5e5e5"/>`, px(x), px(x), top, float64(top)+ph)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", px(x), float64(top)+ph+16, tickLabel(x))
	}
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="%.1f" fill="none" stroke="#888"/>`+"\n", left, top, pw, ph)
	fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", float64(left)+pw/2, height-28, html.EscapeString(s.XLabel))
	fmt.Fprintf(&b, `<text transform="translate(16 %.1f) rotate(-90)" text-anchor="middle">%s</text>`+"\n", float64(top)+ph/2, html.EscapeString(s.YLabel))

	var classes []string
	for _, p := range s.Points {
		if !slices.Contains(classes, p.Class) {
			classes = append(classes, p.Class)
		}
	}
	for _, p := range s.Points {
		c := palette[slices.Index(classes, p.Class)%len(palette)]
		fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="1.8" fill="%s" fill-opacity="0.7"/>`+"\n", px(p.X), py(p.Y), c)
	}
	for i, m := range s.Marks {
		x := px(m.X)
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%.1f" stroke="#333" stroke-dasharray="4 3"/>`, x, x, top, float64(top)+ph)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="10">%s</text>`+"\n", x+3, top+12+12*(i%3), html.EscapeString(m.Label))
	}
	lx := float64(left)
	for i, c := range classes {
		name := c
		if name == "" {
			name = "(none)"
		}
		fmt.Fprintf(&b, `<circle cx="%.1f" cy="%d" r="4" fill="%s"/><text x="%.1f" y="%d">%s</text>`+"\n", lx+4, height-10,
			palette[i%len(palette)], lx+12, height-6, html.EscapeString(name))
		lx += 24 + 7*float64(len(name))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// ticks are 4–10 round values covering [lo, hi] (1, 2 or 5 × a power of ten apart).
func ticks(lo, hi float64) []float64 {
	if hi <= lo {
		hi = lo + 1
	}
	raw := (hi - lo) / 6
	pow := math.Pow(10, math.Floor(math.Log10(raw)))
	step := pow * 10
	for _, m := range []float64{1, 2, 5} {
		if m*pow >= raw {
			step = m * pow
			break
		}
	}
	var out []float64
	for v := math.Floor(lo/step) * step; v < hi+step/2; v += step {
		out = append(out, math.Round(v/step)*step)
		if len(out) > 1 && out[len(out)-1] >= hi {
			break
		}
	}
	return out
}

func tickLabel(v float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", v), "0"), ".")
}
