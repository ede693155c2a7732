package audit

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/harness/history"
	"github.com/oplogha/oplogha/impl/contract/batchlog"
)

// TestLossFates: each lost acknowledgement is put with the first thing
// that happened to its node after it — a fault that ended its process, a
// crash at an armed failpoint, a step-down, an etcd fault — or nothing.
func TestLossFates(t *testing.T) {
	s := func(sec float64) int64 { return int64(sec * float64(time.Second)) }
	lostAt := func(node string, sec float64) *history.Op {
		return &history.Op{Kind: history.Put, Node: node, Complete: s(sec), Outcome: history.OK}
	}
	events := []Event{
		{At: s(1), Kind: "fault", Name: "pause", Target: "[etcd-1]"},
		{At: s(10), Kind: "fault", Name: "link-down", Target: "[master-10.etcd-0 master-10.etcd-1]"},
		{At: s(12), Kind: "fault", Name: "kill", Target: "[master-1]", Ended: []string{"master-1"}},
		{At: s(20), Kind: "exit", Name: ExitArmed, Target: "master-2"},
		{At: s(30), Kind: "role", Target: "master-0", Detail: "primary → standby"},
		{At: s(40), Kind: "fault", Name: "pause", Target: "[etcd-2]"},
	}
	lines := lossFates(events, []*history.Op{lostAt("master-1", 11), lostAt("master-1", 11.5), lostAt("master-2", 19),
		lostAt("master-0", 25), lostAt("master-3", 35), lostAt("master-4", 50), lostAt("master-10", 9)}, nil)
	require.Equal(t, []string{
		"[ack-durable] lost (its node was cut off): 1 acknowledged by master-10 from 9.000s to 9.000s; next on that node: link-down at 10.000s",
		"[ack-durable] lost (its node went down): 2 acknowledged by master-1 from 11.000s to 11.500s; next on that node: kill (ended its process) at 12.000s",
		"[ack-durable] lost (its node went down): 1 acknowledged by master-2 from 19.000s to 19.000s; next on that node: a crash at a failpoint the scenario armed at 20.000s",
		"[ack-durable] lost (its node stepped down): 1 acknowledged by master-0 from 25.000s to 25.000s; next on that node: stepped down (primary → standby) at 30.000s",
		"[ack-durable] lost (etcd was faulted): 1 acknowledged by master-3 from 35.000s to 35.000s; next on that node: etcd pause at 40.000s",
		"[ack-durable] lost (nothing happened to its node): 1 acknowledged by master-4 from 50.000s to 50.000s; next on that node: " + LossFateNone,
	}, lines)
	// a write acknowledged while its node's links were cut, or while an etcd
	// member was down, is put with that fault, not with what came after
	cut := []Event{
		{At: s(5), Kind: "fault", OK: true, Name: "blackhole", Target: "[master-0.etcd-0]", Detail: "f1-blackhole"},
		{At: s(8), Kind: "role", Target: "master-0", Detail: "primary → standby"},
		{At: s(9), Kind: "heal", OK: true, Name: "blackhole", Target: "[master-0.etcd-0]", Detail: "f1-blackhole"},
		{At: s(10), Kind: "fault", OK: true, Name: "kill", Target: "[etcd-1]", Detail: "f2-kill"},
	}
	require.Equal(t, []string{
		"[ack-durable] lost (its node was cut off): 1 acknowledged by master-0 from 6.000s to 6.000s; next on that node: acknowledged while blackhole on its links was in force (since 5.000s)",
	}, lossFates(cut, []*history.Op{lostAt("master-0", 6)}, nil))
	require.Equal(t, []string{
		"[ack-durable] lost (etcd was faulted): 1 acknowledged by master-0 from 11.000s to 11.000s; next on that node: acknowledged while etcd kill was in force (since 10.000s)",
	}, lossFates(cut, []*history.Op{lostAt("master-0", 11)}, nil))
	require.Equal(t, []string{
		"[ack-durable] lost (etcd was faulted): 1 acknowledged by master-0 from 9.500s to 9.500s; next on that node: etcd kill at 10.000s",
	}, lossFates(cut, []*history.Op{lostAt("master-0", 9.5)}, nil), "healed by then: what came next")
	// another acknowledgement of the same key's op took the entry: a loss
	// nothing explains may be that one's; a loss a fault explains stays
	amb := lossFates(nil, []*history.Op{lostAt("master-0", 50)}, func(*history.Op) bool { return true })
	require.Len(t, amb, 1)
	require.Contains(t, amb[0], "[ack-durable] lost (which of two acknowledgements was lost is unknown): 1 acknowledged by master-0")
	amb = lossFates(cut, []*history.Op{lostAt("master-0", 6)}, func(*history.Op) bool { return true })
	require.Contains(t, amb[0], "[ack-durable] lost (its node was cut off)")
	// master-1 is not master-10: a link fault of master-10 is not master-1's
	require.False(t, namesNode("[master-10.etcd-0]", "master-1"))
	require.True(t, namesNode("[master-1.etcd-0]", "master-1"))
	require.False(t, namesNode("[master-1.etcd-0]", "etcd"), "a master's link to a member is the master's fault")
	// a partition between members names them as "etcd-0→etcd-1": etcd was faulted
	require.True(t, namesNode("[etcd-0→etcd-1 etcd-0→etcd-2]", "etcd"))
	require.True(t, namesNode("[etcd-1→etcd-0 etcd-0→etcd-1 etcd-1→etcd-2] … (4 links)", "etcd"))
	split := []Event{{At: s(5), Kind: "fault", OK: true, Name: "etcd-partition", Target: "[etcd-0→etcd-1 etcd-0→etcd-2]", Detail: "mute"}}
	require.Equal(t, []string{
		"[ack-durable] lost (etcd was faulted): 1 acknowledged by master-0 from 6.000s to 6.000s; next on that node: acknowledged while etcd etcd-partition was in force (since 5.000s)",
	}, lossFates(split, []*history.Op{lostAt("master-0", 6)}, nil))
	require.True(t, strings.HasPrefix(lines[0], "[ack-durable]"))
}

