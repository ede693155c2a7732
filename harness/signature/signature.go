// Package signature names what a failing run found, so that fifty failing
// runs of one bug read as one finding with fifty runs. A signature is read
// from the run's audit results alone — the audits that failed, the
// invariants their evidence names, the windows minimum-work missed, the
// cause of a master's own exits and the shape of its last log line before
// them, and the shape of a run error — with everything that differs from
// run to run of one bug masked: node names, times, revisions, counts, keys.
package signature

import (
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/oplogha/oplogha/harness/audit"
	"github.com/oplogha/oplogha/harness/masterlog"
)

// Of is the signature of a run's results and its run error ("" for
// none): its parts sorted and joined by " · ", or "" for a run that found
// nothing.
func Of(results []audit.Result, runErr string) string {
	var parts []string
	add := func(p string) {
		if !slices.Contains(parts, p) {
			parts = append(parts, p)
		}
	}
	for _, r := range results {
		if r.Pass || r.Skipped {
			continue
		}
		details := detailsOf(r, runErr != "")
		if len(details) == 0 && r.Name == "minimum-work" && runErr != "" {
			continue // it failed for the step the run error names
		}
		if len(details) == 0 {
			add(r.Name)
		}
		for _, d := range details {
			add(r.Name + " " + d)
		}
	}
	if runErr != "" {
		add("run error: " + shape(firstClause(runErr)))
	}
	sort.Strings(parts)
	return strings.Join(parts, " · ")
}

// detailsOf are the finer parts of one failed audit's signature: the
// invariant ids its evidence is tagged with, a missed window, the first
// step that did not complete (the others follow from it; none when the run
// stopped with an error, which says so itself), an exit's cause with its
// last log line's shape.
func detailsOf(r audit.Result, runStopped bool) []string {
	var out []string
	add := func(d string) {
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	stepSeen := false
	for _, e := range r.Evidence {
		if m := lossFate.FindStringSubmatch(e); m != nil {
			// what became of the node that lost the writes: one bug loses
			// them to a crash, another on a node nothing happened to
			add("[ack-durable] lost: " + m[1])
			continue
		}
		if m := invariantTag.FindStringSubmatch(e); m != nil {
			add("[" + m[1] + "]")
			continue
		}
		if m := unreachedWindow.FindStringSubmatch(e); m != nil {
			add("window " + m[1] + " never reached")
			continue
		}
		if m := stepIncomplete.FindStringSubmatch(e); m != nil {
			if !runStopped && !stepSeen {
				add("step " + shape(drawnAlias.ReplaceAllString(m[1], "f-")) + " did not complete")
			}
			stepSeen = true
			continue
		}
		if m := crashLoop.FindStringSubmatch(e); m != nil {
			add("crash loop (" + m[1] + lastLogShape(e) + ")")
			continue
		}
		if m := ownExit.FindStringSubmatch(e); m != nil {
			cause, _, _ := strings.Cut(m[1], ", ")
			add("exit (" + cause + lastLogShape(e) + ")")
			continue
		}
		if r.Name != "minimum-work" || (injections.MatchString(e) && (stepSeen || runStopped)) {
			continue
		}
		// what the run fell short of: ops, promotions, injections (the
		// injections only where no step stopped them)
		add(cut(shape(e), 100))
	}
	sort.Strings(out)
	return out
}

var (
	invariantTag    = regexp.MustCompile(`^\[([a-z0-9-]+)\]`)
	lossFate        = regexp.MustCompile(`^\[ack-durable\] lost \(([^)]+)\): `)
	unreachedWindow = regexp.MustCompile(`^window (\S+) was never reached`)
	stepIncomplete  = regexp.MustCompile(`^step (.+?) did not complete`)
	drawnAlias      = regexp.MustCompile(`\bf\d+-`)
	injections      = regexp.MustCompile(`^\d+ of \d+ fault/heal steps injected`)
	crashLoop       = regexp.MustCompile(`^\S+ crash-looped: \d+ exits with ([^;]+?) between`)
	ownExit         = regexp.MustCompile(`^\S+ exited on its own at \S+ \(([^)]*)\)`)
	logLine         = regexp.MustCompile(`«([^»]*)»`)
	nodeName        = regexp.MustCompile(`\b(master|etcd)-\d+\b`)
)

// lastLogShape is ", «shape»" of the last warning or error among an
// evidence line's log lines (the last line when none is one), or "".
func lastLogShape(evidence string) string {
	lines := logLine.FindAllStringSubmatch(evidence, -1)
	if len(lines) == 0 {
		return ""
	}
	last := strings.TrimSuffix(lines[len(lines)-1][1], "…")
	for i := len(lines) - 1; i >= 0; i-- {
		if l, ok := masterlog.Parse(strings.TrimSuffix(lines[i][1], "…"), 2000); ok {
			return ", «" + cut(shape(l.Message), 120) + "»"
		}
	}
	if m := glogPrefix.FindStringSubmatch(last); m != nil {
		last = m[1] // an info line: its message, without glog's prefix
	}
	return ", «" + cut(shape(last), 120) + "»"
}

// glogPrefix is glog's line prefix (level, date, time, thread,
// file:line), before the message.
var glogPrefix = regexp.MustCompile(`^[IWEF]\d{4,8} \d\d:\d\d:\d\d\.\d+\s+\d+ [^ \]]+\] ?(.*)$`)

// shape masks what differs between runs of one bug: node names, then
// what masterlog.Shape masks (keys, addresses, ids, numbers).
func shape(s string) string {
	return masterlog.Shape(nodeName.ReplaceAllString(s, "$1-N"))
}

// firstClause is an error's text up to its second ": " (where it failed
// and how), so that wrapped causes that name a moment are left out.
func firstClause(s string) string {
	parts := strings.SplitN(s, ": ", 3)
	if len(parts) > 2 {
		parts = parts[:2]
	}
	return cut(strings.Join(parts, ": "), 160)
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// Findings are a signature's parts that each stand for one finding: a run
// can show several (a crash that loses writes, and logs that leak keys),
// and fifty runs of one bug share that finding however the rest of their
// runs differ. A part another part of the same audit says more precisely
// is left out (the bare [ack-durable] beside what happened to the node
// that lost the writes).
func Findings(sig string) []string {
	parts := Parts(sig)
	var out []string
	for _, p := range parts {
		if strings.HasSuffix(p, " [ack-durable]") && slices.ContainsFunc(parts, func(q string) bool {
			return strings.HasPrefix(q, p+" lost: ")
		}) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// Parts are a signature's parts.
func Parts(sig string) []string {
	if sig == "" {
		return nil
	}
	return strings.Split(sig, " · ")
}

// Covers says whether signature b shows every part of a: a shrunk
// candidate fails the same way as its original only when it still shows
// all the original showed (one shared part is not enough: a finding every
// run of a master shows, such as its logs leaking keys, would let a
// shrink drop every step that mattered).
func Covers(a, b string) bool {
	pb := Parts(b)
	for _, p := range Parts(a) {
		if !slices.Contains(pb, p) {
			return false
		}
	}
	return a != ""
}

// Overlap says whether two signatures share a part.
func Overlap(a, b string) bool {
	pb := Parts(b)
	for _, p := range Parts(a) {
		if slices.Contains(pb, p) {
			return true
		}
	}
	return false
}
