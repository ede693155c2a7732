package runner

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/oplogha/oplogha/faults"
	"github.com/oplogha/oplogha/harness/audit"
	"github.com/oplogha/oplogha/harness/client"
	"github.com/oplogha/oplogha/harness/masters"
)

// timeline collects the run's events.
type timeline struct {
	start  time.Time
	mu     sync.Mutex
	events []audit.Event
	last   string
}

func (t *timeline) add(kind, name, target, detail string, ok bool) {
	t.push(audit.Event{Kind: kind, Name: name, Target: target, Detail: detail, OK: ok})
}

// push stamps e with the time since the run's start and appends it, in one
// critical section, so no event another goroutine records lands between an
// event and its fields.
func (t *timeline) push(e audit.Event) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	e.At = int64(time.Since(t.start))
	t.events = append(t.events, e)
	t.last = t.lastOf(e)
	return len(t.events) - 1
}

// setRevision fills in the etcd revision of event i once it is known
// (rev 0: it never was), with how it was read or why it is unknown.
func (t *timeline) setRevision(i int, rev int64, note string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.events[i].EtcdRevision, t.events[i].EtcdRevisionNote = rev, note
}

// lastOf is the progress line's last event once e is pushed.
func (t *timeline) lastOf(e audit.Event) string {
	switch e.Kind {
	case "role":
		return fmt.Sprintf("%s %s", e.Target, e.Detail)
	case "fault", "heal":
		return fmt.Sprintf("%s %s %s", e.Kind, e.Name, e.Target)
	}
	return t.last
}

// addHeal records a heal with the revisions it wrote and etcd's revision
// as it began (before, 0 with why in note when unknown); settle marks one
// the runner made after the steps.
func (t *timeline) addHeal(name, target, detail string, ok bool, revs []int64, settle bool, before int64, note string) {
	t.push(audit.Event{Kind: "heal", Name: name, Target: target, Detail: detail, OK: ok, Revisions: revs, Settle: settle,
		EtcdRevision: before, EtcdRevisionNote: note})
}

// addFault records a fault that took effect, with what it wrote into etcd
// and which snapshots it damaged; it returns the event's index (its etcd
// revision may be filled in later: setRevision).
func (t *timeline) addFault(kind, name, target, detail string, in *faults.Injected, anchor *audit.Anchor) int {
	return t.push(audit.Event{Kind: kind, Name: name, Target: target, Detail: detail, OK: true,
		Revisions: in.Revisions, Corrupted: in.Corrupted, Ended: in.Ended, Anchor: anchor})
}

// lastHealRevision is etcd's revision as the last heal began (0: no heal,
// or its revision is unknown: known says which).
func (t *timeline) lastHealRevision() (rev int64, known bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := len(t.events) - 1; i >= 0; i-- {
		if e := t.events[i]; e.Kind == "heal" {
			return e.EtcdRevision, e.EtcdRevision > 0
		}
	}
	return 0, false
}

// lastHitRevision is etcd's revision at the last hit the runner saw of the
// failpoint fault named fault (0: none).
func (t *timeline) lastHitRevision(fault string) int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := len(t.events) - 1; i >= 0; i-- {
		if e := t.events[i]; e.Kind == "hit" && e.Detail == fault && e.EtcdRevision > 0 {
			return e.EtcdRevision
		}
	}
	return 0
}

func (t *timeline) lastEvent() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.last
}

func (t *timeline) snapshot() ([]audit.Event, string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]audit.Event(nil), t.events...), t.last
}

// observe records each master's role changes, as its own poller sees them
// (masters' monitor: a frozen node never delays another's), until ctx ends.
func (r *run) observe(ctx context.Context) {
	roles := map[string]string{}
	incarnations := map[string]string{}
	for {
		changed := r.cluster.Masters.Changed()
		for i, rd := range r.cluster.Masters.Latest() {
			if rd.Asked.IsZero() {
				continue // not read yet
			}
			h := rd.Health
			name := r.cluster.Masters.Nodes[i].Name
			role := roleOf(h)
			if h.Incarnation != "" {
				// A restart faster than one round of polling would hide the
				// node's new promotion behind an unchanged role; a node seen
				// down and answering again from a new process restarted
				// (down → restarted), where one frozen and resumed did not
				// (down → its role): an audit tells a new primary from an
				// old one that still believes it leads by that.
				if was, ok := incarnations[name]; ok && was != h.Incarnation {
					r.events.add("role", "role", name, fmt.Sprintf("%s → restarted", roles[name]), true)
					roles[name] = "restarted"
				}
				incarnations[name] = h.Incarnation
			}
			if prev, ok := roles[name]; !ok || prev != role {
				if !ok {
					prev = "start"
				}
				i := r.events.push(audit.Event{Kind: "role", Name: "role", Target: name, Detail: fmt.Sprintf("%s → %s", prev, role), OK: true})
				roles[name] = role
				if role == "primary" {
					r.revisionSeen(ctx, i, rd.Answered)
				}
			}
		}
		// A node that goes silent gives no new reading: the poll interval
		// is when the harness calls it down.
		select {
		case <-ctx.Done():
			return
		case <-changed:
		case <-time.After(masters.PollInterval):
		}
	}
}

// observePublications records each new value of the latest pointer (a
// publication), read every 100 ms with a deadline of its own, until ctx ends.
func (r *run) observePublications(ctx context.Context) {
	cli, err := r.cluster.Etcd.Client(nil)
	if err != nil {
		return
	}
	defer cli.Close()
	ks, _ := r.keyspace() // validated with the scenario
	latestKey := ks.SnapshotLatest()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var latest string
	for {
		gctx, cancel := context.WithTimeout(ctx, time.Second)
		if resp, err := cli.Get(gctx, latestKey); err == nil && len(resp.Kvs) > 0 && string(resp.Kvs[0].Value) != latest {
			latest = string(resp.Kvs[0].Value)
			r.events.add("snapshot", "published", "", pointerSummary(latest), true)
		}
		cancel()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func roleOf(h client.Health) string {
	if h.Role == "primary" && !h.Serving {
		return "promoting"
	}
	return h.Role
}
