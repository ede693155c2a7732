package bundle

import (
	"fmt"
	"strings"

	"github.com/oplogha/oplogha/harness/audit"
)

// retentionSVG draws the retention series on the timeline's axis (from the
// cluster's boot, so the two pictures line up): batch keys in etcd (the
// bounded OpLog), snapshot groups in the store, and the largest etcd
// member's database size, each scaled to its own maximum and labelled with
// it. Empty when the run has no samples.
func (b *Bundle) retentionSVG() string {
	ss := b.Input.Retention
	if len(ss) < 2 {
		return ""
	}
	ax := b.axis()
	const left, width, h = 150.0, 1150.0, 70.0
	x := func(ns int64) float64 { return ax.x(ns, left, width) }
	m := audit.MaxRetention(ss)
	type series struct {
		name, color string
		peak        float64
		unit        string
		val         func(audit.RetentionSample) float64
	}
	all := []series{
		{"batch keys in etcd", "#0969da", float64(m.BatchKeys), "", func(s audit.RetentionSample) float64 { return float64(s.BatchKeys) }},
		{"snapshot groups", "#8250df", float64(m.Groups), "", func(s audit.RetentionSample) float64 { return float64(s.Groups) }},
		{"etcd db size", "#bf8700", float64(m.DBSize) / (1 << 20), " MiB", func(s audit.RetentionSample) float64 { return float64(s.DBSize) / (1 << 20) }},
	}
	if m.Groups < 0 {
		all = append(all[:1], all[2])
	}
	var sb strings.Builder
	height := float64(len(all))*(h+24) + 10
	fmt.Fprintf(&sb, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" role="img" aria-label="retention over time">`, left+width+20, height)
	for i, se := range all {
		top := 6 + float64(i)*(h+24)
		fmt.Fprintf(&sb, `<text x="4" y="%.1f">%s</text><text x="4" y="%.1f" fill="#57606a">max %.4g%s</text>`, top+14, se.name, top+30, se.peak, se.unit)
		fmt.Fprintf(&sb, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#d0d7de"/>`, left, top+h, left+width, top+h)
		peak := se.peak
		if peak <= 0 {
			peak = 1
		}
		var pts []string
		for _, s := range ss {
			v := se.val(s)
			if v < 0 {
				continue
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(s.At), top+h-h*v/peak))
		}
		fmt.Fprintf(&sb, `<polyline points="%s" fill="none" stroke="%s" stroke-width="1.5"/>`, strings.Join(pts, " "), se.color)
		if i == 0 {
			// the floor as ticks: where it moved
			var last uint64
			for _, s := range ss {
				if s.Floor != last {
					fmt.Fprintf(&sb, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#1a7f37"><title>floor %d at `+
						`%.1fs</title></line>`, x(s.At), top+h, x(s.At), top+h+5, s.Floor, float64(s.At)/1e9)
					last = s.Floor
				}
			}
		}
	}
	sb.WriteString(`</svg>`)
	return sb.String()
}
