package benchreport

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// groupOrder is the order of sections in the report (the order).
var groupOrder = []string{"write", "failover", "lag", "capture", "pipeline", "recovery", "replay", "codec", "harness", "etcd"}

var groupTitle = map[string]string{
	"write":    "Write path (client API)",
	"failover": "Failover",
	"lag":      "Standby lag",
	"capture":  "Capture critical section",
	"pipeline": "Snapshot pipeline",
	"recovery": "Recovery",
	"replay":   "Suffix replay",
	"codec":    "Streaming codec",
	"harness":  "Harness",
	"etcd":     "etcd cost",
}

// Meta describes the run the figures came from.
type Meta struct {
	GoVersion string `json:"go_version"`
	Host      string `json:"host"`
	CPUs      int    `json:"cpus"`
	Commit    string `json:"commit,omitempty"`
	Elapsed   string `json:"elapsed,omitempty"`
}

// Write renders figs into dir as results.md and results.json, and each
// series as NAME.svg, drawn in results.md under its group.
func Write(dir string, meta Meta, figs []Figure, series []Series) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(struct {
		Meta    Meta     `json:"meta"`
		Figures []Figure `json:"figures"`
	}{meta, figs}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), append(data, '\n'), 0o644); err != nil {
		return err
	}
	for _, s := range series {
		if err := os.WriteFile(filepath.Join(dir, s.Name+".svg"), []byte(SVG(s)), 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, "results.md"), []byte(Markdown(meta, figs, series)), 0o644)
}

// Markdown is the results table: one section per group, each figure beside
// its baseline with the ratio drawn as a bar (1× is the baseline), and the
// group's plots (NAME.svg beside it) after its table.
func Markdown(meta Meta, figs []Figure, series []Series) string {
	var b strings.Builder
	b.WriteString("# oplogha benchmarks\n\n")
	fmt.Fprintf(&b, "%s on %s, %d CPUs", meta.GoVersion, meta.Host, meta.CPUs)
	if meta.Commit != "" {
		fmt.Fprintf(&b, ", commit %s", meta.Commit)
	}
	if meta.Elapsed != "" {
		fmt.Fprintf(&b, ", `make bench` took %s", meta.Elapsed)
	}
	b.WriteString(". Every baseline was measured in the same process as its figure. ")
	b.WriteString("Ratio = figure ÷ baseline; the bar is drawn on a log scale, `|` marks 1×.\n\n")
	met, missed := 0, 0
	for _, f := range figs {
		if f.Met != nil {
			if *f.Met {
				met++
			} else {
				missed++
			}
		}
	}
	fmt.Fprintf(&b, "Targets: **%d met, %d missed**.\n", met, missed)
	groups := map[string][]Figure{}
	var extra []string
	for _, f := range figs {
		if _, ok := groupTitle[f.Group]; !ok && len(groups[f.Group]) == 0 {
			extra = append(extra, f.Group)
		}
		groups[f.Group] = append(groups[f.Group], f)
	}
	for _, g := range append(append([]string(nil), groupOrder...), extra...) {
		fs := groups[g]
		if len(fs) == 0 {
			continue
		}
		title := groupTitle[g]
		if title == "" {
			title = g
		}
		fmt.Fprintf(&b, "\n## %s\n\n| figure | value | baseline | baseline value | ratio | | target |\n|---|---:|---|---:|---:|---|---|\n", title)
		for _, f := range fs {
			ratio, bar := "", ""
			if f.Baseline != "" && f.Ratio > 0 {
				ratio = fmt.Sprintf("%.3g×", f.Ratio)
				bar = "`" + Bar(f.Ratio) + "`"
			}
			target := f.Target
			if f.Met != nil {
				if *f.Met {
					target = "✅ " + target
				} else {
					target = "❌ " + target
				}
			}
			baseValue := ""
			if f.Baseline != "" {
				baseValue = FormatValue(f.BaselineValue, f.Unit)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", f.Name, FormatValue(f.Value, f.Unit), f.Baseline, baseValue, ratio, bar, target)
		}
		var notes []string
		for _, f := range fs {
			if f.Note != "" {
				notes = append(notes, fmt.Sprintf("- *%s*: %s", f.Name, f.Note))
			}
		}
		if len(notes) > 0 {
			b.WriteString("\n" + strings.Join(notes, "\n") + "\n")
		}
		for _, s := range series {
			if s.Group == g {
				fmt.Fprintf(&b, "\n![%s](%s.svg)\n", s.Title, s.Name)
			}
		}
	}
	return b.String()
}

// Bar draws a ratio on a log scale from 1/1000× to 1000×, 1× in the middle.
func Bar(ratio float64) string {
	const half = 12
	pos := int(math.Round(math.Log10(ratio) / 3 * half))
	pos = max(-half, min(half, pos))
	cells := []rune(strings.Repeat("·", half) + "|" + strings.Repeat("·", half))
	mid := half
	if pos < 0 {
		for i := mid + pos; i < mid; i++ {
			cells[i] = '█'
		}
	} else {
		for i := mid + 1; i <= mid+pos; i++ {
			cells[i] = '█'
		}
	}
	return string(cells)
}

// FormatValue prints a value in its unit, durations humanly.
func FormatValue(v float64, unit string) string {
	switch unit {
	case "s":
		d := time.Duration(v * float64(time.Second))
		switch {
		case d < time.Microsecond:
			return fmt.Sprintf("%d ns", d.Nanoseconds())
		case d < time.Millisecond:
			return fmt.Sprintf("%.3g µs", v*1e6)
		case d < time.Second:
			return fmt.Sprintf("%.3g ms", v*1e3)
		}
		return fmt.Sprintf("%.3g s", v)
	case "":
		return fmt.Sprintf("%.4g", v)
	}
	if v >= 1e6 && (strings.HasSuffix(unit, "/s") || unit == "objects") {
		return fmt.Sprintf("%.3gM %s", v/1e6, unit)
	}
	return fmt.Sprintf("%.4g %s", v, unit)
}
