package audit

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/harness/client"
	"github.com/oplogha/oplogha/harness/etcddump"
	"github.com/oplogha/oplogha/harness/history"
	"github.com/oplogha/oplogha/impl/keyspace"
	"github.com/oplogha/oplogha/impl/oplog"
	"github.com/oplogha/oplogha/impl/publish"
	"github.com/oplogha/oplogha/impl/snapshot"
	"github.com/oplogha/oplogha/impl/state"
)

func op(kind, key, outcome string, invoke, complete int64) history.Op {
	return history.Op{Kind: kind, Tenant: "t", Key: key, Size: 10, Outcome: outcome, Invoke: invoke, Complete: complete}
}

func nodeWith(keys map[string]uint64) Node {
	n := Node{Name: "master-0", Running: true, State: client.State{Digest: "d"}}
	for k, size := range keys {
		n.State.Dump = append(n.State.Dump, client.DumpedObject{Tenant: "t", Key: k, Object: client.Object{Size: size}})
	}
	n.State.Objects = len(keys)
	if n.State.Dump == nil {
		n.State.Dump = []client.DumpedObject{}
	}
	return n
}

func evidence0(r Result) string { return strings.Join(r.Evidence, "\n") }

func TestAcknowledgedData(t *testing.T) {
	ops := []history.Op{
		op(history.Put, "acked", history.OK, 1, 2),
		op(history.Put, "doubt", history.Unknown, 1, 2),
		op(history.Put, "gone", history.OK, 1, 2),
		op(history.Remove, "gone", history.OK, 3, 4),
		op(history.Put, "refused", history.Failed, 1, 2),
	}
	pass := AcknowledgedData(&Input{Ops: ops, Nodes: []Node{nodeWith(map[string]uint64{"acked": 10})}})
	require.True(t, pass.Pass, evidence0(pass))
	pass = AcknowledgedData(&Input{Ops: ops, Nodes: []Node{nodeWith(map[string]uint64{"acked": 10, "doubt": 10})}})
	require.True(t, pass.Pass, "an op in doubt may have happened")

	for name, tc := range map[string]struct {
		keys map[string]uint64
		want string
	}{
		"lost":     {map[string]uint64{}, "acked missing: put acknowledged"},
		"resized":  {map[string]uint64{"acked": 11}, "has size 11"},
		"revived":  {map[string]uint64{"acked": 10, "gone": 10}, "gone present: remove acknowledged"},
		"refused":  {map[string]uint64{"acked": 10, "refused": 10}, "refused present but no put of it was acknowledged"},
		"invented": {map[string]uint64{"acked": 10, "ghost": 10}, "ghost present but no put"},
	} {
		t.Run(name, func(t *testing.T) {
			r := AcknowledgedData(&Input{Ops: ops, Nodes: []Node{nodeWith(tc.keys)}})
			require.False(t, r.Pass)
			require.Contains(t, evidence0(r), tc.want)
		})
	}
	r := AcknowledgedData(&Input{Ops: ops, Nodes: []Node{{Name: "m", Running: false}}})
	require.False(t, r.Pass, "no running node proves nothing")
}

func TestLinearizability(t *testing.T) {
	get := func(key string, found bool, at, done int64) history.Op {
		o := op(history.Get, key, history.OK, at, done)
		o.Found, o.GotSize = found, 10
		return o
	}
	ok := []history.Op{
		op(history.Put, "a", history.OK, 0, 10),
		get("a", true, 11, 12),
		op(history.Remove, "a", history.OK, 13, 20),
		get("a", false, 15, 16), // concurrent with the remove: may see either
		op(history.Put, "b", history.Unknown, 0, 5),
		get("b", true, 30, 31), // the unknown put took effect
		op(history.Put, "c", history.Unknown, 0, 5),
		get("c", false, 30, 31), // … or did not
	}
	r := Linearizability(&Input{Ops: ok})
	require.True(t, r.Pass, evidence0(r))

	stale := append(ok[:0:0], ok...)
	stale = append(stale, op(history.Put, "d", history.OK, 40, 50), get("d", false, 60, 61))
	r = Linearizability(&Input{Ops: stale})
	require.False(t, r.Pass)
	require.Contains(t, evidence0(r), "key t/d")
	require.NotContains(t, evidence0(r), "key t/a", "only the broken key is named")
}

// revs builds an MVCC history with one revision per append.
type revs struct {
	ks     keyspace.Keyspace
	rev    int64
	events []etcddump.Event
	prefix oplog.DurablePrefix
}

