package audit

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/harness/history"
	"github.com/oplogha/oplogha/impl/contract/batchlog"
)

// TestWindowCrashBeforeAppend: the mutations in flight at a primary when
// the runner saw it held at primaryBeforeAppend count into the window once
// a fault ended that node before the hold's heal, by how each was
// answered, with the most clients among them beside the count; a hold
// released first, a hold on another node, and ops answered before the hit
// or sent after it do not count; minimum-work fails a run that names the
// window and never reached it.
func TestWindowCrashBeforeAppend(t *testing.T) {
	mut := func(key, outcome, code, node string, client int, invoke, complete int64) history.Op {
		o := op("put", key, outcome, invoke, complete)
		o.Node, o.Code, o.Client = node, code, client
		return o
	}
	ops := []history.Op{
		mut("a", "ok", "", "master-0", 1, 1, 2),                // answered before the hold
		mut("b", "unknown", "transport", "master-0", 1, 3, 20), // in the held batch
		mut("c", "unknown", "transport", "master-0", 2, 4, 20),
		mut("d", "failed", "not_serving", "master-0", 3, 4, 20),
		mut("e", "unknown", "transport", "master-0", 4, 6, 20), // sent after the hit was seen
		mut("f", "ok", "", "master-1", 4, 4, 20),               // another node's
	}
	hit := Event{At: 5, Kind: "hit", Name: "primaryBeforeAppend", Target: "[master-0]", Detail: "held", OK: true, EtcdRevision: 9}
	kill := Event{At: 6, Kind: "fault", Name: "kill", Target: "[master-0]", Detail: "crash", OK: true, Ended: []string{"master-0"}, EtcdRevision: 9}
	release := Event{At: 6, Kind: "heal", Name: "failpoint", Target: "[master-0]", Detail: "held", OK: true}
	build := func(events ...Event) *Input {
		in := windowRun(newRevs(), "crash-before-append")
		for i := range in.Ops {
			in.Ops[i].Node = "master-2"
			in.Ops[i].Invoke, in.Ops[i].Complete = -1000+int64(i), -999+int64(i)
		}
		in.Ops = append(in.Ops, ops...)
		in.Events = events
		return in
	}
	in := build(hit, kill)
	require.Equal(t, map[string]int{"in flight at the held primary when it ended: unknown transport": 2,
		"in flight at the held primary when it ended: failed not_serving": 1}, countCrashBeforeAppend(in))
	require.Equal(t, map[string]int{"most clients in flight at one held primary": 3}, crashBeforeAppendClients(in))
	requireReached(t, in, "crash-before-append", true, 3)
	require.Equal(t, 3, MinimumWork(in).Exercised["window crash-before-append, most clients in flight at one held primary"])

	requireReached(t, build(hit, release, kill), "crash-before-append", false, 0)
	other := hit
	other.Target = "[master-1]"
	requireReached(t, build(other, kill), "crash-before-append", false, 0)
	requireReached(t, build(kill), "crash-before-append", false, 0)
}

// TestCommitEndsBadlyInDoubtBatches: beside commit-ends-badly's count, the
// most entries one durable batch held whose clients got an unknown
// outcome, and the most clients they came from; an acknowledged entry of
// the same batch is not in doubt.
func TestCommitEndsBadlyInDoubtBatches(t *testing.T) {
	r := newRevs()
	r.claim(1)
	r.appendEntries(mountEntry("10.0.0.1:7000"))
	r.appendEntries(putEntry("a", "10.0.0.1:7000", 0, 10))
	r.appendEntries(putEntry("b", "10.0.0.1:7000", 10, 10), putEntry("c", "10.0.0.1:7000", 20, 10),
		putEntry("d", "10.0.0.1:7000", 30, 10), batchlog.Entry{Op: batchlog.OpRemove, Tenant: "t", Key: "a"})
	in := windowRun(r, "commit-ends-badly")
	mut := func(kind, key, outcome string, client int) history.Op {
		o := op(kind, key, outcome, 1, 2)
		o.Node, o.Client = "master-0", client
		return o
	}
	in.Ops = append(okPuts(100)[:0], history.Op{Kind: history.Mount, Key: "10.0.0.1:7000", Outcome: history.OK, Invoke: 0, Complete: 1},
		mut("put", "a", "ok", 1), mut("put", "b", "unknown", 1), mut("put", "c", "unknown", 2), mut("put", "d", "ok", 3),
		mut("remove", "a", "unknown", 4))
	require.Equal(t, map[string]int{"most in-doubt entries in one batch": 3, "most clients in one batch's in-doubt entries": 3},
		inDoubtBatches(in))
	require.Equal(t, map[string]int{"unknown outcome, durable": 3}, countCommitEndsBadly(in))

	in.Ops = in.Ops[:2]
	require.Empty(t, inDoubtBatches(in))
}

// TestDeposedReadsSecondForm: a read sent while its node reached only the
// member an etcd-partition cut from the others (its links to those cut)
// counts as the second form; once the node's link to a member of the
// quorum is back, or without the partition, it is the first.
func TestDeposedReadsSecondForm(t *testing.T) {
	partition := Event{At: 10, Kind: "fault", Name: "etcd-partition", Detail: "minority", OK: true,
		Anchor: &Anchor{Targets: []string{"etcd-2→etcd-0", "etcd-0→etcd-2", "etcd-2→etcd-1", "etcd-1→etcd-2"}}}
	cut := Event{At: 11, Kind: "fault", Name: "link-down", Detail: "cut", OK: true,
		Anchor: &Anchor{Targets: []string{"master-0.etcd-0", "master-0.etcd-1"}}}
	healCut := Event{At: 30, Kind: "heal", Name: "link-down", Detail: "cut", OK: true}
	in := &Input{Events: []Event{partition, cut, healCut}}
	require.True(t, ownMemberBehind(in, "master-0", 20))
	require.False(t, ownMemberBehind(in, "master-1", 20), "another node's links are up")
	require.False(t, ownMemberBehind(in, "master-0", 5), "before the faults")
	require.False(t, ownMemberBehind(in, "master-0", 31), "its link to the quorum is back")
	in.Events = []Event{cut}
	require.False(t, ownMemberBehind(in, "master-0", 20), "no partition: etcd-2 is with the quorum")
	oneWay := partition
	oneWay.Anchor = &Anchor{Targets: []string{"etcd-2→etcd-0", "etcd-2→etcd-1"}}
	in.Events = []Event{oneWay, cut}
	require.False(t, ownMemberBehind(in, "master-0", 20), "etcd-2 still hears the quorum")
}
