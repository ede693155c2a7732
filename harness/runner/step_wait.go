package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/oplogha/oplogha/harness/audit"
	"github.com/oplogha/oplogha/harness/client"
	"github.com/oplogha/oplogha/harness/scenario"
)

func (r *run) wait(ctx context.Context, w *scenario.Wait) error {
	ctx, cancel := context.WithTimeout(ctx, w.Timeout)
	defer cancel()
	switch w.For {
	case "primary":
		var exclude string
		if w.Excluding != "" {
			exclude, _ = r.nodeOf(w.Excluding)
		}
		return poll(ctx, func() (bool, string) {
			hs := r.cluster.Masters.Health(ctx)
			for i, h := range hs {
				if h.Serving && h.Role == "primary" && r.cluster.Masters.Nodes[i].Name != exclude {
					return true, ""
				}
			}
			return false, "no serving primary" + excludeNote(exclude)
		})
	case "no-primary":
		return poll(ctx, func() (bool, string) {
			for i, h := range r.cluster.Masters.Health(ctx) {
				if h.Serving {
					return false, r.cluster.Masters.Nodes[i].Name + " still serves"
				}
			}
			return true, ""
		})
	case "caught-up":
		return r.waitCaughtUp(ctx, w.Timeout, false)
	case "ops":
		if r.gen == nil {
			return errors.New("wait for ops: traffic is not running")
		}
		_, base := r.gen.Ops()
		return poll(ctx, func() (bool, string) {
			_, ok := r.gen.Ops()
			return ok-base >= int64(w.Ops), fmt.Sprintf("%d of %d acknowledged ops", ok-base, w.Ops)
		})
	case "snapshots":
		if w.Covering {
			return r.waitLatestCovers(ctx)
		}
		return r.waitSnapshots(ctx, w.Count)
	case "metric":
		return poll(ctx, func() (bool, string) {
			if err := r.assertMetric(ctx, w.Metric); err != nil {
				return false, err.Error()
			}
			return true, ""
		})
	case "failpoint":
		return r.waitFailpoint(ctx, w)
	case "maintenance":
		return r.waitMaintenance(ctx, w)
	case "pruned":
		return r.pollShape(ctx, func(sh oplogShape) (bool, string) {
			return sh.Floor > 0 && sh.Lowest > sh.Floor, sh.String()
		})
	case "suffix":
		if w.Above != "" {
			return r.waitSuffixAbove(ctx, w)
		}
		return r.pollShape(ctx, func(sh oplogShape) (bool, string) {
			return sh.Suffix() >= uint64(w.Batches), fmt.Sprintf("%d of %d batches above the newest pointer (%s)", sh.Suffix(), w.Batches, sh)
		})
	case "leader":
		return r.waitLeader(ctx, w)
	case "role":
		node := w.Node
		if n, ok := r.nodeOf(w.Node); ok {
			node = n
		}
		ended := r.ended[w.Node]
		return poll(ctx, func() (bool, string) {
			if ended != nil && w.Role != "down" {
				if n, ok := r.env.Node(node); ok {
					if cur, ok := r.cluster.Masters.Process(n); !ok || cur == ended && !r.survivedDisarmed(w.Node, node) {
						return false, fmt.Sprintf("%s has not started again since %s ended it", node, w.Node)
					}
				}
			}
			if w.Role == "down" {
				// Down is the process gone, not only its API: a node that
				// panicked closes its listener before it has exited, and a
				// heal in that moment would find it still running.
				return !r.env.Running(node), fmt.Sprintf("%s's process is still running", node)
			}
			role := r.roleOf(ctx, node)
			if role == "" {
				return false, "no master " + node
			}
			if w.Role == "up" {
				// back in the game, whichever role it won
				return role == "primary" || role == "standby", fmt.Sprintf("%s is %s", node, role)
			}
			return role == w.Role, fmt.Sprintf("%s is %s", node, role)
		})
	}
	return fmt.Errorf("unknown wait %q", w.For)
}

// survivedDisarmed says whether node, hit by fault name, is still the
// process the fault aimed at and can no longer be ended by it: a panic
// failpoint healed (disarmed) before it fired ended nothing, and a wait for
// the node's role must not wait for a restart that will never come. While
// armed it may still fire, so a wait through the crash goes on waiting.
func (r *run) survivedDisarmed(name, node string) bool {
	in, healed := r.healed[name]
	if !healed || in.Spec.Kind != "failpoint" {
		return false
	}
	return r.env.Running(node)
}

