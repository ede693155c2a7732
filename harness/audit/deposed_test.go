package audit

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/harness/history"
	"github.com/oplogha/oplogha/impl/contract/batchlog"
)

// TestDurableAcknowledgementFailsADeposedAppend: a batch that lands after
// another node was seen serving as the primary, holding only entries the
// node it replaced took from clients, is a deposed append — with or
// without a producer-view claim in the history; the same batch landing
// before the successor served, or one holding the successor's own
// entries, is not.
func TestDurableAcknowledgementFailsADeposedAppend(t *testing.T) {
	served := func(node string, rev int64, sec int64) Event {
		return Event{Kind: "role", Name: "role", Target: node, Detail: "standby → primary", OK: true, EtcdRevision: rev, At: sec * 1e9}
	}
	sent := func(key, node string, outcome string, at int64) history.Op {
		o := op(history.Put, key, outcome, at, at+1)
		o.Node, o.Size = node, 10
		return o
	}
	// zombie: the keys of the batch master-0 appends (z, and any more)
	buildWith := func(deposedFirst bool, zombie ...string) *Input {
		r := newRevs() // no producer view is ever claimed: the zero prefix alone starts the history
		r.rev++
		r.put(r.ks.DurablePrefix(), batchlog.EncodeDurablePrefix(batchlog.DurablePrefix{}), 0)
		r.appendEntries(mountEntry("10.0.0.1:7000"))
		r.appendEntries(putEntry("a", "10.0.0.1:7000", 0, 10))
		events := []Event{served("master-0", 2, 3)}
		var held []batchlog.Entry
		for i, k := range append([]string{"z"}, zombie...) {
			held = append(held, putEntry(k, "10.0.0.1:7000", 100+uint64(i)*10, 10))
		}
		if deposedFirst {
			r.appendEntries(held...) // lands before master-1 serves
		}
		events = append(events, served("master-1", r.rev, 20))
		if !deposedFirst {
			r.appendEntries(held...) // master-0's, after master-1 served
		}
		r.appendEntries(putEntry("y", "10.0.0.1:7000", 200, 10))
		in := r.input()
		in.Events = events
		mount := history.Op{Kind: history.Mount, Key: "10.0.0.1:7000", Outcome: history.OK, Invoke: 1, Complete: 2, Node: "master-0"}
		in.Ops = []history.Op{mount, sent("a", "master-0", history.OK, 5e9), sent("z", "master-0", history.OK, 9e9),
			sent("y", "master-1", history.OK, 21e9)}
		for _, k := range zombie {
			in.Ops = append(in.Ops, sent(k, "master-0", history.OK, 9e9))
		}
		return in
	}
	build := func(deposedFirst bool) *Input { return buildWith(deposedFirst) }
	res := DurableAcknowledgement(build(false))
	require.False(t, res.Pass)
	require.Equal(t, "[deposed-append] batch 3 (rev 4) holds 1 entries only master-0 took from clients (1 acknowledged, the first "+
		"invoked at 9.000s), appended after master-1 was seen serving as the primary (rev 3, at 20.000s): two primaries appended", res.Evidence[0])
	require.Contains(t, res.Summary, "1 batches appended by a deposed primary after its successor served")

	res = DurableAcknowledgement(build(true))
	require.True(t, res.Pass, evidence0(res))

	// The successor puts a key of the deposed batch again, and that put
	// never becomes durable: the deposed batch's entry is the deposed
	// primary's acknowledgement (its appender), so the successor's put is
	// the lost one — not the deposed primary's.
	in0 := buildWith(false, "x")
	in0.Ops = append(in0.Ops, sent("z", "master-1", history.OK, 22e9))
	res = DurableAcknowledgement(in0)
	require.False(t, res.Pass)
	require.Contains(t, evidence0(res), "[ack-durable] put t/z acknowledged at 22.000s by master-1: ")
	require.NotContains(t, evidence0(res), "acknowledged at 9.000s by master-0")

	// The old primary resumed and reporting itself primary for a moment
	// ("down → primary") took nothing over: the successor stays current,
	// and the successor's own batches are not the resumed node's.
	in := build(false)
	in.Events = append(in.Events, Event{Kind: "role", Name: "role", Target: "master-0", Detail: "down → primary", OK: true,
		EtcdRevision: in.Events[1].EtcdRevision, At: 25e9})
	res = DurableAcknowledgement(in)
	require.False(t, res.Pass)
	require.Contains(t, res.Evidence[0], "[deposed-append] batch 3 (rev 4) holds 1 entries only master-0 took")

	// A former primary elected again appends its first batch before the
	// harness reads etcd's revision for its serve (an upper bound): that
	// batch is its own, not a deposed one.
	in = build(false)
	// (its batch z is at rev 4; the harness read rev 5 once it saw it serve)
	in.Events = append(in.Events, Event{Kind: "role", Name: "role", Target: "master-0", Detail: "promoting → primary", OK: true,
		EtcdRevision: 5, At: 25e9})
	res = DurableAcknowledgement(in)
	require.True(t, res.Pass, evidence0(res))

	// Without the role's revision (a bundle from before it was recorded,
	// or etcd unreadable then) nothing is judged.
	in = build(false)
	in.Events[1].EtcdRevision = 0
	res = DurableAcknowledgement(in)
	require.True(t, res.Pass, evidence0(res))
}

// TestServesOfTellsAResumedPrimaryFromASlowPromotion: "down → primary" is
// the same primary seen again when the node was primary before it went
// silent (a paused primary resumed), and a takeover when it was promoting
// (a node slow to answer on a loaded machine, read "down" for a moment).
func TestServesOfTellsAResumedPrimaryFromASlowPromotion(t *testing.T) {
	role := func(node, detail string, rev int64, sec int64) Event {
		return Event{Kind: "role", Name: "role", Target: node, Detail: detail, OK: true, EtcdRevision: rev, At: sec * 1e9}
	}
	serves := servesOf([]Event{
		role("master-0", "start → primary", 3, 1),
		role("master-0", "primary → down", 0, 5),
		role("master-1", "standby → primary", 40, 9),
		role("master-0", "down → primary", 41, 10), // resumed: still believes it leads
		role("master-2", "restarted → promoting", 0, 20),
		role("master-2", "promoting → down", 0, 21),
		role("master-2", "down → primary", 60, 22), // a slow answer in the middle of a promotion
	})
	var got []string
	for _, s := range serves {
		got = append(got, fmt.Sprintf("%s@%d", s.node, s.rev))
	}
	require.Equal(t, []string{"master-0@3", "master-1@40", "master-2@60"}, got)
}
