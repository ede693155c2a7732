package runner

import (
	"context"
	"time"

	"github.com/oplogha/oplogha/harness/audit"
)

// stepSleep sleeps for d, or (in a replay) until the progress the next
// fault's original had.
func (r *run) stepSleep(ctx context.Context, d time.Duration) error {
	if a, ok := r.nextAnchor(); ok && (a.OKOps > 0 || a.BatchID > 0) {
		// A replay waits for the progress the next fault's original
		// had, not for the time that happened to give it.
		r.waitForProgress(ctx, a, 3*d+10*time.Second)
		return nil
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// nextAnchor is the original's anchor of the next step, when replaying and
// that step is a fault.
func (r *run) nextAnchor() (audit.Anchor, bool) {
	if r.opts.Anchors == nil || r.stepIndex >= len(r.sc.Steps) || r.sc.Steps[r.stepIndex].Kind() != "fault" {
		return audit.Anchor{}, false
	}
	a, ok := r.opts.Anchors[r.stepIndex+1]
	return a, ok
}
