package runner

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/oplogha/oplogha/faults"
	"github.com/oplogha/oplogha/harness/audit"
	"github.com/oplogha/oplogha/harness/client"
)

// timeline collects the run's events.
type timeline struct {
	start  time.Time
	mu     sync.Mutex
	events []audit.Event
	last   string
}

func (t *timeline) add(kind, name, target, detail string, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := audit.Event{At: int64(time.Since(t.start)), Kind: kind, Name: name, Target: target, Detail: detail, OK: ok}
	t.events = append(t.events, e)
	switch kind {
	case "role":
		t.last = fmt.Sprintf("%s %s", target, detail)
	case "fault", "heal":
		t.last = fmt.Sprintf("%s %s %s", kind, name, target)
	}
}

// addRevisions records a successful fault that wrote etcd revisions itself.
func (t *timeline) addRevisions(kind, name, target, detail string, revs []int64) {
	t.add(kind, name, target, detail, true)
	if len(revs) > 0 {
		t.mu.Lock()
		t.events[len(t.events)-1].Revisions = revs
		t.mu.Unlock()
	}
}

// addHeal records a heal with the revisions it wrote; settle marks one the
// runner made after the steps.
func (t *timeline) addHeal(name, target, detail string, ok bool, revs []int64, settle bool) {
	t.add("heal", name, target, detail, ok)
	t.mu.Lock()
	e := &t.events[len(t.events)-1]
	e.Revisions, e.Settle = revs, settle
	t.mu.Unlock()
}

// addFault records a fault that took effect, with what it wrote into etcd
// and which snapshots it damaged.
func (t *timeline) addFault(kind, name, target, detail string, in *faults.Injected, anchor *audit.Anchor) {
	t.add(kind, name, target, detail, true)
	t.mu.Lock()
	e := &t.events[len(t.events)-1]
	e.Revisions, e.Corrupted, e.EtcdRevision, e.Anchor = in.Revisions, in.Corrupted, in.AtRevision, anchor
	t.mu.Unlock()
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

// observe polls every master's health and the latest pointer, and records
// each role change and each publication, until ctx ends.
func (r *run) observe(ctx context.Context) {
	roles := map[string]string{}
	incarnations := map[string]string{}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	cli, err := r.cluster.Etcd.Client(nil)
	if err == nil {
		defer cli.Close()
	}
	ks, _ := r.keyspace() // validated with the scenario
	latestKey := ks.SnapshotLatest()
	var latest string
	for {
		if cli != nil {
			gctx, cancel := context.WithTimeout(ctx, time.Second)
			if resp, err := cli.Get(gctx, latestKey); err == nil && len(resp.Kvs) > 0 && string(resp.Kvs[0].Value) != latest {
				latest = string(resp.Kvs[0].Value)
				r.events.add("snapshot", "published", "", pointerSummary(latest), true)
			}
			cancel()
		}
		hs := r.cluster.Masters.Health(ctx)
		for i, h := range hs {
			name := r.cluster.Masters.Nodes[i].Name
			role := roleOf(h)
			if h.Incarnation != "" {
				// A restart faster than one round of polling would hide the
				// node's new promotion behind an unchanged role.
				if was, ok := incarnations[name]; ok && was != h.Incarnation && roles[name] != "down" {
					r.events.add("role", "role", name, fmt.Sprintf("%s → restarted", roles[name]), true)
					roles[name] = "restarted"
				}
				incarnations[name] = h.Incarnation
			}
			if prev, ok := roles[name]; !ok || prev != role {
				if !ok {
					prev = "start"
				}
				r.events.add("role", "role", name, fmt.Sprintf("%s → %s", prev, role), true)
				roles[name] = role
			}
		}
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
