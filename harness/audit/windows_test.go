package audit

import (
	"fmt"
	"github.com/oplogha/oplogha/harness/history"
	"github.com/oplogha/oplogha/impl/contract/batchlog"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// restartAll records a crash-restart of two masters at the current
// revision, as the runner does: the restart, then its heal (no revision).
func restartAll(in *Input, rev int64) {
	in.Events = append(in.Events,
		Event{Kind: "fault", Name: "restart-crash", Detail: "restart-all", Ended: []string{"master-0", "master-1"}, EtcdRevision: rev},
		Event{Kind: "heal", Name: "restart-crash", Detail: "restart-all", OK: true})
}

// windowRun is a run that names window id, with enough work otherwise.
func windowRun(r *revs, id string) *Input {
	in := r.input()
	in.Expect = Expect{MinOKOps: 0, Windows: []string{id}}
	in.Ops = okPuts(100)
	return in
}

func okPuts(n int) []history.Op {
	var ops []history.Op
	for i := range n {
		ops = append(ops, op("put", "k"+strconv.Itoa(i), "ok", int64(i), int64(i)+1))
	}
	return ops
}

// TestWindowLatestUnreadablePruned: a restart counts into window 8 only
// while latest is present and undecodable (garbage or empty), the fallback
// decodes and batch 1 is gone; minimum-work fails a run that names the
// window and never reached it.
func TestWindowLatestUnreadablePruned(t *testing.T) {
	for _, c := range []struct {
		name    string
		latest  []byte // what the harness writes into latest (nil: nothing)
		prune   bool
		reached map[string]int
	}{
		{"garbage latest, pruned", []byte("\x80garbage"), true, map[string]int{"latest malformed": 2}},
		{"empty latest, pruned", []byte{}, true, map[string]int{"latest empty": 2}},
		{"garbage latest, not pruned", []byte("\x80garbage"), false, map[string]int{}},
		{"readable latest, pruned", nil, true, map[string]int{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := pruned()
			if c.prune {
				r.deleteBatches(1, 2)
			}
			if c.latest != nil {
				r.rev++
				r.put(r.ks.SnapshotLatest(), c.latest, 0)
				r.byHarness()
			}
			in := windowRun(r, "latest-unreadable-pruned")
			restartAll(in, r.rev)
			require.Equal(t, c.reached, countLatestUnreadablePruned(in))
			requireReached(t, in, "latest-unreadable-pruned", len(c.reached) > 0, 2)
		})
	}
}

// TestWindowDamagedView: restarts count into window 4 with the durable
// prefix present and the view absent, malformed, or a harness-written view
// above every batch's; a view a primary claimed and never appended under is
// an ordinary state and does not count.
func TestWindowDamagedView(t *testing.T) {
	for _, c := range []struct {
		name    string
		damage  func(r *revs)
		reached map[string]int
	}{
		{"absent", func(r *revs) { r.rev++; r.del(r.ks.ProducerView()); r.byHarness() }, map[string]int{"view absent": 2}},
		{"malformed", func(r *revs) { r.rev++; r.put(r.ks.ProducerView(), []byte(`{"producer_view":1}`), 0); r.byHarness() },
			map[string]int{"view malformed": 2}},
		{"ahead", func(r *revs) { r.rev++; r.put(r.ks.ProducerView(), encView(1001), 0); r.byHarness() }, map[string]int{"view ahead": 2}},
		{"claimed by a primary, no batch yet", func(r *revs) { r.claim(2) }, map[string]int{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := pruned()
			c.damage(r)
			in := windowRun(r, "damaged-view")
			restartAll(in, r.rev)
			require.Equal(t, c.reached, countDamagedView(in))
			res := MinimumWork(in)
			require.Equal(t, len(c.reached) > 0, res.Pass, evidence0(res))
		})
	}
}

// TestWindowZombiePrimary: a paused primary resumed after its successor
// claimed a higher view and before that successor appended counts each
// mutation it answered after the resume; a resume after the successor's
// first append, or with no successor claim, or with nothing answered
// after it, is not the window, and minimum-work fails a run that names it.
func TestWindowZombiePrimary(t *testing.T) {
	for _, c := range []struct {
		name    string
		between func(r *revs) // what etcd sees while the primary is paused
		answers []history.Op  // what the resumed node answered after its resume
		reached map[string]int
	}{
		{"successor held before its first append", func(r *revs) { r.claim(2) },
			[]history.Op{{Kind: history.Put, Node: "master-0", Outcome: history.Failed, Code: "fenced", Complete: 50},
				{Kind: history.Remove, Node: "master-0", Outcome: history.Unknown, Code: "transport", Complete: 60},
				{Kind: history.Get, Node: "master-0", Outcome: history.OK, Complete: 61}},
			map[string]int{"answered after its resume: failed fenced": 1, "answered after its resume: unknown transport": 1}},
		{"successor already appended", func(r *revs) { r.claim(2); r.appendBatch() },
			[]history.Op{{Kind: history.Put, Node: "master-0", Outcome: history.Failed, Code: "fenced", Complete: 50}}, map[string]int{}},
		{"no successor", func(r *revs) {},
			[]history.Op{{Kind: history.Put, Node: "master-0", Outcome: history.OK, Complete: 50}}, map[string]int{}},
		{"nothing answered after the resume", func(r *revs) { r.claim(2) },
			[]history.Op{{Kind: history.Put, Node: "master-0", Outcome: history.OK, Complete: 5}}, map[string]int{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRevs()
			r.claim(1)
			r.appendBatch()
			paused := r.rev
			c.between(r)
			in := windowRun(r, "zombie-primary")
			in.Events = append(in.Events,
				Event{At: 1, Kind: "fault", Name: "pause", Target: "[master-0]", OK: true,
					Anchor: &Anchor{EtcdRev: paused, Roles: map[string]string{"master-0": "primary", "master-1": "standby"}}},
				Event{At: 40, Kind: "heal", Name: "pause", Target: "[master-0]", OK: true, EtcdRevision: r.rev})
			in.Ops = append(in.Ops, c.answers...)
			require.Equal(t, c.reached, countZombiePrimary(in))
			res := MinimumWork(in)
			require.Equal(t, len(c.reached) > 0, res.Pass, evidence0(res))
		})
	}
}

// TestWindowLongReplay: a start counts into window 2 when the batches above
// the newest decodable pointer up to the durable prefix span at least three
// of the masters' reader pages, by whether the OpLog was pruned; fewer, an
// unknown page size, or a pointer close to the prefix do not count, and
// minimum-work fails a run that names the window and never reached it.
func TestWindowLongReplay(t *testing.T) {
	for _, c := range []struct {
		name    string
		page    int
		history func() *revs
		reached map[string]int
	}{
		{"no pointer, 12 batches, pages of 4", 4, func() *revs { r := newRevs(); r.claim(1); appendN(r, 12); return r },
			map[string]int{"bootstrap, OpLog complete": 2}},
		{"no pointer, 11 batches, pages of 4", 4, func() *revs { r := newRevs(); r.claim(1); appendN(r, 11); return r }, map[string]int{}},
		{"pruned, 12 batches above latest", 4, func() *revs { r := pruned(); r.deleteBatches(1, 2); appendN(r, 11); return r },
			map[string]int{"bootstrap, OpLog pruned": 2}},
		{"pruned, 11 batches above latest", 4, func() *revs { r := pruned(); appendN(r, 10); return r }, map[string]int{}},
		{"latest unreadable: counted from fallback", 4, func() *revs {
			r := pruned()
			appendN(r, 9) // 12 above fallback's batch 2, 10 above latest's 4
			r.rev++
			r.put(r.ks.SnapshotLatest(), []byte("\x80garbage"), 0)
			return r
		}, map[string]int{"bootstrap, OpLog pruned": 2}},
		{"page size unknown", 0, func() *revs { r := newRevs(); r.claim(1); appendN(r, 12); return r }, map[string]int{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := c.history()
			in := windowRun(r, "long-replay")
			in.ReadPageSize = c.page
			restartAll(in, r.rev)
			require.Equal(t, c.reached, countLongReplay(in))
			requireReached(t, in, "long-replay", len(c.reached) > 0, 2)
		})
	}
}

// TestWindowLongReplayCatchUpAndRebootstrap: a node elected while its
// applier was held counts as a promotion's long catch-up when the durable
// prefix at its election is three pages above the prefix at the hold's
// hit; a rebootstrap's hit counts when the prefix then is three pages above
// the newest decodable pointer. An election after the heal, another node's
// election, a prefix one batch short, or a pointer published close to the
// prefix before the rebootstrap's hit do not count.
func TestWindowLongReplayCatchUpAndRebootstrap(t *testing.T) {
	const page = 4
	hold := func(hit, heal int64) []Event {
		return []Event{
			{Kind: "hit", Name: "standbyBeforeApply", Target: "[master-1]", Detail: "behind", OK: true, EtcdRevision: hit},
			{Kind: "heal", Name: "failpoint", Target: "[master-1]", Detail: "behind", OK: true, EtcdRevision: heal}}
	}
	for _, c := range []struct {
		name    string
		history func(r *revs) []Event
		reached map[string]int
	}{
		{"elected while held, 12 batches behind", func(r *revs) []Event {
			hit := r.rev // prefix 3
			appendN(r, 12)
			r.resign(1) // master-0's session ends: master-1 leads
			elected := r.rev
			return hold(hit, elected+1)
		}, map[string]int{"promotion catch-up, OpLog complete": 1}},
		{"elected while held, 13 batches behind: 4 pages", func(r *revs) []Event {
			hit := r.rev
			appendN(r, 13)
			r.resign(1)
			return hold(hit, r.rev+1)
		}, map[string]int{"promotion catch-up, OpLog complete": 1}},
		{"elected while held, 11 batches behind", func(r *revs) []Event {
			hit := r.rev
			appendN(r, 11)
			r.resign(1)
			return hold(hit, r.rev+1)
		}, map[string]int{}},
		{"elected while held, the heal's revision unknown", func(r *revs) []Event {
			// etcd could not be read as the heal began: the hold's end is
			// unknown, so no election can be placed inside it
			hit := r.rev
			appendN(r, 12)
			r.resign(1)
			return hold(hit, 0)
		}, map[string]int{}},
		{"elected after the heal", func(r *revs) []Event {
			hit := r.rev
			appendN(r, 12)
			heal := r.rev
			r.resign(1)
			return hold(hit, heal)
		}, map[string]int{}},
		{"another node elected", func(r *revs) []Event {
			hit := r.rev
			appendN(r, 12)
			r.resign(2) // master-1 withdraws; master-0 leads on
			r.resign(1)
			return hold(hit, r.rev+1)
		}, map[string]int{}},
		{"rebootstrap 12 batches above latest, pruned", func(r *revs) []Event {
			r.lease(7)
			r.publish(3, 7, 1)
			r.lease(0)
			r.floor(3)
			appendN(r, 12)
			return []Event{{Kind: "hit", Name: "rebootstrapAfterRestore", Target: "[master-1]", Detail: "reboot", OK: true, EtcdRevision: r.rev}}
		}, map[string]int{"rebootstrap, OpLog pruned": 1}},
		{"rebootstrap after a newer pointer", func(r *revs) []Event {
			r.lease(7)
			r.publish(3, 7, 1)
			r.floor(3)
			appendN(r, 12)
			r.publish(14, 7, 1)
			r.lease(0)
			return []Event{{Kind: "hit", Name: "rebootstrapAfterRestore", Target: "[master-1]", Detail: "reboot", OK: true, EtcdRevision: r.rev}}
		}, map[string]int{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRevs()
			r.advertised = map[string]string{"http://a": "master-0", "http://b": "master-1"}
			r.candidate(1, "http://a")
			r.candidate(2, "http://b")
			r.claim(1)
			appendN(r, 3)
			events := c.history(r)
			in := windowRun(r, "long-replay")
			in.ReadPageSize = page
			in.Events = append(in.Events, events...)
			require.Equal(t, c.reached, countLongReplay(in))
			n := 0
			pages := map[string]int{}
			for form, v := range c.reached {
				n += v
				pages["most pages in one "+form] = 3
				if strings.Contains(c.name, "4 pages") {
					pages["most pages in one "+form] = 4
				}
			}
			require.Equal(t, pages, longReplayPagesRead(in))
			if n > 0 {
				for what, v := range pages {
					require.Equal(t, v, windowCounts(in)["window long-replay, "+what], "an extent is reported beside the count")
				}
				require.Equal(t, n, windowCounts(in)["window long-replay"], "an extent is not summed into the count")
			}
			requireReached(t, in, "long-replay", n > 0, n)
		})
	}
}

// requireReached: minimum-work passes a run that reached window id (n
// times) and fails one that did not, naming the window.
func requireReached(t *testing.T, in *Input, id string, reached bool, n int) {
	t.Helper()
	res := MinimumWork(in)
	if !reached {
		require.False(t, res.Pass, "a run that never reached its window must fail")
		require.Contains(t, evidence0(res), "window "+id+" was never reached")
		return
	}
	require.True(t, res.Pass, evidence0(res))
	require.Equal(t, n, res.Exercised["window "+id])
}

func appendN(r *revs, n int) {
	for range n {
		r.appendBatch()
	}
}

// TestWindowDeposedReads: a read counts into window 6 when the node that
// answered it had acknowledged a mutation, and another node acknowledged
// one after that and before the read was sent, by whether it was served
// or how it was refused; a read before the succession, a transport
// failure, a refusal by a node that knew it was not the primary, a read at
// the successor, and a read after the node acknowledged
// again do not count; minimum-work fails a run that names the window and
// never reached it.
func TestWindowDeposedReads(t *testing.T) {
	at := func(o history.Op, node, code string) history.Op { o.Node, o.Code = node, code; return o }
	ops := []history.Op{
		at(op("put", "a", "ok", 1, 2), "master-0", ""),
		at(op("get", "a", "ok", 3, 4), "master-0", ""), // before the succession
		at(op("put", "b", "ok", 5, 6), "master-1", ""), // the successor acknowledges
		at(op("get", "b", "ok", 7, 8), "master-0", ""), // served by the deposed node
		at(op("get", "b", "failed", 9, 10), "master-0", "read_barrier"),
		at(op("get", "b", "failed", 11, 12), "master-0", "get_failed"),  // no answer: not a read at a primary
		at(op("get", "b", "failed", 11, 12), "master-0", "not_primary"), // a node that knew it was not the primary
		at(op("get", "b", "ok", 13, 14), "master-1", ""),                // the successor itself
		at(op("put", "c", "ok", 15, 16), "master-0", ""),                // master-0 primary again
		at(op("get", "c", "ok", 17, 18), "master-0", ""),
	}
	in := windowRun(newRevs(), "deposed-reads")
	in.Ops = append(okPuts(100), ops...)
	for i := range in.Ops[:100] {
		in.Ops[i].Node = "master-2" // the load before: another primary, long done
		in.Ops[i].Invoke, in.Ops[i].Complete = -1000+int64(i), -999+int64(i)
	}
	require.Equal(t, map[string]int{"served": 1, "refused read_barrier": 1}, countDeposedReads(in))
	requireReached(t, in, "deposed-reads", true, 2)

	in.Ops = append(okPuts(100), ops[:3]...) // no read after the succession
	requireReached(t, in, "deposed-reads", false, 0)
}

// TestWindowForeignBatchAtID: a mutation counts into window 7 when it was
// in flight at its node when the runner saw the node's append unanswered
// and while another node acknowledged from the batch id the node would
// have appended next, and was answered after; without the unanswered
// append nothing counts, and a mutation answered before, one sent after the
// foreign acknowledgement, and one of a node that never acknowledged do
// not count; minimum-work fails a run that
// names the window and never reached it.
func TestWindowForeignBatchAtID(t *testing.T) {
	mut := func(key, outcome, code, node string, invoke, complete int64, batch uint64) history.Op {
		o := op("put", key, outcome, invoke, complete)
		o.Node, o.Code, o.BatchID = node, code, batch
		return o
	}
	ops := []history.Op{
		mut("a", "ok", "", "master-0", 1, 2, 7),                     // master-0's last batch: 7
		mut("b", "unknown", "append_unknown", "master-0", 3, 20, 0), // in flight across master-1's batch 8
		mut("c", "ok", "", "master-0", 4, 21, 8),                    // the bug: acknowledged from the foreign batch
		mut("d", "failed", "fenced", "master-0", 5, 6, 0),           // answered before the foreign batch
		mut("e", "ok", "", "master-1", 9, 10, 8),                    // master-1's first batch is at id 8
		mut("f", "failed", "fenced", "master-0", 11, 12, 0),         // sent after it
		mut("g", "unknown", "", "master-2", 3, 20, 0),               // master-2 never acknowledged
	}
	in := windowRun(newRevs(), "foreign-batch-at-id")
	in.Ops = append(okPuts(100), ops...)
	for i := range in.Ops[:100] {
		in.Ops[i].Node = "master-3"
		in.Ops[i].Invoke, in.Ops[i].Complete = -1000+int64(i), -999+int64(i)
	}
	unanswered := []Event{{At: 7, Kind: "hit", Name: "primaryAppendUnknown", Target: "[master-0]", OK: true, EtcdRevision: 9},
		{At: 7, Kind: "hit", Name: "primaryAppendUnknown", Target: "[master-2]", OK: true, EtcdRevision: 9}}
	require.Empty(t, countForeignBatchAtID(in), "without the runner seeing an append unanswered, a refusal is not this window")
	in.Events = append(in.Events, unanswered...)
	require.Equal(t, map[string]int{"unknown append_unknown": 1, "ok": 1}, countForeignBatchAtID(in))
	requireReached(t, in, "foreign-batch-at-id", true, 2)

	in.Ops = append(okPuts(100), ops[0], ops[3], ops[4], ops[5])
	require.Empty(t, countForeignBatchAtID(in))
	requireReached(t, in, "foreign-batch-at-id", false, 0)
}

// TestWindowStalePublisher: the maintenance lease taken by a node while its
// applier is held (a hit of standbyBeforeApply seen at a revision, until
// that fault's heal) and latest names a batch above the durable prefix at
// the hit counts into window 1, by whether a pointer was written under
// it; a lease taken with latest at or below the bound, or after the heal,
// does not count; minimum-work fails a run that names the window and never
// reached it.
func TestWindowStalePublisher(t *testing.T) {
	take := func(r *revs, node string, lease int64) {
		r.rev++
		r.put(r.ks.SnapshotMaintenance(), []byte(fmt.Sprintf("%s/%x/nonce", node, lease)), lease)
	}
	for _, c := range []struct {
		name    string
		history func(r *revs) (hitRev, healRev int64)
		reached map[string]int
	}{
		{"lease below latest, no publication", func(r *revs) (int64, int64) {
			hit := r.rev // prefix 3 when the hit was seen
			appendN(r, 3)
			r.lease(7)
			r.publish(6, 7, 1) // another node publishes past the held cursor
			r.lease(0)
			take(r, "master-1", 8)
			r.lease(0)
			return hit, r.rev + 1
		}, map[string]int{"lease taken below latest, nothing published": 1}},
		{"lease below latest, a pointer written", func(r *revs) (int64, int64) {
			hit := r.rev
			appendN(r, 3)
			r.publish(6, 7, 1)
			take(r, "master-1", 8)
			r.publish(6, 8, 1) // under master-1's lease
			r.lease(0)
			return hit, r.rev + 1
		}, map[string]int{"lease taken below latest, a pointer written under it": 1}},
		{"latest not above the bound", func(r *revs) (int64, int64) {
			appendN(r, 3)
			hit := r.rev // prefix 6, latest 2
			take(r, "master-1", 8)
			r.lease(0)
			return hit, r.rev + 1
		}, map[string]int{}},
		{"lease taken after the heal", func(r *revs) (int64, int64) {
			hit := r.rev
			appendN(r, 3)
			r.publish(6, 7, 1)
			heal := r.rev
			take(r, "master-1", 8)
			r.lease(0)
			return hit, heal
		}, map[string]int{}},
		{"another node's lease", func(r *revs) (int64, int64) {
			hit := r.rev
			appendN(r, 3)
			r.publish(6, 7, 1)
			take(r, "master-2", 8)
			r.lease(0)
			return hit, r.rev + 1
		}, map[string]int{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRevs()
			r.claim(1)
			appendN(r, 3)
			r.lease(1)
			r.publish(2, 1, 1)
			r.lease(0)
			hit, heal := c.history(r)
			in := windowRun(r, "stale-publisher")
			in.Events = append(in.Events,
				Event{Kind: "hit", Name: "standbyBeforeApply", Target: "[master-1]", Detail: "frozen", OK: true, EtcdRevision: hit},
				Event{Kind: "heal", Name: "failpoint", Target: "[master-1]", Detail: "frozen", OK: true, EtcdRevision: heal})
			require.Equal(t, c.reached, countStalePublisher(in))
			n := 0
			for _, v := range c.reached {
				n += v
			}
			requireReached(t, in, "stale-publisher", n > 0, n)
			if n == 0 {
				return
			}
			// The same history with the node's process ended before the
			// lease (it bootstraps past the hold when it starts again), or a
			// hit no fault armed (no heal can end it): nothing counts.
			ended := in.Events[len(in.Events)-2]
			in.Events = append(in.Events[:len(in.Events)-2:len(in.Events)-2], ended,
				Event{Kind: "fault", Name: "kill", Target: "[master-1]", Detail: "k", OK: true, Ended: []string{"master-1"}, EtcdRevision: hit + 1})
			require.Empty(t, countStalePublisher(in))
			in.Events = append(in.Events[:len(in.Events)-2:len(in.Events)-2],
				Event{Kind: "hit", Name: "standbyBeforeApply", Target: "[master-1]", OK: true, EtcdRevision: hit})
			require.Empty(t, countStalePublisher(in))
		})
	}
}

// TestStartsAreWhereNodesStart: a restart starts its masters at its own
// revision; a master a fault took down until its heal starts at the heal's.
func TestStartsAreWhereNodesStart(t *testing.T) {
	events := []Event{
		{Kind: "fault", Name: "restart-crash", Detail: "restart-all", Ended: []string{"master-0", "master-1"}, EtcdRevision: 10},
		{Kind: "heal", Name: "restart-crash", Detail: "restart-all"},
		{Kind: "fault", Name: "kill", Detail: "k", Ended: []string{"master-2"}, EtcdRevision: 20},
		{Kind: "heal", Name: "kill", Detail: "k", EtcdRevision: 35},
		{Kind: "fault", Name: "stop", Detail: "never-healed", Ended: []string{"master-1"}, EtcdRevision: 40},
	}
	require.Equal(t, []start{{10, 2}, {35, 1}, {40, 1}}, startsOf(events))
}

// TestWindowZombiePrimaryWithoutAViewClaim: for a master that claims no
// producer view, the successor's takeover is the timeline's role change
// (with etcd's revision once it was seen); the window is reached by the
// deposed primary's batch landing after its resume, even with nothing
// answered after it — and not when no successor was seen serving.
func TestWindowZombiePrimaryWithoutAViewClaim(t *testing.T) {
	for _, c := range []struct {
		name    string
		served  bool
		reached map[string]int
	}{
		{"successor seen serving", true, map[string]int{"a batch it appended after its resume, its successor serving": 1}},
		{"no successor seen serving", false, map[string]int{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRevs()
			r.rev++
			r.put(r.ks.DurablePrefix(), batchlog.EncodeDurablePrefix(batchlog.DurablePrefix{}), 0)
			r.appendEntries(mountEntry("10.0.0.1:7000"))
			events := []Event{{At: 1, Kind: "role", Name: "role", Target: "master-0", Detail: "start → primary", OK: true, EtcdRevision: r.rev}}
			paused := r.rev
			r.candidate(0x200, "http://b") // the successor's election moves etcd on
			if c.served {
				events = append(events, Event{At: 30, Kind: "role", Name: "role", Target: "master-1", Detail: "promoting → primary", OK: true, EtcdRevision: r.rev})
			}
			healed := r.rev
			r.appendEntries(putEntry("z", "10.0.0.1:7000", 0, 10)) // the held batch, master-0's
			in := windowRun(r, "zombie-primary")
			in.Events = append(append(in.Events, events...),
				Event{At: 2, Kind: "fault", Name: "pause", Target: "[master-0]", OK: true,
					Anchor: &Anchor{EtcdRev: paused, Roles: map[string]string{"master-0": "primary", "master-1": "standby"}}},
				Event{At: 40, Kind: "heal", Name: "pause", Target: "[master-0]", OK: true, EtcdRevision: healed})
			mount := history.Op{Kind: history.Mount, Key: "10.0.0.1:7000", Outcome: history.OK, Invoke: 0, Complete: 1, Node: "master-0"}
			z := op(history.Put, "z", history.OK, 3, 5)
			z.Node, z.Size = "master-0", 10
			in.Ops = append(in.Ops, mount, z)
			require.Equal(t, c.reached, countZombiePrimary(in))
		})
	}
}
