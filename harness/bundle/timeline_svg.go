package bundle

import (
	"fmt"
	"html/template"
	"math"
	"strings"

	"github.com/oplogha/oplogha/harness/audit"
	"github.com/oplogha/oplogha/harness/history"
)

// TimelineID is the id of the timeline picture in report.html, and
// TimelineMark the class of everything it draws for the run (a step, a
// fault, a snapshot, a role, the throughput): stable names a browser check
// finds the picture and counts what it shows by.
const (
	TimelineID   = "timeline"
	TimelineMark = "mark"
)

var roleColor = map[string]string{"standby": "#8c959f", "promoting": "#d4a72c", "primary": "#1a7f37",
	"failed": "#cf222e", "starting": "#afb8c1", "down": "#24292f", "restarted": "#24292f"}

// timelineSVG draws the run from the cluster's boot: one lane for steps,
// one for faults, one for snapshot publications, one per master's role,
// and the client throughput underneath.
func (b *Bundle) timelineSVG() string {
	ax := b.axis()
	const left, width, lane = 150.0, 1150.0, 22.0
	x := func(ns int64) float64 { return ax.x(ns, left, width) }
	var s strings.Builder
	var masters []string
	seen := map[string]bool{}
	for _, n := range b.Input.Nodes {
		if !seen[n.Name] {
			masters = append(masters, n.Name)
			seen[n.Name] = true
		}
	}
	lanes := 3 + len(masters)
	chartTop := 20 + float64(lanes)*lane + 10
	chartH := 90.0
	height := chartTop + chartH + 40
	fmt.Fprintf(&s, `<svg id="%s" data-origin-ns="%d" data-end-ns="%d" xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f"`,
		TimelineID, ax.from, ax.to, left+width+20, height)
	s.WriteString(` role="img" aria-label="run timeline">`)
	// time axis, in seconds since the run's start; the origin is the boot
	if ax.from > 0 {
		fmt.Fprintf(&s, `<text x="4" y="10" fill="#57606a">from boot at %.1fs</text>`, float64(ax.from)/1e9)
	}
	for _, t := range ax.ticks() {
		xx := x(int64(t * 1e9))
		fmt.Fprintf(&s, `<line x1="%.1f" y1="14" x2="%.1f" y2="%.0f" stroke="#eaeef2"/><text x="%.1f" y="10" `+
			`text-anchor="middle" fill="#57606a">%gs</text>`, xx, xx, chartTop+chartH, xx, t)
	}
	laneY := func(i int) float64 { return 20 + float64(i)*lane }
	label := func(i int, text string) {
		fmt.Fprintf(&s, `<text x="4" y="%.1f">%s</text>`, laneY(i)+15, template.HTMLEscapeString(text))
	}
	// steps
	label(0, "steps")
	for _, st := range b.Meta.Steps {
		color := "#54aeff"
		if !st.OK {
			color = "#cf222e"
		}
		w := math.Max(2, x(st.EndNS)-x(st.StartNS))
		fmt.Fprintf(&s, `<rect class="%s step" x="%.1f" y="%.1f" width="%.1f" height="16" fill="%s" opacity="0.75"><title>%d %s (%.2fs)%s</title></rect>`,
			TimelineMark, x(st.StartNS), laneY(0)+2, w, color, st.Index, template.HTMLEscapeString(st.Label),
			float64(st.EndNS-st.StartNS)/1e9, template.HTMLEscapeString(" "+st.Detail))
	}
	// faults: from inject to heal
	label(1, "faults")
	open := map[string]audit.Event{}
	drawFault := func(from, to audit.Event) {
		fmt.Fprintf(&s, `<rect class="%s fault" x="%.1f" y="%.1f" width="%.1f" height="16" fill="#cf222e" `+
			`opacity="0.55"><title>%s %s</title></rect><text x="%.1f" y="%.1f" fill="#fff">%s</text>`,
			TimelineMark, x(from.At), laneY(1)+2, math.Max(3,
				x(to.At)-x(from.At)), template.HTMLEscapeString(from.Name), template.HTMLEscapeString(from.Target),
			x(from.At)+3, laneY(1)+14, template.HTMLEscapeString(
				shorten(from.Name+" "+from.Target, int((x(to.At)-x(from.At))/6))))
	}
	for _, e := range b.Input.Events {
		switch e.Kind {
		case "fault":
			open[e.Detail] = e
		case "heal":
			if f, ok := open[e.Detail]; ok {
				drawFault(f, e)
				delete(open, e.Detail)
			}
		}
	}
	for _, f := range open {
		drawFault(f, audit.Event{At: ax.to})
	}
	// snapshot publications
	label(2, "snapshots")
	for _, e := range b.Input.Events {
		if e.Kind != "snapshot" {
			continue
		}
		cx, cy := x(e.At), laneY(2)+10
		fmt.Fprintf(&s, `<path class="%s snapshot" d="M%.1f %.1f l6 -7 l6 7 l-6 7 z" `+
			`fill="#8250df"><title>%s</title></path>`, TimelineMark, cx-6, cy, template.HTMLEscapeString(e.Detail))
	}
	// roles per master
	for i, m := range masters {
		label(3+i, m)
		var cur string
		var since int64
		flush := func(to int64) {
			if cur != "" {
				fmt.Fprintf(&s, `<rect class="%s role" x="%.1f" y="%.1f" width="%.1f" height="16" fill="%s"><title>%s `+
					`%s</title></rect>`, TimelineMark, x(since), laneY(3+i)+2, math.Max(1, x(to)-x(since)), roleColor[cur], m, cur)
			}
		}
		for _, e := range b.Input.Events {
			if e.Kind != "role" || e.Target != m {
				continue
			}
			parts := strings.Split(e.Detail, "→ ")
			next := strings.TrimSpace(parts[len(parts)-1])
			flush(e.At)
			cur, since = next, e.At
		}
		flush(ax.to)
	}
	b.throughputSVG(&s, ax, left, width, chartTop, chartH)
	// legend
	lx := left
	for _, r := range []string{"standby", "promoting", "primary", "failed", "down"} {
		fmt.Fprintf(&s, `<rect x="%.1f" y="%.1f" width="10" height="10" fill="%s"/><text x="%.1f" `+
			`y="%.1f">%s</text>`, lx, height-14, roleColor[r], lx+14, height-5, r)
		lx += 90
	}
	fmt.Fprintf(&s, `<rect x="%.1f" y="%.1f" width="10" height="10" fill="#cf222e" opacity="0.55"/><text x="%.1f" `+
		`y="%.1f">fault</text>`, lx, height-14, lx+14, height-5)
	lx += 70
	fmt.Fprintf(&s, `<path d="M%.1f %.1f l5 -5 l5 5 l-5 5 z" fill="#8250df"/><text x="%.1f" y="%.1f">snapshot published</text>`, lx, height-9, lx+14, height-5)
	s.WriteString(`</svg>`)
	return s.String()
}

