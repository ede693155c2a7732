package bundle

import (
	"strings"

	"github.com/oplogha/oplogha/harness/audit"
)

// Anchors are the logical events the bundle's faults landed on, by the
// 1-based index of their step, and the master that won the run's first
// election: what a replay or a shrink injects each fault at (and starts
// first) so it lands where the original did.
func (b *Bundle) Anchors() (anchors map[int]audit.Anchor, firstPrimary string) {
	anchors = map[int]audit.Anchor{}
	for _, e := range b.Input.Events {
		if e.Kind == "fault" && e.OK && e.Anchor != nil {
			anchors[e.Anchor.Step] = *e.Anchor
		}
		if e.Kind == "role" && firstPrimary == "" && strings.HasSuffix(e.Detail, "→ primary") {
			firstPrimary = e.Target
		}
	}
	return anchors, firstPrimary
}

// Reanchor maps anchors onto a scenario derived from the original (a shrunk
// candidate): origin[i] is the original 1-based index of the candidate's
// step i. A fault keeps its original's anchor under its new index.
func Reanchor(anchors map[int]audit.Anchor, origin []int) map[int]audit.Anchor {
	out := map[int]audit.Anchor{}
	for i, o := range origin {
		if a, ok := anchors[o]; ok {
			a.Step = i + 1
			out[i+1] = a
		}
	}
	return out
}
