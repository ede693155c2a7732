package browser

import (
	"fmt"

	"github.com/oplogha/oplogha/harness/bundle"
)

// probe is what the page shows, as the browser laid it out.
type probe struct {
	Timeline bool    `json:"timeline"` // an element with the timeline's id
	TLWidth  float64 `json:"tlWidth"`  // its laid-out size, CSS pixels
	TLHeight float64 `json:"tlHeight"`
	Marks    int     `json:"marks"` // marks of the run in it with an area on screen
	Audits   bool    `json:"audits"`
	AWidth   float64 `json:"aWidth"`
	AHeight  float64 `json:"aHeight"`
	Rows     int     `json:"rows"` // audit rows with an area on screen
}

// probeJS measures the report's timeline and audit table by the ids and
// classes harness/bundle gives them. Only what has an area counts: an
// element the page names but does not show is as good as absent.
var probeJS = fmt.Sprintf(`(() => {
  const shown = e => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  const size = e => { if (!e) return [0, 0]; const r = e.getBoundingClientRect(); return [r.width, r.height]; };
  const count = (root, sel) => root ? [...root.querySelectorAll(sel)].filter(shown).length : 0;
  const tl = document.getElementById(%[1]q), au = document.getElementById(%[2]q);
  const [tlWidth, tlHeight] = size(tl), [aWidth, aHeight] = size(au);
  return {timeline: !!tl, tlWidth, tlHeight, marks: count(tl, "."+%[3]q),
          audits: !!au, aWidth, aHeight, rows: count(au, "tr."+%[4]q)};
})()`, bundle.TimelineID, bundle.AuditsID, bundle.TimelineMark, bundle.AuditRow)

// problems are what the probe says is missing or empty.
func (p probe) problems() []Problem {
	var out []Problem
	switch {
	case !p.Timeline:
		out = append(out, Problem{NoTimeline, fmt.Sprintf("no element #%s", bundle.TimelineID)})
	case p.TLWidth <= 0 || p.TLHeight <= 0:
		out = append(out, Problem{NoTimeline, fmt.Sprintf("#%s is laid out %.0f×%.0f px", bundle.TimelineID, p.TLWidth, p.TLHeight)})
	case p.Marks == 0:
		out = append(out, Problem{EmptyTimeline, fmt.Sprintf("#%s draws no step, fault, snapshot, role or throughput (no visible .%s)",
			bundle.TimelineID, bundle.TimelineMark)})
	}
	switch {
	case !p.Audits:
		out = append(out, Problem{NoAuditTable, fmt.Sprintf("no element #%s", bundle.AuditsID)})
	case p.AWidth <= 0 || p.AHeight <= 0:
		out = append(out, Problem{NoAuditTable, fmt.Sprintf("#%s is laid out %.0f×%.0f px", bundle.AuditsID, p.AWidth, p.AHeight)})
	case p.Rows == 0:
		out = append(out, Problem{EmptyAuditTable, fmt.Sprintf("#%s has no visible tr.%s", bundle.AuditsID, bundle.AuditRow)})
	}
	return out
}