func (r *revs) put(key string, value []byte, version int64) {
	r.events = append(r.events, etcddump.Event{Revision: r.rev, Type: "put", Key: key, Value: value, Version: version, CreateRevision: r.rev})
}

func (r *revs) claim(view uint64) {
	r.rev++
	r.put(r.ks.ProducerView(), oplog.EncodeProducerView(view), int64(view))
	if view == 1 {
		r.put(r.ks.DurablePrefix(), oplog.DurablePrefix{}.Encode(), 1)
	}
}

func (r *revs) appendBatch() {
	r.rev++
	b := state.Batch{ID: r.prefix.BatchID + 1, FirstSeq: r.prefix.LastSeq + 1, LastSeq: r.prefix.LastSeq + 1, Entries: []state.Entry{state.Remove("t", "k")}}
	rec, _ := oplog.EncodeBatch(b)
	r.put(r.ks.Batch(b.ID), rec, 1)
	r.prefix = oplog.DurablePrefix{BatchID: b.ID, LastSeq: b.LastSeq}
	r.put(r.ks.DurablePrefix(), r.prefix.Encode(), 2)
}

func (r *revs) floor(n uint64) {
	r.rev++
	r.put(r.ks.CompactionFloor(), oplog.Floor{BatchID: n}.Encode(), 1)
}

func (r *revs) deleteBatch(id uint64) {
	r.rev++
	r.events = append(r.events, etcddump.Event{Revision: r.rev, Type: "delete", Key: r.ks.Batch(id)})
}

func goodHistory() *revs {
	r := &revs{ks: keyspace.Must("c")}
	r.claim(1)
	for i := 0; i < 5; i++ {
		r.appendBatch()
	}
	r.claim(2)
	r.appendBatch()
	r.floor(3)
	r.deleteBatch(1)
	r.deleteBatch(2)
	r.deleteBatch(3)
	return r
}

func TestKeyspaceOrder(t *testing.T) {
	good := goodHistory()
	res := KeyspaceOrder(&Input{ClusterID: "c", Etcd: good.events})
	require.True(t, res.Pass, evidence0(res))

	cases := map[string]struct {
		mutate func(r *revs)
		want   string
	}{
		"view regresses":     {func(r *revs) { r.claim(1) }, "producer view went from 2 to 1"},
		"delete above floor": {func(r *revs) { r.deleteBatch(5) }, "batch 5 deleted above the floor 3"},
		"floor decreases":    {func(r *revs) { r.floor(2) }, "compaction floor decreased from 3 to 2"},
		"batch overwritten": {func(r *revs) {
			r.rev++
			rec, _ := oplog.EncodeBatch(state.Batch{ID: 2, FirstSeq: 2, LastSeq: 2, Entries: []state.Entry{state.Remove("t", "x")}})
			r.put(r.ks.Batch(2), rec, 2)
		}, "batch 2 overwritten"},
		"prefix jumps": {func(r *revs) {
			r.rev++
			r.prefix = oplog.DurablePrefix{BatchID: r.prefix.BatchID + 1, LastSeq: r.prefix.LastSeq + 1}
			rec, _ := oplog.EncodeBatch(state.Batch{ID: r.prefix.BatchID + 1, FirstSeq: r.prefix.LastSeq + 1, LastSeq: r.prefix.LastSeq + 1, Entries: []state.Entry{state.Remove("t", "x")}})
			r.put(r.ks.Batch(r.prefix.BatchID+1), rec, 1)
			r.put(r.ks.DurablePrefix(), oplog.DurablePrefix{BatchID: r.prefix.BatchID + 1, LastSeq: r.prefix.LastSeq + 1}.Encode(), 9)
		}, "durable prefix jumped"},
		"batch without prefix": {func(r *revs) {
			r.rev++
			rec, _ := oplog.EncodeBatch(state.Batch{ID: 7, FirstSeq: 7, LastSeq: 7, Entries: []state.Entry{state.Remove("t", "x")}})
			r.put(r.ks.Batch(7), rec, 1)
		}, "batch 7 written without moving the durable prefix"},
		"corrupt batch": {func(r *revs) {
			r.rev++
			r.put(r.ks.Batch(7), []byte("[1,7"), 1)
			r.put(r.ks.DurablePrefix(), oplog.DurablePrefix{BatchID: 7, LastSeq: 7}.Encode(), 9)
		}, "batch 7 does not decode"},
		"prefix reset": {func(r *revs) {
			r.rev++
			r.put(r.ks.DurablePrefix(), oplog.DurablePrefix{}.Encode(), 9)
		}, "durable prefix reset to the zero state"},
		"stray key": {func(r *revs) {
			r.rev++
			r.put(r.ks.Root()+"/scratch", []byte("x"), 1)
		}, "unexpected key"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := goodHistory()
			tc.mutate(r)
			res := KeyspaceOrder(&Input{ClusterID: "c", Etcd: r.events})
			require.False(t, res.Pass)
			require.Contains(t, evidence0(res), tc.want)
		})
	}
	t.Run("delete before any floor", func(t *testing.T) {
		r := &revs{ks: keyspace.Must("c")}
		r.claim(1)
		r.appendBatch()
		r.appendBatch()
		r.deleteBatch(1)
		res := KeyspaceOrder(&Input{ClusterID: "c", Etcd: r.events})
		require.False(t, res.Pass)
		require.Contains(t, evidence0(res), "batch 1 deleted while no compaction floor was published")
	})
	t.Run("delete in the floor's own revision", func(t *testing.T) {
		r := &revs{ks: keyspace.Must("c")}
		r.claim(1)
		r.appendBatch()
		r.appendBatch()
		r.floor(1)
		r.events = append(r.events, etcddump.Event{Revision: r.rev, Type: "delete", Key: r.ks.Batch(1)})
		res := KeyspaceOrder(&Input{ClusterID: "c", Etcd: r.events})
		require.False(t, res.Pass)
		require.Contains(t, evidence0(res), "in the revision that published the floor")
	})
}

