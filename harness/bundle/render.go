package bundle

import (
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/oplogha/oplogha/impl/contract/keyspace"

	"github.com/oplogha/oplogha/harness/audit"
	"github.com/oplogha/oplogha/harness/history"
	"github.com/oplogha/oplogha/harness/masterkind"
	"github.com/oplogha/oplogha/harness/masterlog"
)

// WriteSummary writes summary.md: the verdict, the audit table, the facts.
func (b *Bundle) WriteSummary() error {
	var s strings.Builder
	verdict := "PASS"
	if !b.Pass() {
		verdict = "FAIL"
	}
	fmt.Fprintf(&s, "# %s — %s\n\n", b.Meta.Scenario, verdict)
	master := b.Meta.Master
	if master == "" {
		master = "reference"
	}
	fmt.Fprintf(&s, "seed %d · tier %s · runtime %s · master %s · %s · boot %s\n\n", b.Meta.Seed, b.Meta.Tier, b.Meta.Runtime, master, ms(b.Meta.DurationMS), ms(b.Meta.BootMS))
	if b.Meta.Error != "" {
		fmt.Fprintf(&s, "**Run error:** %s\n\n", b.Meta.Error)
	}
	s.WriteString("| audit | verdict | summary |\n|---|---|---|\n")
	for _, r := range b.Results {
		v := "pass"
		switch {
		case r.Skipped:
			v = "skip"
		case !r.Pass:
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
	fmt.Fprintf(&s, "- etcd: revision %d, %d batch keys (%s … %s), %d events of history\n", b.Input.Final.Revision, b.Input.Final.BatchCount,
		b.Input.Final.FirstBatchKey, b.Input.Final.LastBatchKey, len(b.Input.Etcd))
	ks, _ := keyspace.New(b.Input.ClusterID) // an invalid id hides no key
	for _, k := range sortedKeys(b.Input.Final.Keys) {
		if ks.ClusterID() != "" && strings.HasPrefix(k, ks.LeaderCandidates()) {
			continue
		}
		fmt.Fprintf(&s, "  - `%s` = `%s`\n", k, b.Input.Final.Keys[k])
	}
	s.WriteString("- nodes at the end:\n")
	for _, n := range b.Input.Nodes {
		fmt.Fprintf(&s, "  - %s\n", b.nodeLine(n))
	}
	b.writeFindings(&s)
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

// nodeLine is a node at the end, with only what its master kind says: a
// master without a cursor, a bootstrap report or a state digest shows none
// (not a zero or an empty field).
func (b *Bundle) nodeLine(n audit.Node) string {
	kind := b.Input.Master
	if kind.Name == "" {
		kind = masterkind.Reference()
	}
	line := fmt.Sprintf("%s: %s, running=%v", n.Name, n.Health.Role, n.Running)
	if kind.Can(masterkind.Cursor) {
		line += fmt.Sprintf(", batch %d seq %d", n.State.Cursor.BatchID, n.State.Cursor.Seq)
	}
	if kind.Can(masterkind.BootstrapReport) {
		line += ", bootstrap " + n.Health.Bootstrap.Source
	}
	if kind.Can(masterkind.State) {
		line += ", digest " + n.State.Digest
	}
	return line
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

// AuditsID is the id of the audit table in report.html and AuditRow the
// class of each of its rows (one per audit): stable names a browser check
// finds the table and counts its rows by.
const (
	AuditsID = "audits"
	AuditRow = "audit"
)

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
		AuditsID string
		AuditRow string
		Exits    []audit.Event
		Logged   []masterlog.Group
	}{Title: b.Meta.Scenario, Pass: b.Pass(), Meta: b.Meta, Results: b.Results, Exits: b.exits(), Logged: b.logGroups(),
		SVG: template.HTML(b.timelineSVG()), Retain: template.HTML(b.retentionSVG()),
		Counts: history.Counts(b.Input.Ops), Ops: len(b.Input.Ops), AuditsID: AuditsID, AuditRow: AuditRow}
	if _, err := os.Stat(filepath.Join(b.Dir, LinearizeFile)); err == nil {
		data.Lineariz = true
	}
	path := filepath.Join(b.Dir, ReportFile)
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := reportTmpl.Execute(f, data); err != nil {
		f.Close()
		return fmt.Errorf("render %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

var reportTmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"sec":   func(ns int64) string { return fmt.Sprintf("%.2fs", float64(ns)/1e9) },
	"since": func(a, b int64) string { return fmt.Sprintf("%.2fs", float64(b-a)/1e9) },
}).Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>{{.Title}} — oplogha</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#1d2327;max-width:1400px}
h1{font-size:20px;margin:0 0 4px} .pass{color:#1a7f37} .fail{color:#cf222e} .skip{color:#9a6700}
.facts{color:#57606a;margin-bottom:16px}
table{border-collapse:collapse;margin:12px 0} td,th{border:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa} ul.ev{margin:4px 0;padding-left:18px;font:12px monospace}
pre.log{margin:0;font:11px monospace;white-space:pre-wrap;max-width:900px}
svg text{font:11px system-ui,sans-serif}
</style></head><body>
<h1>{{.Title}} — {{if .Pass}}<span class="pass">PASS</span>{{else}}<span class="fail">FAIL</span>{{end}}</h1>
<div class="facts">seed {{.Meta.Seed}} · tier {{.Meta.Tier}} · runtime {{.Meta.Runtime}} · master {{if .Meta.Master}}{{.Meta.Master}}{{else}}reference{{end}} · run {{.Meta.DurationMS}} ms · boot {{.Meta.BootMS}} ms ·
{{.Ops}} client ops (ok {{index .Counts "ok"}}, failed {{index .Counts "failed"}}, unknown {{index .Counts "unknown"}})
{{if .Meta.Error}}<br><b class="fail">run error: {{.Meta.Error}}</b>{{end}}</div>
{{.SVG}}
{{if .Exits}}<h2>Process exits</h2><p class="facts">every exit of a master the harness did not cause, and every supervisor restart</p>
<table><tr><th>at</th><th>node</th><th>how</th><th>its last log lines</th></tr>
{{range .Exits}}<tr><td>{{sec .At}}</td><td>{{.Target}}</td><td>{{if eq .Kind "note"}}supervisor: {{.Detail}}{{else}}` +
	`{{if .OK}}{{.Name}}{{else}}<b class="fail">{{.Name}}</b>{{end}}: {{.Detail}}{{end}}</td>` +
	`<td>{{if .Log}}<pre class="log">{{range .Log}}{{.}}
{{end}}</pre>{{end}}</td></tr>
{{end}}</table>{{end}}
{{if .Logged}}<h2>What the masters logged</h2><p class="facts">warnings and errors in the masters' own logs, by message shape ` +
	`(keys, addresses and numbers masked; error codes kept), the most frequent first</p>
<table><tr><th>node</th><th>level</th><th>×</th><th>from</th><th>to</th><th>message</th></tr>
{{range .Logged}}<tr><td>{{.Node}}</td><td>{{.Level}}</td><td>{{.Count}}</td><td>{{sec .First}}</td><td>{{sec .Last}}</td>` +
	`<td><code title="{{.Example}}">{{.Shape}}</code></td></tr>
{{end}}</table>{{end}}
{{if .Retain}}<h2>Retention</h2><p class="facts">once a second: batch keys in etcd (green ticks: the floor moved), ` +
	`snapshot groups in the store, largest etcd member's database</p>{{.Retain}}{{end}}
<h2>Audits</h2>
<table id="{{.AuditsID}}"><tr><th>audit</th><th>verdict</th><th>summary and evidence</th></tr>
{{range .Results}}<tr class="{{$.AuditRow}}"><td>{{.Name}}</td><td>{{if .Skipped}}<span class="skip">skip</span>{{else if .Pass}}<span class="pass">pass</span>{{else}}<b class="fail">FAIL</b>{{end}}</td>
<td>{{.Summary}}{{if .Evidence}}<ul class="ev">{{range .Evidence}}<li>{{.}}</li>{{end}}</ul>{{end}}</td></tr>
{{end}}</table>
{{if .Lineariz}}<p><a href="linearizability.html">porcupine's linearizability visualisation</a></p>{{end}}
<h2>Steps</h2>
<table><tr><th>#</th><th>line</th><th>step</th><th>start</th><th>took</th><th>ok</th></tr>
{{range .Meta.Steps}}<tr><td>{{.Index}}</td><td>{{.Line}}</td><td>{{.Label}}</td><td>{{sec .StartNS}}</td>` +
	`<td>{{since .StartNS .EndNS}}</td><td>{{if .OK}}ok{{else}}<b class="fail">{{.Detail}}</b>{{end}}</td></tr>{{end}}
</table>
<h2>Binaries</h2><ul>{{range .Meta.Binaries}}<li>{{.Name}} {{.Version}} <code>{{.SHA256}}</code></li>{{end}}</ul>
</body></html>`))