// throughputSVG draws acknowledged mutations per bucket of the axis as an
// area, and failures and unknowns as red marks under it.
func (b *Bundle) throughputSVG(s *strings.Builder, ax axis, left, width, top, h float64) {
	x := func(ns int64) float64 { return ax.x(ns, left, width) }
	bucket := int64(math.Max(float64(ax.span())/200, 1e8))
	n := int(ax.span()/bucket) + 1
	okc, badc := make([]int, n), make([]int, n)
	for _, op := range b.Input.Ops {
		i := int((max(op.Complete, ax.from) - ax.from) / bucket)
		if i >= n {
			continue
		}
		if op.Outcome == history.OK {
			okc[i]++
		} else if op.Outcome == history.Unknown || (op.Outcome == history.Failed && op.Kind != history.Get) {
			badc[i]++
		}
	}
	peak := 1
	for _, v := range okc {
		peak = max(peak, v)
	}
	perSec := float64(time1s) / float64(bucket)
	fmt.Fprintf(s, `<text x="4" y="%.1f">ok ops/s</text><text x="4" y="%.1f" fill="#57606a">peak %.0f</text>`, top+14, top+28, float64(peak)*perSec)
	pts := []string{fmt.Sprintf("%.1f,%.1f", left, top+h)}
	for i, v := range okc {
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(ax.from+int64(i)*bucket), top+h-h*float64(v)/float64(peak)))
	}
	pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(min(ax.from+int64(n)*bucket, ax.to)), top+h))
	fmt.Fprintf(s, `<polygon class="%s ops" points="%s" fill="#54aeff" opacity="0.6"/>`, TimelineMark, strings.Join(pts, " "))
	for i, v := range badc {
		if v > 0 {
			fmt.Fprintf(s, `<rect class="%s bad-ops" x="%.1f" y="%.1f" width="2" height="8" fill="#cf222e"><title>%d failed or `+
				`unknown</title></rect>`, TimelineMark, x(ax.from+int64(i)*bucket), top+h+2, v)
		}
	}
}

const time1s = 1e9

func shorten(s string, n int) string {
	if n < 4 {
		return ""
	}
	if len(s) > n {
		return s[:n-1] + "…"
	}
	return s
}