func TestConvergenceAndMinimumWork(t *testing.T) {
	a, b := nodeWith(nil), nodeWith(nil)
	b.Name, b.State.Digest = "master-1", "other"
	r := Convergence(&Input{Nodes: []Node{a, b}})
	require.False(t, r.Pass)
	b.State.Digest = a.State.Digest
	require.True(t, Convergence(&Input{Nodes: []Node{a, b}}).Pass)

	in := &Input{Expect: Expect{MinOKOps: 2, MinPromotions: 1}, Steps: 1,
		Ops:    []history.Op{op(history.Put, "a", history.OK, 0, 1)},
		Events: []Event{{Kind: "step", Name: "kill primary", OK: false, Detail: "no primary"}}}
	r = MinimumWork(in)
	require.False(t, r.Pass)
	for _, want := range []string{"1 acknowledged mutations, the scenario needs at least 2", "step kill primary did not complete", "0 of 1 fault/heal steps injected", "0 promotions observed"} {
		require.Contains(t, evidence0(r), want)
	}
	in = &Input{Expect: Expect{MinOKOps: 1, MinPromotions: 1}, Steps: 1,
		Ops:    []history.Op{op(history.Put, "a", history.OK, 0, 1)},
		Events: []Event{{Kind: "fault", OK: true}, {Kind: "role", Detail: "standby → primary"}}}
	require.True(t, MinimumWork(in).Pass)
}

func TestRecoverySource(t *testing.T) {
	n := nodeWith(nil)
	n.Health.Bootstrap.Source = "oplog"
	require.True(t, RecoverySource(&Input{Expect: Expect{RecoverySource: []string{"oplog"}}, Nodes: []Node{n}}).Pass)
	r := RecoverySource(&Input{Expect: Expect{RecoverySource: []string{"latest"}}, Nodes: []Node{n}})
	require.False(t, r.Pass)
	require.Contains(t, evidence0(r), `bootstrapped from "oplog", expected one of [latest]`)
	require.False(t, RecoverySource(&Input{Nodes: []Node{n}}).Pass, "no expectation is no pass")
}

func pointerJSON(t *testing.T, batch uint64) []byte {
	t.Helper()
	id := snapshot.ID{BatchID: batch, Lease: 1, Random: "00112233445566aa"} // deterministic: equal batches, equal pointers
	p := publish.Pointer{PointerSchemaVersion: 1, SnapshotID: id.String(), LastIncludedBatchID: batch, LastIncludedSeq: batch, ProducerViewVersion: 1,
		PayloadSize: 10, PayloadChecksum: snapshot.CRC64NVME(batch), CreatedAtMS: 1, ObjectPrefix: "p/" + id.String()}
	b, err := p.Encode()
	require.NoError(t, err)
	return b
}

