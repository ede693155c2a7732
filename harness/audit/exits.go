package audit

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// crashLoopExits is how many exits of one node with one cause make a
// crash loop.
const crashLoopExits = 3

// ProcessExits fails a run in which a master's process ended on its own —
// a signal, an exit status, an abort the harness did not cause — beyond a
// crash window the scenario armed (a panic term) or an exit the scenario
// expects (Expect.ExitReasons: a master that refuses to start, as the
// scenario means it to, says one of them in its last log lines). Three or
// more such exits of one node with one cause are named a crash loop. Every
// exit's evidence carries its last log lines; every supervisor restart is
// counted.
func ProcessExits(in *Input) Result {
	var ev evidence
	type key struct{ node, cause string }
	own := map[key][]Event{}
	var order []key
	armed, expected, restarts := 0, 0, 0
	for _, e := range in.Events {
		switch {
		case e.Kind == "note" && e.Name == "supervisor":
			restarts++
			continue
		case e.Kind != "exit":
			continue
		case e.Name == ExitArmed:
			armed++
			continue
		case expectedExit(e, in.Expect.ExitReasons):
			expected++
			continue
		}
		k := key{e.Target, exitCauseOf(e.Detail)}
		if _, seen := own[k]; !seen {
			order = append(order, k)
		}
		own[k] = append(own[k], e)
	}
	exits := 0
	for _, k := range order {
		es := own[k]
		exits += len(es)
		if len(es) >= crashLoopExits {
			ev.add("%s crash-looped: %d exits with %s between %s and %s; its last log lines before the last one: %s", k.node, len(es),
				k.cause, at(es[0].At), at(es[len(es)-1].At), logTail(es[len(es)-1].Log))
			continue
		}
		for _, e := range es {
			ev.add("%s exited on its own at %s (%s); its last log lines: %s", e.Target, at(e.At), e.Detail, logTail(e.Log))
		}
	}
	summary := fmt.Sprintf("%d exits of a master on its own", exits)
	if armed > 0 {
		summary += fmt.Sprintf(", %d at a crash window the scenario armed", armed)
	}
	if expected > 0 {
		summary += fmt.Sprintf(", %d the scenario expects (%s)", expected, strings.Join(in.Expect.ExitReasons, ", "))
	}
	if restarts > 0 {
		summary += fmt.Sprintf(", %d supervisor restarts", restarts)
	}
	return Result{Pass: exits == 0, Summary: summary, Evidence: ev.list(),
		Exercised: map[string]int{"process-exits": exits + armed + expected}}
}

// expectedExit: the exit's last log lines say one of reasons.
func expectedExit(e Event, reasons []string) bool {
	return slices.ContainsFunc(reasons, func(r string) bool {
		return slices.ContainsFunc(e.Log, func(l string) bool { return strings.Contains(l, r) })
	})
}

// exitCauseOf is the cause part of an exit event's detail ("signal:
// aborted" of "signal: aborted, 512ms after its start (pid 42)").
func exitCauseOf(detail string) string {
	cause, _, _ := strings.Cut(detail, ", ")
	return cause
}

// at is a run time as the report writes it.
func at(ns int64) string { return fmt.Sprintf("%.2fs", time.Duration(ns).Seconds()) }

// logTail is an exit's last log lines in one evidence line (the last three,
// each cut to 240 characters).
func logTail(lines []string) string {
	if len(lines) == 0 {
		return "(none)"
	}
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		if len(l) > 240 {
			l = l[:240] + "…"
		}
		out[i] = "«" + l + "»"
	}
	return strings.Join(out, " ")
}
