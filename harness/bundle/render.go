package bundle

import (
	"fmt"
	"html/template"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/oplogha/oplogha/harness/audit"
	"github.com/oplogha/oplogha/harness/history"
	"github.com/oplogha/oplogha/impl/contract"
)

// WriteSummary writes summary.md: the verdict, the audit table, the facts.
func (b *Bundle) WriteSummary() error {
	var s strings.Builder
	verdict := "PASS"
	if !b.Pass() {
		verdict = "FAIL"
	}
	fmt.Fprintf(&s, "# %s — %s\n\n", b.Meta.Scenario, verdict)
	fmt.Fprintf(&s, "seed %d · tier %s · runtime %s · %s · boot %s\n\n", b.Meta.Seed, b.Meta.Tier, b.Meta.Runtime, ms(b.Meta.DurationMS), ms(b.Meta.BootMS))
	if b.Meta.Error != "" {
		fmt.Fprintf(&s, "**Run error:** %s\n\n", b.Meta.Error)
	}
	s.WriteString("| audit | verdict | summary |\n|---|---|---|\n")
	for _, r := range b.Results {
		v := "pass"
		if !r.Pass {
			v = "**FAIL**"
		}
		fmt.Fprintf(&s, "| %s | %s | %s |\n", r.Name, v, mdEscape(r.Summary))
	}
	for _, r := range b.Results {
		if len(r.Evidence) == 0 {
			continue
		}
		fmt.Fprintf(&s, "\n### %s\n\n", r.Name)
		for _, e := range r.Evidence {
			fmt.Fprintf(&s, "- %s\n", e)
		}
	}
	c := history.Counts(b.Input.Ops)
	fmt.Fprintf(&s, "\n## Run\n\n- client ops: %d (ok %d, failed %d, unknown %d)\n", len(b.Input.Ops), c[history.OK], c[history.Failed], c[history.Unknown])
	fmt.Fprintf(&s, "- etcd: revision %d, %d batch keys (%s … %s), %d events of history\n", b.Input.Final.Revision, b.Input.Final.BatchCount, b.Input.Final.FirstBatchKey, b.Input.Final.LastBatchKey, len(b.Input.Etcd))
	ks, _ := contract.NewKeyspace(b.Input.ClusterID) // an invalid id hides no key
	for _, k := range sortedKeys(b.Input.Final.Keys) {
		if ks.ClusterID() != "" && strings.HasPrefix(k, ks.LeaderCandidates()) {
			continue
		}
		fmt.Fprintf(&s, "  - `%s` = `%s`\n", k, b.Input.Final.Keys[k])
	}
	s.WriteString("- nodes at the end:\n")
	for _, n := range b.Input.Nodes {
		fmt.Fprintf(&s, "  - %s: %s, running=%v, batch %d seq %d, bootstrap %s, digest %s\n", n.Name, n.Health.Role, n.Running, n.State.Cursor.BatchID, n.State.Cursor.Seq, n.Health.Bootstrap.Source, n.State.Digest)
	}
	s.WriteString("\n## Steps\n\n| # | line | step | took | ok |\n|---|---|---|---|---|\n")
	for _, st := range b.Meta.Steps {
		fmt.Fprintf(&s, "| %d | %d | %s | %s | %v %s |\n", st.Index, st.Line, mdEscape(st.Label), ms((st.EndNS-st.StartNS)/1e6), st.OK, mdEscape(st.Detail))
	}
	s.WriteString("\n## Binaries\n\n")
	for _, bin := range b.Meta.Binaries {
		fmt.Fprintf(&s, "- %s %s sha256:%s\n", bin.Name, bin.Version, bin.SHA256)
	}
	fmt.Fprintf(&s, "\nReplay: `chaos replay %s` · re-audit: `chaos audit %s` · picture: `%s`\n", b.Dir, b.Dir, ReportFile)
	return os.WriteFile(filepath.Join(b.Dir, SummaryFile), []byte(s.String()), 0o644)
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

func ms(v int64) string { return fmt.Sprintf("%.1fs", float64(v)/1000) }

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// WriteReport writes report.html: a self-contained page with the timeline
// picture (steps, faults, each master's role, client throughput) and the
// audit table.
func (b *Bundle) WriteReport() error {
	data := struct {
		Title    string
		Pass     bool
		Meta     Meta
		Results  []audit.Result
		SVG      template.HTML
		Retain   template.HTML
		Counts   map[string]int
		Ops      int
		Lineariz bool
	}{Title: b.Meta.Scenario, Pass: b.Pass(), Meta: b.Meta, Results: b.Results, SVG: template.HTML(b.timelineSVG()), Retain: template.HTML(b.retentionSVG()), Counts: history.Counts(b.Input.Ops), Ops: len(b.Input.Ops)}
	if _, err := os.Stat(filepath.Join(b.Dir, LinearizeFile)); err == nil {
		data.Lineariz = true
	}
	f, err := os.Create(filepath.Join(b.Dir, ReportFile))
	if err != nil {
		return err
	}
	if err := reportTmpl.Execute(f, data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

var reportTmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"sec":   func(ns int64) string { return fmt.Sprintf("%.2fs", float64(ns)/1e9) },
	"since": func(a, b int64) string { return fmt.Sprintf("%.2fs", float64(b-a)/1e9) },
}).Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>{{.Title}} — oplogha</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#1d2327;max-width:1400px}
h1{font-size:20px;margin:0 0 4px} .pass{color:#1a7f37} .fail{color:#cf222e}
.facts{color:#57606a;margin-bottom:16px}
table{border-collapse:collapse;margin:12px 0} td,th{border:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa} ul.ev{margin:4px 0;padding-left:18px;font:12px monospace}
svg text{font:11px system-ui,sans-serif}
</style></head><body>
<h1>{{.Title}} — {{if .Pass}}<span class="pass">PASS</span>{{else}}<span class="fail">FAIL</span>{{end}}</h1>
<div class="facts">seed {{.Meta.Seed}} · tier {{.Meta.Tier}} · runtime {{.Meta.Runtime}} · run {{.Meta.DurationMS}} ms · boot {{.Meta.BootMS}} ms ·
{{.Ops}} client ops (ok {{index .Counts "ok"}}, failed {{index .Counts "failed"}}, unknown {{index .Counts "unknown"}})
{{if .Meta.Error}}<br><b class="fail">run error: {{.Meta.Error}}</b>{{end}}</div>
{{.SVG}}
{{if .Retain}}<h2>Retention</h2><p class="facts">once a second: batch keys in etcd (green ticks: the floor moved), snapshot groups in the store, largest etcd member's database</p>{{.Retain}}{{end}}
<h2>Audits</h2>
<table><tr><th>audit</th><th>verdict</th><th>summary and evidence</th></tr>
{{range .Results}}<tr><td>{{.Name}}</td><td>{{if .Pass}}<span class="pass">pass</span>{{else}}<b class="fail">FAIL</b>{{end}}</td>
<td>{{.Summary}}{{if .Evidence}}<ul class="ev">{{range .Evidence}}<li>{{.}}</li>{{end}}</ul>{{end}}</td></tr>
{{end}}</table>
{{if .Lineariz}}<p><a href="linearizability.html">porcupine's linearizability visualisation</a></p>{{end}}
<h2>Steps</h2>
<table><tr><th>#</th><th>line</th><th>step</th><th>start</th><th>took</th><th>ok</th></tr>
{{range .Meta.Steps}}<tr><td>{{.Index}}</td><td>{{.Line}}</td><td>{{.Label}}</td><td>{{sec .StartNS}}</td><td>{{since .StartNS .EndNS}}</td><td>{{if .OK}}ok{{else}}<b class="fail">{{.Detail}}</b>{{end}}</td></tr>{{end}}
</table>
<h2>Binaries</h2><ul>{{range .Meta.Binaries}}<li>{{.Name}} {{.Version}} <code>{{.SHA256}}</code></li>{{end}}</ul>
</body></html>`))

var roleColor = map[string]string{"standby": "#8c959f", "promoting": "#d4a72c", "primary": "#1a7f37", "failed": "#cf222e", "starting": "#afb8c1", "down": "#24292f", "restarted": "#24292f"}

// timelineSVG draws the run: one lane for steps, one for faults, one per
// master's role, and the client throughput underneath.
func (b *Bundle) timelineSVG() string {
	end := b.Meta.DurationMS * 1e6
	for _, e := range b.Input.Events {
		end = max(end, e.At)
	}
	if end <= 0 {
		end = 1
	}
	const left, width, lane = 150.0, 1150.0, 22.0
	x := func(ns int64) float64 { return left + width*float64(ns)/float64(end) }
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
	fmt.Fprintf(&s, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" role="img" aria-label="run timeline">`, left+width+20, height)
	// time axis
	step := niceStep(float64(end) / 1e9)
	for t := 0.0; t*1e9 <= float64(end); t += step {
		xx := x(int64(t * 1e9))
		fmt.Fprintf(&s, `<line x1="%.1f" y1="14" x2="%.1f" y2="%.0f" stroke="#eaeef2"/><text x="%.1f" y="10" text-anchor="middle" fill="#57606a">%gs</text>`, xx, xx, chartTop+chartH, xx, t)
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
		fmt.Fprintf(&s, `<rect x="%.1f" y="%.1f" width="%.1f" height="16" fill="%s" opacity="0.75"><title>%d %s (%.2fs)%s</title></rect>`,
			x(st.StartNS), laneY(0)+2, w, color, st.Index, template.HTMLEscapeString(st.Label), float64(st.EndNS-st.StartNS)/1e9, template.HTMLEscapeString(" "+st.Detail))
	}
	// faults: from inject to heal
	label(1, "faults")
	open := map[string]audit.Event{}
	drawFault := func(from, to audit.Event) {
		fmt.Fprintf(&s, `<rect x="%.1f" y="%.1f" width="%.1f" height="16" fill="#cf222e" opacity="0.55"><title>%s %s</title></rect><text x="%.1f" y="%.1f" fill="#fff">%s</text>`,
			x(from.At), laneY(1)+2, math.Max(3, x(to.At)-x(from.At)), template.HTMLEscapeString(from.Name), template.HTMLEscapeString(from.Target), x(from.At)+3, laneY(1)+14, template.HTMLEscapeString(shorten(from.Name+" "+from.Target, int((x(to.At)-x(from.At))/6))))
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
		drawFault(f, audit.Event{At: end})
	}
	// snapshot publications
	label(2, "snapshots")
	for _, e := range b.Input.Events {
		if e.Kind != "snapshot" {
			continue
		}
		cx, cy := x(e.At), laneY(2)+10
		fmt.Fprintf(&s, `<path d="M%.1f %.1f l6 -7 l6 7 l-6 7 z" fill="#8250df"><title>%s</title></path>`, cx-6, cy, template.HTMLEscapeString(e.Detail))
	}
	// roles per master
	for i, m := range masters {
		label(3+i, m)
		var cur string
		var since int64
		flush := func(to int64) {
			if cur != "" {
				fmt.Fprintf(&s, `<rect x="%.1f" y="%.1f" width="%.1f" height="16" fill="%s"><title>%s %s</title></rect>`, x(since), laneY(3+i)+2, math.Max(1, x(to)-x(since)), roleColor[cur], m, cur)
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
		flush(end)
	}
	// throughput: acknowledged mutations per bucket, failures and unknowns as marks
	bucket := int64(math.Max(float64(end)/200, 1e8))
	n := int(end/bucket) + 1
	okc, badc := make([]int, n), make([]int, n)
	for _, op := range b.Input.Ops {
		i := int(op.Complete / bucket)
		if i < 0 || i >= n {
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
	fmt.Fprintf(&s, `<text x="4" y="%.1f">ok ops/s</text><text x="4" y="%.1f" fill="#57606a">peak %.0f</text>`, chartTop+14, chartTop+28, float64(peak)*perSec)
	var pts []string
	pts = append(pts, fmt.Sprintf("%.1f,%.1f", left, chartTop+chartH))
	for i, v := range okc {
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(int64(i)*bucket), chartTop+chartH-chartH*float64(v)/float64(peak)))
	}
	pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(int64(n)*bucket), chartTop+chartH))
	fmt.Fprintf(&s, `<polygon points="%s" fill="#54aeff" opacity="0.6"/>`, strings.Join(pts, " "))
	for i, v := range badc {
		if v > 0 {
			fmt.Fprintf(&s, `<rect x="%.1f" y="%.1f" width="2" height="8" fill="#cf222e"><title>%d failed or unknown</title></rect>`, x(int64(i)*bucket), chartTop+chartH+2, v)
		}
	}
	// legend
	lx := left
	for _, r := range []string{"standby", "promoting", "primary", "failed", "down"} {
		fmt.Fprintf(&s, `<rect x="%.1f" y="%.1f" width="10" height="10" fill="%s"/><text x="%.1f" y="%.1f">%s</text>`, lx, height-14, roleColor[r], lx+14, height-5, r)
		lx += 90
	}
	fmt.Fprintf(&s, `<rect x="%.1f" y="%.1f" width="10" height="10" fill="#cf222e" opacity="0.55"/><text x="%.1f" y="%.1f">fault</text>`, lx, height-14, lx+14, height-5)
	lx += 70
	fmt.Fprintf(&s, `<path d="M%.1f %.1f l5 -5 l5 5 l-5 5 z" fill="#8250df"/><text x="%.1f" y="%.1f">snapshot published</text>`, lx, height-9, lx+14, height-5)
	s.WriteString(`</svg>`)
	return s.String()
}

const time1s = 1e9

func niceStep(total float64) float64 {
	for _, s := range []float64{1, 2, 5, 10, 15, 30, 60, 120, 300, 600} {
		if total/s <= 14 {
			return s
		}
	}
	return 1200
}

func shorten(s string, n int) string {
	if n < 4 {
		return ""
	}
	if len(s) > n {
		return s[:n-1] + "…"
	}
	return s
}