func TestKeyspaceOrderPointerRules(t *testing.T) {
	base := func() *revs {
		r := goodHistory()
		r.rev++
		r.put(r.ks.SnapshotLatest(), pointerJSON(t, 2), 1)
		r.rev++
		r.put(r.ks.SnapshotLatest(), pointerJSON(t, 4), 2)
		r.put(r.ks.SnapshotFallback(), pointerJSON(t, 2), 1)
		return r
	}
	res := KeyspaceOrder(&Input{ClusterID: "c", Etcd: base().events})
	require.True(t, res.Pass, evidence0(res))
	require.Contains(t, res.Summary, "2 pointer publications")

	r := base()
	r.rev++
	r.put(r.ks.SnapshotLatest(), pointerJSON(t, 3), 3)
	r.put(r.ks.SnapshotFallback(), pointerJSON(t, 4), 2)
	res = KeyspaceOrder(&Input{ClusterID: "c", Etcd: r.events})
	require.False(t, res.Pass)
	require.Contains(t, evidence0(res), "latest pointer regressed from batch 4 to 3")

	r = base()
	r.rev++
	r.put(r.ks.SnapshotLatest(), pointerJSON(t, 6), 3)
	r.put(r.ks.SnapshotFallback(), pointerJSON(t, 2), 2) // not the latest it replaced
	res = KeyspaceOrder(&Input{ClusterID: "c", Etcd: r.events})
	require.False(t, res.Pass)
	require.Contains(t, evidence0(res), "fallback written with a value latest did not hold")

	r = base()
	r.rev++
	r.put(r.ks.SnapshotLatest(), []byte("junk"), 3)
	res = KeyspaceOrder(&Input{ClusterID: "c", Etcd: r.events})
	require.False(t, res.Pass)
	require.Contains(t, evidence0(res), "latest pointer written malformed")
}

func TestAcknowledgedDataWithARefusedDuplicatePut(t *testing.T) {
	ops := []history.Op{op(history.Put, "k", history.OK, 1, 2), op(history.Put, "k", history.Failed, 3, 4)}
	ops[1].Code = "object_exists"
	r := AcknowledgedData(&Input{Ops: ops, Nodes: []Node{nodeWith(map[string]uint64{"k": 10})}})
	require.True(t, r.Pass, "the acknowledged put speaks for the key: %s", evidence0(r))
}

// A write acknowledged and then lost is caught by the final reads even if no
// client ever read the key again.
func TestLinearizabilityClosesWithFinalState(t *testing.T) {
	ops := []history.Op{op(history.Put, "lost", history.OK, 0, 10), op(history.Put, "kept", history.OK, 0, 10)}
	r := Linearizability(&Input{Ops: ops})
	require.True(t, r.Pass, "without a final state there is nothing to contradict")
	n := nodeWith(map[string]uint64{"kept": 10})
	n.Health.Serving = true
	r = Linearizability(&Input{Ops: ops, Nodes: []Node{n}})
	require.False(t, r.Pass)
	require.Contains(t, evidence0(r), "key t/lost")
	require.NotContains(t, evidence0(r), "key t/kept")
}

// retention-bounds fails at the peak sample with its time and cursor, and
// without bounds only reports the maxima.
func TestRetentionBounds(t *testing.T) {
	in := &Input{Retention: []RetentionSample{
		{At: 1e9, Floor: 0, Prefix: 100, BatchKeys: 100, Groups: 1, DBSize: 1 << 20},
		{At: 2e9, Floor: 50, Prefix: 400, BatchKeys: 350, Groups: 4, DBSize: 2 << 20},
		{At: 3e9, Floor: 300, Prefix: 420, BatchKeys: 120, Groups: 2, DBSize: 2 << 20},
	}}
	r := RetentionBounds(in)
	require.True(t, r.Pass)
	require.Contains(t, r.Summary, "at most 350 batch keys, 4 snapshot groups, etcd db 2.0 MiB")

	in.Expect.MaxBatchKeys, in.Expect.MaxSnapshotGroups = 300, 3
	r = RetentionBounds(in)
	require.False(t, r.Pass)
	require.Equal(t, []string{
		"350 batch keys at the peak, bound 300 (at 2.0s: floor 50, durable prefix 400)",
		"4 snapshot groups at the peak, bound 3 (at 2.0s: floor 50, durable prefix 400)",
	}, r.Evidence)

	require.True(t, RetentionBounds(&Input{}).Pass, "no samples, nothing to bound")
}