// TestDurableAcknowledgementSaysWhatHappenedToTheLostWrites: the audit's
// evidence puts the fates of its lost writes before the writes themselves.
func TestDurableAcknowledgementSaysWhatHappenedToTheLostWrites(t *testing.T) {
	r := newRevs()
	r.rev++
	r.put(r.ks.DurablePrefix(), batchlog.EncodeDurablePrefix(batchlog.DurablePrefix{}), 0)
	r.appendEntries(mountEntry("10.0.0.1:7000"))
	r.appendEntries(putEntry("a", "10.0.0.1:7000", 0, 10))
	in := r.input()
	mount := history.Op{Kind: history.Mount, Key: "10.0.0.1:7000", Outcome: history.OK, Invoke: 1, Complete: 2, Node: "master-0"}
	put := func(key string, at int64) history.Op {
		o := op(history.Put, key, history.OK, at, at+1)
		o.Node, o.Size = "master-0", 10
		return o
	}
	in.Ops = []history.Op{mount, put("a", 5e9), put("lost-1", 9e9), put("lost-2", 9.5e9)}
	in.Events = []Event{{At: 10e9, Kind: "fault", Name: "kill", Target: "[master-0]", Ended: []string{"master-0"}}}
	res := DurableAcknowledgement(in)
	require.False(t, res.Pass)
	require.Equal(t, "[ack-durable] lost (its node went down): 2 acknowledged by master-0 from 9.000s to 9.500s; next on that node: kill (ended its process) at 10.000s",
		res.Evidence[0])
	require.Contains(t, res.Evidence[1], "lost-1")
}

// TestALossIsPutOnTheNodeThatLostIt: of two acknowledged puts of one key
// (a master that names no position), the one durable entry, appended while
// the second node served, is the second node's; the loss is the first's
// (and, with nothing to explain it, said to be ambiguous).
func TestALossIsPutOnTheNodeThatLostIt(t *testing.T) {
	r := newRevs()
	r.rev++
	r.put(r.ks.DurablePrefix(), batchlog.EncodeDurablePrefix(batchlog.DurablePrefix{}), 0)
	r.appendEntries(mountEntry("10.0.0.1:7000"))
	events := []Event{{Kind: "role", Target: "master-0", Detail: "standby → primary", EtcdRevision: 2, At: 1e9}}
	events = append(events, Event{Kind: "role", Target: "master-1", Detail: "standby → primary", EtcdRevision: r.rev + 1, At: 20e9})
	r.appendEntries(putEntry("k", "10.0.0.1:7000", 0, 10)) // master-1's put of k, in its term
	in := r.input()
	in.Events = events
	put := func(node string, at int64) history.Op {
		o := op(history.Put, "k", history.OK, at, at+1)
		o.Node, o.Size = node, 10
		return o
	}
	mount := history.Op{Kind: history.Mount, Key: "10.0.0.1:7000", Outcome: history.OK, Invoke: 1, Complete: 2, Node: "master-0"}
	in.Ops = []history.Op{mount, put("master-0", 9e9), put("master-1", 21e9)}
	res := DurableAcknowledgement(in)
	require.False(t, res.Pass)
	require.Contains(t, res.Evidence[0], "[ack-durable] lost (which of two acknowledgements was lost is unknown): 1 acknowledged by master-0 from 9.000s")
	require.NotContains(t, strings.Join(res.Evidence, "\n"), "by master-1")
}
