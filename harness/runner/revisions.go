package runner

import (
	"context"
	"fmt"
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

// revisionSeen sets event i's etcd revision, in the background, to the
// clock's first reading begun after t, when a node was seen in a new role:
// whatever the node did as it took the role is at or below that revision
// (an audit places a batch after it: "after its successor served"). It
// never delays the observer; a role seen while etcd cannot be read waits
// for the reading up to roleRevisionWait, then stays unknown.
func (r *run) revisionSeen(ctx context.Context, i int, t time.Time) {
	r.seen.Add(1)
	go func() {
		defer r.seen.Done()
		rd, ok, why := r.clock.after(ctx, t, roleRevisionWait)
		if !ok {
			r.events.setRevision(i, 0, "etcd's revision unknown: "+why)
			return
		}
		note := ""
		if late := rd.Asked.Sub(t); late > time.Second {
			note = fmt.Sprintf("etcd's revision read %v after the role was seen (etcd was unreadable until then): an upper bound", late.Round(time.Millisecond))
		}
		r.events.setRevision(i, rd.Rev, note)
	}()
}

// roleRevisionWait bounds revisionSeen's wait for a reading.
const roleRevisionWait = 30 * time.Second

// healRead bounds the read of etcd's revision before a heal.
const healRead = 500 * time.Millisecond

// revisionBeforeHeal is etcd's revision as a heal begins at t: read
// linearizably (up to healRead) while the clock reads etcd, else the
// clock's last reading before t when fresh, else 0 with why. It never
// waits on an etcd the clock cannot read.
func (r *run) revisionBeforeHeal(ctx context.Context, t time.Time) (int64, string) {
	if _, why := r.clock.now(); why == "" {
		rctx, cancel := context.WithTimeout(ctx, healRead)
		rev, err := r.env.EtcdRevision(rctx)
		cancel()
		if err == nil {
			return rev, ""
		}
	}
	rd, why := r.clock.before(t)
	return rd.Rev, why
}
