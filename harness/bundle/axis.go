package bundle

import (
	"math"

	"github.com/oplogha/oplogha/harness/audit"
)

// BootNote is the name of the note event a run records when its cluster is
// healthy: the moment the report's pictures start from.
const BootNote = "boot"

// BootAt is when the cluster of a run became healthy (its first "boot"
// note), in nanoseconds since the run's start; false when it never did.
func BootAt(events []audit.Event) (int64, bool) {
	for _, e := range events {
		if e.Kind == "note" && e.Name == BootNote {
			return e.At, true
		}
	}
	return 0, false
}

// axis is the time span the report's pictures share, in nanoseconds since
// the run's start. It covers what the run recorded, from the cluster's boot
// to the last event, step, client op or retention sample: before the boot
// the harness builds binaries and starts processes, after the last record
// it reads etcd and the store and stops every process, and no lane draws
// either (together a third to a half of a smoke run's duration).
type axis struct {
	from, to int64
}

// axis spans from the boot note (the run's start when the cluster never
// booted) to the last thing the run recorded (the run's end when it
// recorded nothing after the boot).
func (b *Bundle) axis() axis {
	from, _ := BootAt(b.Input.Events)
	var to int64
	for _, e := range b.Input.Events {
		to = max(to, e.At)
	}
	for _, st := range b.Meta.Steps {
		to = max(to, st.EndNS)
	}
	for _, op := range b.Input.Ops {
		to = max(to, op.Complete)
	}
	for _, s := range b.Input.Retention {
		to = max(to, s.At)
	}
	if to <= from {
		to = max(b.Meta.DurationMS*1e6, from+1)
	}
	return axis{from: from, to: to}
}

// span is the axis's length in nanoseconds.
func (a axis) span() int64 { return a.to - a.from }

// x places a time on a picture whose axis runs from left over width
// pixels; a time before the origin is drawn at it.
func (a axis) x(ns int64, left, width float64) float64 {
	return left + width*float64(max(ns, a.from)-a.from)/float64(a.span())
}

// ticks are the axis's labelled times in whole seconds since the run's
// start (the numbers the steps table and the audits' evidence use), about
// a dozen of them, from the first one at or after the origin.
func (a axis) ticks() []float64 {
	step := niceStep(float64(a.span()) / 1e9)
	var out []float64
	for t := math.Ceil(float64(a.from)/1e9/step) * step; t*1e9 <= float64(a.to); t += step {
		out = append(out, t)
	}
	return out
}

// niceStep is a round tick interval that puts at most 14 ticks on total seconds.
func niceStep(total float64) float64 {
	for _, s := range []float64{1, 2, 5, 10, 15, 30, 60, 120, 300, 600} {
		if total/s <= 14 {
			return s
		}
	}
	return 1200
}