// waitFailpoint waits until a failpoint's term has fired the wanted number
// of times on its node: the window it marks has been reached (and, for a
// hold term, the node stays in it until the fault is healed).
func (r *run) waitFailpoint(ctx context.Context, w *scenario.Wait) error {
	node, name, fault := w.Node, w.Failpoint, ""
	if in, ok := r.injectedOrHealed(w.Node); ok && len(in.Targets) > 0 {
		fault = w.Node
		node, _ = r.nodeOf(w.Node)
		if name == "" && in.Spec.Kind == "failpoint" {
			name = in.Spec.Name
		}
	}
	hits := max(w.Hits, 1)
	defer func() { r.lastFailpointHit = fmt.Sprintf("%s@%s×%d", name, node, hits) }()
	err := poll(ctx, func() (bool, string) {
		n, err := r.env.FailpointHits(ctx, node, name)
		if err != nil {
			return false, err.Error()
		}
		if !r.env.Running(node) {
			return false, fmt.Sprintf("%s is not running", node)
		}
		return n >= hits, fmt.Sprintf("failpoint %s fired %d of %d times on %s", name, n, hits, node)
	})
	if err == nil {
		// The hit, with etcd's revision once it was seen (whatever the node
		// held there had done is bounded by the namespace at that revision:
		// the stale-publisher window's cursor bound) and the fault that
		// armed it, whose heal ends the hold ("": the wait named a master).
		seen := time.Now()
		i := r.events.push(audit.Event{Kind: "hit", Name: name, Target: "[" + node + "]", Detail: fault, OK: true})
		r.recordRevisionAfter(context.WithoutCancel(ctx), i, seen)
	}
	return err
}

// waitMaintenance waits until node has held the maintenance lease and let
// it go (a put of the maintenance key with an owner token of the node's,
// then the key's delete or another's put): the node's attempt under the
// lease is over. It watches etcd from the last heal before it (a node a
// heal let go may take and drop the lease in a moment), else (no heal, or
// its revision unknown) from now.
func (r *run) waitMaintenance(ctx context.Context, w *scenario.Wait) error {
	node := w.Node
	if n, ok := r.nodeOf(w.Node); ok {
		node = n
	}
	cli, ks, err := r.etcd()
	if err != nil {
		return err
	}
	defer cli.Close()
	rev, known := r.events.lastHealRevision()
	if !known {
		if rev, err = r.env.EtcdRevision(ctx); err != nil {
			return err
		}
	}
	held := false
	for resp := range cli.Watch(ctx, ks.SnapshotMaintenance(), clientv3.WithRev(rev+1)) {
		if err := resp.Err(); err != nil {
			return err
		}
		for _, ev := range resp.Events {
			mine := ev.Type == clientv3.EventTypePut && strings.HasPrefix(string(ev.Kv.Value), node+"/")
			switch {
			case mine:
				held = true
			case held:
				return nil
			}
		}
	}
	if held {
		return fmt.Errorf("%s took the maintenance lease and still held it: %w", node, ctx.Err())
	}
	return fmt.Errorf("%s never took the maintenance lease: %w", node, ctx.Err())
}

func excludeNote(n string) string {
	if n == "" {
		return ""
	}
	return " other than " + n
}

// waitCaughtUp waits until a primary serves and every running master has
// applied at least what was durable (or the primary had) when the wait
// began: under load the cursors move on, and equality is only expected
// once traffic stops. With follow (the settle, traffic stopped) the target
// is read again at every poll: an append in flight when the traffic
// stopped lands after the first read, and a node that has not applied it
// is not caught up.
func (r *run) waitCaughtUp(ctx context.Context, timeout time.Duration, follow bool) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cli, ks, err := r.etcd()
	durable := func() (uint64, error) { return 0, err }
	if err == nil {
		defer cli.Close()
		durable = func() (uint64, error) { return durableBatchOf(ctx, cli, ks) }
	}
	w := catchUp{follow: follow}
	return poll(ctx, func() (bool, string) {
		hs := r.cluster.Masters.Health(ctx)
		running := make([]bool, len(hs))
		for i := range hs {
			p, ok := r.cluster.Group.Get(r.cluster.Masters.Nodes[i].Name)
			running[i] = ok && p.Running()
		}
		return w.check(hs, running, durable)
	})
}

