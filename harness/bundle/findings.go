package bundle

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/oplogha/oplogha/harness/audit"
	"github.com/oplogha/oplogha/harness/masterlog"
)

// maxLogGroups is how many message shapes of the masters' warnings and
// errors a report shows (the most frequent).
const maxLogGroups = 15

// exits are the run's process exits a harness did not cause and the
// supervisor's restarts, in time order.
func (b *Bundle) exits() []audit.Event {
	var out []audit.Event
	for _, e := range b.Input.Events {
		if e.Kind == "exit" || (e.Kind == "note" && e.Name == "supervisor") {
			out = append(out, e)
		}
	}
	return out
}

// logGroups are the masters' warnings and errors by message shape, the
// most frequent first (nil when the bundle holds no master logs).
func (b *Bundle) logGroups() []masterlog.Group {
	gs, err := masterlog.Summarize(filepath.Join(b.Dir, LogsDir, "masters"), b.Meta.Started)
	if err != nil || len(gs) == 0 {
		return nil
	}
	if len(gs) > maxLogGroups {
		gs = gs[:maxLogGroups]
	}
	return gs
}

// writeFindings adds the process exits and the masters' own warnings and
// errors to summary.md.
func (b *Bundle) writeFindings(s *strings.Builder) {
	if exits := b.exits(); len(exits) > 0 {
		s.WriteString("\n## Process exits\n\n")
		for _, e := range exits {
			if e.Kind == "note" {
				fmt.Fprintf(s, "- %s %s: supervisor: %s\n", sec(e.At), e.Target, e.Detail)
				continue
			}
			fmt.Fprintf(s, "- %s %s exited %s: %s\n", sec(e.At), e.Target, e.Name, e.Detail)
			if len(e.Log) > 0 {
				s.WriteString("\n  ```\n")
				for _, l := range e.Log {
					fmt.Fprintf(s, "  %s\n", l)
				}
				s.WriteString("  ```\n\n")
			}
		}
	}
	if gs := b.logGroups(); len(gs) > 0 {
		s.WriteString("\n## What the masters logged (warnings and errors, by message shape)\n\n| node | level | × | from | to | message |\n|---|---|---|---|---|---|\n")
		for _, g := range gs {
			fmt.Fprintf(s, "| %s | %s | %d | %s | %s | %s |\n", g.Node, g.Level, g.Count, sec(g.First), sec(g.Last), mdEscape(g.Shape))
		}
	}
}

func sec(ns int64) string { return fmt.Sprintf("%.2fs", float64(ns)/1e9) }
