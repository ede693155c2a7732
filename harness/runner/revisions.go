package runner

import (
	"context"
	"time"
)

// recordRevisionAfter sets event i's etcd revision to etcd's revision once
// an act that ended at t had happened: the clock's first reading begun
// after t, waited for up to clockAfterWait, and not at all while the clock
// cannot read etcd. What it cannot read stays unknown (0) with why: a
// reading taken later could include what the act's successors wrote (a
// restarted master's new process), and the audits would blame the old one.
func (r *run) recordRevisionAfter(ctx context.Context, i int, t time.Time) {
	if _, why := r.clock.now(); why != "" {
		r.events.setRevision(i, 0, "etcd's revision unknown: "+why)
		return
	}
	rd, ok, why := r.clock.after(ctx, t, clockAfterWait)
	if !ok {
		r.events.setRevision(i, 0, "etcd's revision unknown: "+why)
		return
	}
	r.events.setRevision(i, rd.Rev, "")
}

// etcdUnreadable is why etcd cannot be read now ("": it can): the clock's
// first reading from now on, waited for up to wait.
func (r *run) etcdUnreadable(ctx context.Context, wait time.Duration) string {
	_, ok, why := r.clock.after(ctx, time.Now(), wait)
	if ok {
		return ""
	}
	return why
}