// catchUp is the state of a wait for the masters to catch up: its target.
type catchUp struct {
	target *client.Cursor
	follow bool
}

// check is one poll: hs[i] is node i's health, running[i] whether it runs,
// durable reads etcd's durable prefix.
func (w *catchUp) check(hs []client.Health, running []bool, durable func() (uint64, error)) (bool, string) {
	var primary *client.Health
	for i := range hs {
		if hs[i].Serving {
			primary = &hs[i]
		}
	}
	if primary == nil {
		return false, "no serving primary"
	}
	if w.target == nil || w.follow {
		// The target is what is durable in etcd, not the primary's
		// cursor: a primary whose append is still in flight (its
		// response stuck on a link a partition broke) has made a batch
		// durable that it has not applied yet. (An unreadable prefix — a
		// scenario's garbage — leaves the primary's cursor as the target.)
		c := primary.Cursor
		if w.target != nil && w.target.BatchID > c.BatchID {
			c = *w.target // a target never moves back
		}
		if d, err := durable(); err == nil && d > c.BatchID {
			c = client.Cursor{BatchID: d}
		}
		w.target = &c
	}
	for i, h := range hs {
		if !running[i] {
			continue
		}
		if h.Cursor.BatchID < w.target.BatchID {
			return false, fmt.Sprintf("%s at batch %d, waiting for batch %d", h.NodeID, h.Cursor.BatchID, w.target.BatchID)
		}
	}
	return true, ""
}

// poll calls cond every 50ms until it holds or ctx ends; the error carries
// cond's last word on why not.
func poll(ctx context.Context, cond func() (bool, string)) error {
	var why string
	for {
		var ok bool
		ok, why = cond()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %s", ctx.Err(), why)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// waitSnapshots waits for count new publications of the latest pointer,
// reading etcd directly (the observer puts each on the timeline).
func (r *run) waitSnapshots(ctx context.Context, count int) error {
	cli, ks, err := r.etcd()
	if err != nil {
		return err
	}
	defer cli.Close()
	key := ks.SnapshotLatest()
	var last string
	if resp, err := cli.Get(ctx, key); err == nil && len(resp.Kvs) > 0 {
		last = string(resp.Kvs[0].Value)
	}
	seen := 0
	return poll(ctx, func() (bool, string) {
		resp, err := cli.Get(ctx, key)
		if err != nil {
			return false, err.Error()
		}
		if len(resp.Kvs) > 0 && string(resp.Kvs[0].Value) != last {
			last = string(resp.Kvs[0].Value)
			seen++
		}
		return seen >= count, fmt.Sprintf("%d of %d publications", seen, count)
	})
}

// waitLatestCovers waits until the latest pointer names the durable
// prefix's batch.
func (r *run) waitLatestCovers(ctx context.Context) error {
	cli, ks, err := r.etcd()
	if err != nil {
		return err
	}
	defer cli.Close()
	return poll(ctx, func() (bool, string) {
		durable, err := durableBatchOf(ctx, cli, ks)
		if err != nil {
			return false, err.Error()
		}
		resp, err := cli.Get(ctx, ks.SnapshotLatest())
		if err != nil || len(resp.Kvs) == 0 {
			return false, fmt.Sprintf("no latest pointer (durable batch %d)", durable)
		}
		var p struct {
			Batch uint64 `json:"last_included_batch_id"`
		}
		if err := json.Unmarshal(resp.Kvs[0].Value, &p); err != nil {
			return false, "unparseable latest pointer"
		}
		return p.Batch >= durable, fmt.Sprintf("latest at batch %d, durable batch %d", p.Batch, durable)
	})
}

func pointerSummary(raw string) string {
	var p struct {
		ID    string `json:"snapshot_id"`
		Batch uint64 `json:"last_included_batch_id"`
	}
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		return "unparseable latest pointer"
	}
	return fmt.Sprintf("%s at batch %d", p.ID, p.Batch)
}
