package runner

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/oplogha/oplogha/faults"
	"github.com/oplogha/oplogha/harness/audit"
)

// ReplayCheck says whether a replayed fault landed on the logical event
// the original run's fault did.
type ReplayCheck struct {
	Step   int    `json:"step"`
	Fault  string `json:"fault"`
	Same   bool   `json:"same"`
	Detail string `json:"detail"`
}

// ErrDiverged is returned, under Options.Strict, when a replayed fault
// cannot land where the original one did.
var ErrDiverged = fmt.Errorf("replay diverged from the original run")

// anchorNow reads the logical state a fault is about to be injected into.
func (r *run) anchorNow(step int) *audit.Anchor {
	a := &audit.Anchor{Step: step, AfterFailpoint: r.lastFailpointHit}
	// What the harness last saw, without waiting on etcd or a node: the
	// fault must land now, whatever is broken.
	rd, _ := r.clock.before(time.Now())
	a.BatchID, a.EtcdRev, a.OKOps = rd.Batch, rd.Rev, r.rec.OKCount()
	a.Roles = map[string]string{}
	for i, rd := range r.cluster.Masters.Latest() {
		a.Roles[r.cluster.Masters.Nodes[i].Name] = rd.Health.Role
	}
	return a
}

// waitForBatch waits (up to bound) until the durable prefix reaches batch.
func (r *run) waitForBatch(ctx context.Context, batch uint64, bound time.Duration) (uint64, bool) {
	cli, ks, err := r.etcd()
	if err != nil {
		return 0, false
	}
	defer cli.Close()
	deadline := time.Now().Add(bound)
	for {
		b, err := durableBatchOf(ctx, cli, ks)
		if err == nil && b >= batch {
			return b, true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return b, false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// pinToAnchor aims a replayed fault at what the original hit: a seeded or
// role choice becomes the node the original chose, once the run has made
// the progress the original had (waitForProgress). It returns the spec to
// inject and, when the original's event cannot recur, why not.
func (r *run) pinToAnchor(ctx context.Context, spec faults.Spec, a audit.Anchor) (faults.Spec, string) {
	var diverged []string
	if why := r.waitForProgress(ctx, a, 60*time.Second); why != "" {
		diverged = append(diverged, why)
	}
	if len(a.Targets) != 1 {
		return spec, strings.Join(diverged, "; ")
	}
	node := a.Targets[0]
	if spec.Kind == "revoke-lease" {
		node, _, _ = strings.Cut(node, "/") // the holder's token starts with its node
	}
	known := slices.Contains(r.env.Masters(), node) || slices.Contains(r.env.EtcdMembers(), node)
	switch {
	case !known:
		// a link or an object: the same pattern resolves the same way
	case spec.Target == "primary":
		if cur, err := r.env.Primary(ctx); err != nil || cur != node {
			diverged = append(diverged, fmt.Sprintf("the original hit the primary %s; the primary now is %q", node, cur))
		}
	default:
		if want := a.Roles[node]; want != "" && strings.HasPrefix(node, "master-") {
			if now := r.roleOf(ctx, node); now != want {
				diverged = append(diverged, fmt.Sprintf("%s was %s when the original hit it, and is %s now", node, want, now))
			}
		}
		spec.Target = node
	}
	return spec, strings.Join(diverged, "; ")
}

// waitForProgress waits, in a replay and up to bound, for the progress the
// original had when the fault anchored by a landed, when that progress is
// what placed it: only after a sleep (or as the first step). A fault after
// any other wait landed on that wait's event — a failpoint's hit, a role,
// a number of ops — which the replay's own wait has just reached again, on
// any master. Progress is the client ops acknowledged since the previous
// fault (the same load, whatever the master numbers its batches); an
// anchor from before that was recorded waits for its durable batch.
func (r *run) waitForProgress(ctx context.Context, a audit.Anchor, bound time.Duration) string {
	if a.Step > 1 && r.sc.Steps[a.Step-2].Kind() != "sleep" {
		return ""
	}
	if a.OKOps == 0 {
		if a.BatchID == 0 {
			return ""
		}
		if b, ok := r.waitForBatch(ctx, a.BatchID, bound); !ok {
			return fmt.Sprintf("the durable prefix reached only batch %d of the original's %d", b, a.BatchID)
		}
		return ""
	}
	var origFrom, from int64
	if p, ok := r.previousAnchor(a.Step); ok {
		origFrom = p.OKOps
		from = r.replayOKOps[p.Step]
	}
	want := from + (a.OKOps - origFrom)
	deadline := time.Now().Add(bound)
	for r.rec.OKCount() < want {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Sprintf("the run acknowledged %d ops since its previous fault, the original %d", r.rec.OKCount()-from, a.OKOps-origFrom)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return ""
}

// previousAnchor is the original's anchor of the last fault before step.
func (r *run) previousAnchor(step int) (audit.Anchor, bool) {
	best := audit.Anchor{}
	for s, a := range r.opts.Anchors {
		if s < step && s > best.Step {
			best = a
		}
	}
	return best, best.Step > 0
}

func (r *run) roleOf(ctx context.Context, node string) string {
	for i, h := range r.cluster.Masters.Health(ctx) {
		if r.cluster.Masters.Nodes[i].Name == node {
			return h.Role
		}
	}
	return ""
}

// snapshotID and byteOffset match what differs between two runs that hit
// the same logical target: a snapshot's id (its batch and lease are the
// run's own) and the byte a corruption flipped (drawn within the object,
// whose size is the run's own).
var (
	// snapshotID is a snapshot id where a snapshot fault's target names
	// one: "<slot> <batch>-<lease>/<object>".
	snapshotID = regexp.MustCompile(`\b(latest|fallback) \d+-\d+/`)
	byteOffset = regexp.MustCompile(`\bbyte \d+\b`)
	// writerValue is /snapshot/maintenance's value, the target of revoke-lease:
	// node/<lease id>/<writer token>, both each run's own.
	writerValue = regexp.MustCompile(`^([^/\s]+)/[0-9a-f]{1,16}/[0-9a-f]{24}$`)
)

// logicalTargets are targets with their run-specific parts masked: a
// corruption of "latest <id>/objects/0.bin byte 7666" lands on the
// same event as one of "latest <other id>/objects/0.bin byte 9619", and
// a revocation of "master-1/<lease>/<token>" as one of master-1's other lease.
func logicalTargets(ts []string) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		t = writerValue.ReplaceAllString(t, "$1/<lease>/<token>")
		out[i] = byteOffset.ReplaceAllString(snapshotID.ReplaceAllString(t, "$1 <snapshot>/"), "byte <n>")
	}
	return out
}

// checkLanding compares where a replayed fault landed with its original:
// the same nodes, slots and objects, up to what differs between any two
// runs (snapshot ids, byte offsets, lease ids and writer tokens).
func checkLanding(fault string, orig, now audit.Anchor, divergence string) ReplayCheck {
	c := ReplayCheck{Step: orig.Step, Fault: fault, Same: divergence == ""}
	switch {
	case !slices.Equal(logicalTargets(orig.Targets), logicalTargets(now.Targets)):
		c.Same = false
		c.Detail = fmt.Sprintf("hit %v, the original hit %v", now.Targets, orig.Targets)
	case !slices.Equal(orig.Targets, now.Targets):
		c.Detail = fmt.Sprintf("hit %v at batch %d, the original %v at %d (the same slot and object; ids and offsets are each "+
			"run's own)", now.Targets, now.BatchID, orig.Targets, orig.BatchID)
	default:
		c.Detail = fmt.Sprintf("hit %v at batch %d (the original at %d)", now.Targets, now.BatchID, orig.BatchID)
	}
	if divergence != "" {
		c.Detail += ": " + divergence
	}
	return c
}
