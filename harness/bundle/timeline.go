package bundle

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/oplogha/oplogha/harness/audit"
)

// TimelineEntry is one fault or heal as a replay must reproduce it: the
// fault kind and the scenario's name for it, in order. The node or link it
// resolved to is kept for the reader but not compared: "kill the primary"
// is the same fault whichever master won the election this time.
type TimelineEntry struct {
	Kind, Fault, As string
	Resolved        string
}

func (e TimelineEntry) String() string {
	return fmt.Sprintf("%s %s %s → %s", e.Kind, e.Fault, e.As, e.Resolved)
}

// FaultTimeline extracts the fault and heal events of a run, in order.
func FaultTimeline(events []audit.Event) []TimelineEntry {
	var out []TimelineEntry
	for _, e := range events {
		if (e.Kind == "fault" || e.Kind == "heal") && e.OK {
			out = append(out, TimelineEntry{Kind: e.Kind, Fault: e.Name, As: e.Detail, Resolved: e.Target})
		}
	}
	return out
}

// DiffTimelines says where two fault timelines differ ("" when they agree
// on every entry's kind, fault and name, in order).
func DiffTimelines(was, now []TimelineEntry) string {
	var b strings.Builder
	for i := 0; i < max(len(was), len(now)); i++ {
		var w, n *TimelineEntry
		if i < len(was) {
			w = &was[i]
		}
		if i < len(now) {
			n = &now[i]
		}
		switch {
		case w == nil:
			fmt.Fprintf(&b, "  %d: (none) | %s\n", i+1, n)
		case n == nil:
			fmt.Fprintf(&b, "  %d: %s | (none)\n", i+1, w)
		case w.Kind != n.Kind || w.Fault != n.Fault || !sameName(w.As, n.As):
			fmt.Fprintf(&b, "  %d: %s | %s\n", i+1, w, n)
		}
	}
	return b.String()
}

// unnamed is the name the runner gives a fault without `as`: step-<its line
// in scenario.yaml>. A replay runs the bundle's re-marshalled scenario.yaml,
// whose lines are not the source file's, so two unnamed faults are the same
// name (their kind and place in the order are still compared).
var unnamed = regexp.MustCompile(`^step-\d+$`)

func sameName(a, b string) bool {
	return a == b || (unnamed.MatchString(a) && unnamed.MatchString(b))
}
