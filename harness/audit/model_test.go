package audit

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/oplogha/oplogha/impl/contract/metadata"

	"github.com/oplogha/oplogha/impl/contract/batchlog"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/harness/client"
	"github.com/oplogha/oplogha/harness/history"
)

// appendEntries appends the next batch holding es, with its prefix.
func (r *revs) appendEntries(es ...batchlog.Entry) {
	r.rev++
	b := batchlog.Batch{ID: r.prefix.BatchID + 1, FirstSeq: r.prefix.LastSeq + 1, LastSeq: r.prefix.LastSeq + uint64(len(es)), Entries: es}
	rec, err := batchlog.EncodeBatch(b)
	if err != nil {
		panic(err)
	}
	r.put(r.ks.Batch(b.ID), rec, 0)
	r.prefix = batchlog.DurablePrefix{BatchID: b.ID, LastSeq: b.LastSeq}
	r.put(r.ks.DurablePrefix(), batchlog.EncodeDurablePrefix(r.prefix), 0)
}

func mountEntry(endpoint string) batchlog.Entry {
	return batchlog.Entry{Op: batchlog.OpSegmentMount, Tenant: "default", Key: endpoint, Payload: metadata.EncodeSegmentMountOp(
		metadata.SegmentMountOp{SegmentName: "seg", TransportEndpoint: endpoint, Capacity: 1 << 20, IsMemorySegment: true})}
}

// putEntry is a PUT_END of one memory replica [offset, offset+size) on seg.
func putEntry(key, seg string, offset, size uint64) batchlog.Entry {
	group, dt, pinned := "", metadata.DataUnknown, false
	p, err := metadata.EncodeMetadataPayload(metadata.MetadataPayload{ClientID: metadata.UUID{First: 1, Second: 2}, Size: size,
		Replicas: []metadata.ReplicaDescriptor{{ID: 7, Status: metadata.ReplicaComplete, Variant: metadata.MemoryDescriptor{
			Buffer: metadata.BufferDescriptor{Size: size, BufferAddress: offset, Protocol: "tcp", TransportEndpoint: seg}}}},
		GroupID: &group, DataType: &dt, HardPinned: &pinned})
	if err != nil {
		panic(err)
	}
	return batchlog.Entry{Op: batchlog.OpPutEnd, Tenant: "t", Key: key, Payload: p}
}

func removeEntry(key string) batchlog.Entry {
	return batchlog.Entry{Op: batchlog.OpRemove, Tenant: "t", Key: key}
}

// modelHistory: a segment mounted (batch 1, seq 1), a and b put (batch 2,
// seq 2-3), a removed (batch 3, seq 4), c put (batch 4, seq 5).
func modelHistory() *revs {
	r := newRevs()
	r.claim(1)
	r.appendEntries(mountEntry("10.0.0.1:7000"))
	r.appendEntries(putEntry("a", "10.0.0.1:7000", 0, 100), putEntry("b", "10.0.0.1:7000", 100, 50))
	r.appendEntries(removeEntry("a"))
	r.appendEntries(putEntry("c", "10.0.0.1:7000", 0, 10))
	return r
}

// finalDump is modelHistory's final state as a master's GET /v1/state?dump=1
// shows it (CONTRACT.md), written out by hand.
const finalDump = `{"role":"standby","cursor":{"batch_id":4,"seq":5},"objects":2,"segments":1,
 "dump":[
  {"tenant":"t","key":"b","object":{"client_id":"1-2","size":50,
   "replicas":[{"id":7,"kind":"memory","segment":"10.0.0.1:7000","offset":100,"length":50,"status":"complete","protocol":"tcp"}]}},
  {"tenant":"t","key":"c","object":{"client_id":"1-2","size":10,
   "replicas":[{"id":7,"kind":"memory","segment":"10.0.0.1:7000","length":10,"status":"complete","protocol":"tcp"}]}}],
 "segment_dump":[{"endpoint":"10.0.0.1:7000","name":"seg","capacity":1048576,"kind":"memory"}]}`

// modelNode is a node whose /v1/state dump is finalDump, with the digest
// the model gives (the digest itself is pinned in harness/model).
func modelNode(t *testing.T, name string) Node {
	n := Node{Name: name, Running: true}
	require.NoError(t, json.Unmarshal([]byte(finalDump), &n.State))
	_, s, err := finalState(modelHistory().input())
	require.NoError(t, err)
	n.State.Digest = s.Digest()
	return n
}

func TestRecoveredStateAcceptsANodeOnTheModel(t *testing.T) {
	in := modelHistory().input()
	in.Nodes = []Node{modelNode(t, "master-0"), modelNode(t, "master-1"), {Name: "master-2"}}
	res := RecoveredState(in)
	require.True(t, res.Pass, evidence0(res))
	require.Equal(t, 2, res.Exercised["recovered-equals-model"])
	require.Equal(t, 4, res.Exercised["replicas-disjoint"])
	require.Contains(t, res.Summary, "2 running nodes judged against the model at their cursors; 4 durable batches applied")

	// A node still at an earlier durable prefix is judged at its cursor.
	early := Node{Name: "master-2", Running: true}
	require.NoError(t, json.Unmarshal([]byte(`{"cursor":{"batch_id":1,"seq":1},"segments":1,
		"segment_dump":[{"endpoint":"10.0.0.1:7000","name":"seg","capacity":1048576,"kind":"memory"}]}`), &early.State))
	d, err := durableOf(in)
	require.NoError(t, err)
	s, err := d.StateAt(2, nil)
	require.NoError(t, err)
	early.State.Digest = s.Digest()
	in.Nodes = append(in.Nodes[:2], early)
	res = RecoveredState(in)
	require.True(t, res.Pass, evidence0(res))
}

// Every way a node can differ from the durable history fails the audit,
// naming the node, the object or segment, and what differs.
func TestRecoveredStateFailsANodeOffTheModel(t *testing.T) {
	for name, tc := range map[string]struct {
		mutate func(n *Node)
		want   string
	}{
		"digest":         {func(n *Node) { n.State.Digest = "sha256:00" }, "master-0 at batch 4 seq 5: digest sha256:00, the model's sha256:"},
		"object lost":    {func(n *Node) { n.State.Dump = n.State.Dump[:1]; n.State.Objects = 1 }, "master-0: t/c missing; the durable history holds it (size 10)"},
		"object resized": {func(n *Node) { n.State.Dump[0].Object.Size = 51 }, "master-0: t/b differs: size 51, the model 50"},
		"replica moved":  {func(n *Node) { n.State.Dump[0].Object.Replicas[0].Offset = 0 }, "master-0: t/b differs: replica 0"},
		"pinned":         {func(n *Node) { n.State.Dump[0].Object.HardPinned = true }, "t/b differs: hard_pinned true, the model false"},
		"invented": {func(n *Node) {
			n.State.Dump = append(n.State.Dump, client.DumpedObject{Tenant: "t", Key: "a", Object: client.Object{Size: 100}})
		}, "master-0: t/a present (size 100), which the durable history does not hold at batch 4 seq 5"},
		"segment lost": {func(n *Node) { n.State.SegDump = []client.Segment{} }, "master-0: segment 10.0.0.1:7000 missing"},
		"segment changed": {func(n *Node) { n.State.SegDump[0].Capacity = 1 },
			"master-0: segment 10.0.0.1:7000 is {Endpoint:10.0.0.1:7000 Name:seg Capacity:1"},
		"cursor never durable": {func(n *Node) { n.State.Cursor = client.Cursor{BatchID: 4, Seq: 9} },
			"master-0 at batch 4 seq 9, which the durable prefix never reached"},
		"not exposed": {func(n *Node) { n.State = client.State{} }, "master-0: state not exposed (no digest, no dump): the model cannot judge it"},
	} {
		t.Run(name, func(t *testing.T) {
			in := modelHistory().input()
			n := modelNode(t, "master-0")
			tc.mutate(&n)
			in.Nodes = []Node{n}
			res := RecoveredState(in)
			require.False(t, res.Pass)
			require.Contains(t, evidence0(res), "[recovered-equals-model] ")
			require.Contains(t, evidence0(res), tc.want)
		})
	}
	// A node on the model, but no durable history to judge it by.
	res := RecoveredState(&Input{ClusterID: "c", Nodes: []Node{modelNode(t, "master-0")}})
	require.False(t, res.Pass)
	require.Contains(t, evidence0(res), "the etcd history holds no durable prefix")
}

// Two live objects on one segment share bytes: the model finds it at the
// batch that made it durable.
func TestRecoveredStateFailsOverlappingReplicas(t *testing.T) {
	r := modelHistory()
	r.appendEntries(putEntry("d", "10.0.0.1:7000", 120, 100)) // batch 5: over b's [100, 150)
	res := RecoveredState(r.input())
	require.False(t, res.Pass)
	require.Contains(t, evidence0(res), "[replicas-disjoint] rev 6, batch 5: t/d [120, 220) and t/b [100, 150) on segment 10.0.0.1:7000")
}

func TestConvergenceFailsOffTheModel(t *testing.T) {
	in := modelHistory().input()
	in.Nodes = []Node{modelNode(t, "master-0"), modelNode(t, "master-1")}
	res := Convergence(in)
	require.True(t, res.Pass, evidence0(res))
	require.Equal(t, 2, res.Exercised["converged-on-model"])
	require.Contains(t, res.Summary, "the model at the final durable prefix (batch 4)")

	// The nodes agree with each other, on a digest the durable history
	// does not give.
	for i := range in.Nodes {
		in.Nodes[i].State.Digest = "sha256:agreed"
	}
	res = Convergence(in)
	require.False(t, res.Pass)
	require.Contains(t, evidence0(res), "[converged-on-model] master-0 at batch 4 seq 5: digest sha256:agreed, the model's sha256:")

	// They agree on a cursor below the final durable prefix.
	r := modelHistory()
	r.appendEntries(removeEntry("c"))
	in.Etcd = r.events
	in.Nodes = []Node{modelNode(t, "master-0"), modelNode(t, "master-1")}
	res = Convergence(in)
	require.False(t, res.Pass)
	require.Contains(t, evidence0(res), "[converged-on-model] master-1 at batch 4 seq 5, the final durable prefix is batch 5 seq 6 (rev 6)")

	// A durable batch upstream's applier refuses: the model cannot say
	// what the final state is, and that is no pass, however the nodes agree.
	r = modelHistory()
	r.appendEntries(batchlog.Entry{Op: batchlog.OpLeaseRenew, Tenant: "t", Key: "c"})
	in.Etcd = r.events
	for i := range in.Nodes {
		in.Nodes[i].State.Cursor = client.Cursor{BatchID: 5, Seq: 6}
	}
	res = Convergence(in)
	require.False(t, res.Pass)
	require.Contains(t, evidence0(res), "[converged-on-model] the model cannot rebuild the state from batch 5 on (rev 6): "+
		"batch 5 entry 0 (seq 6, LEASE_RENEW): unsupported op_type=4")
	res = RecoveredState(in)
	require.False(t, res.Pass)
	require.Contains(t, evidence0(res), "[recovered-equals-model] master-0 at batch 5 seq 6: the model cannot rebuild the state from batch 5 on")
}

// ack is an acknowledged op as the history records it.
func ack(kind, key string, batch, seq uint64, invoke, complete int64) history.Op {
	o := op(kind, key, history.OK, invoke, complete)
	o.BatchID, o.Seq, o.Node = batch, seq, "master-0"
	if kind == history.Put {
		o.Size = map[string]uint64{"a": 100, "b": 50, "c": 10}[key]
	}
	return o
}

func modelAcks() []history.Op {
	mount := history.Op{Kind: history.Mount, Key: "10.0.0.1:7000", Outcome: history.OK, BatchID: 1, Seq: 1, Invoke: 1, Complete: 2, Node: "master-0"}
	return []history.Op{mount,
		ack(history.Put, "a", 2, 2, 3, 10), ack(history.Put, "b", 2, 3, 4, 10),
		ack(history.Remove, "a", 3, 4, 11, 12), ack(history.Put, "c", 0, 0, 13, 14), // c's ack names no position: found by key
		op(history.Put, "lost-but-failed", history.Failed, 1, 2),
	}
}

func TestDurableAcknowledgementAcceptsTheHistory(t *testing.T) {
	in := modelHistory().input()
	in.Ops = modelAcks()
	res := DurableAcknowledgement(in)
	require.True(t, res.Pass, evidence0(res))
	require.Equal(t, 5, res.Exercised["ack-durable"])
	require.Equal(t, 1, res.Exercised["ack-order"])
	require.Contains(t, res.Summary, "5 acknowledged mutations, each found in the durable history (final durable prefix batch 4 seq 5)")
}

func TestDurableAcknowledgementFailsALostAcknowledgement(t *testing.T) {
	for name, tc := range map[string]struct {
		op   history.Op
		want string
	}{
		"above the final prefix": {ack(history.Put, "d", 5, 6, 20, 21),
			"put t/d acknowledged at 0.000s by master-0 (batch 5 seq 6): above the final durable prefix batch 4 seq 5"},
		"another key at its seq": {ack(history.Put, "d", 4, 5, 20, 21), "durable batch 4 (rev 5) holds PUT_END t/c at seq 5"},
		"another op at its seq":  {ack(history.Remove, "b", 3, 4, 20, 21), "holds REMOVE t/a at seq 4"},
		"wrong size": {func() history.Op { o := ack(history.Put, "c", 4, 5, 20, 21); o.Size = 11; return o }(),
			"PUT_END t/c of size 10, acknowledged 11"},
		"wrong batch":         {ack(history.Put, "c", 3, 5, 20, 21), "seq 5 is in durable batch 4 (rev 5)"},
		"never written":       {ack(history.Remove, "zz", 0, 0, 20, 21), "no REMOVE of it in the durable history"},
		"two acks, one entry": {ack(history.Put, "b", 2, 3, 20, 21), "both name seq 3"},
	} {
		t.Run(name, func(t *testing.T) {
			in := modelHistory().input()
			in.Ops = append(modelAcks(), tc.op)
			res := DurableAcknowledgement(in)
			require.False(t, res.Pass)
			require.Contains(t, evidence0(res), "[ack-durable] ")
			require.Contains(t, evidence0(res), tc.want)
		})
	}
	// The history lost (prefix deleted, never re-initialised): nothing
	// acknowledged is durable.
	r := modelHistory()
	r.rev++
	r.del(r.ks.DurablePrefix())
	r.byHarness()
	in := r.input()
	in.Ops = modelAcks()
	res := DurableAcknowledgement(in)
	require.False(t, res.Pass)
	require.Contains(t, evidence0(res), "put t/b acknowledged at 0.000s by master-0 (batch 2 seq 3): nothing is durable: the durable prefix was deleted at rev 6")
}

// TestDurableAcknowledgementFailsADurableRefusal: a put answered as not
// written whose PUT_END is durable fails refusal-not-durable, named with
// its key, answer, time and node; the same put with an unknown outcome
// passes and counts into the commit-ends-badly window.
func TestDurableAcknowledgementFailsADurableRefusal(t *testing.T) {
	acks := modelAcks()
	acks[4] = op(history.Put, "c", history.Failed, 13, 14) // c's put answered "not written"; its PUT_END is batch 4
	acks[4].Code, acks[4].Node = "fenced", "master-1"
	acks = append(acks[:4:4], acks[4])
	in := modelHistory().input()
	in.Ops = acks
	res := DurableAcknowledgement(in)
	require.False(t, res.Pass)
	require.Contains(t, evidence0(res), `[refusal-not-durable] put t/c answered "fenced" (not written) at 0.000s by master-1, `+
		"yet the durable history holds 1 PUT_END entries of it, 1 more than the acknowledged and unknown ones")

	acks[len(acks)-1].Outcome = history.Unknown
	res = DurableAcknowledgement(in)
	require.True(t, res.Pass, evidence0(res))
	require.Equal(t, map[string]int{"unknown outcome, durable": 1}, countCommitEndsBadly(in))
	require.Equal(t, 0, res.Exercised["refusal-not-durable"])

	// A refused second put of a key whose first put was acknowledged
	// (object_exists) is not durable: one entry, one acknowledgement.
	in.Ops = append(modelAcks(), func() history.Op {
		o := op(history.Put, "b", history.Failed, 20, 21)
		o.Code = "object_exists"
		return o
	}())
	res = DurableAcknowledgement(in)
	require.True(t, res.Pass, evidence0(res))
	require.Equal(t, 2, res.Exercised["refusal-not-durable"])
}

func TestDurableAcknowledgementFailsOutOfOrder(t *testing.T) {
	in := modelHistory().input()
	in.Ops = modelAcks()
	// The remove of a (seq 4) acknowledged before the put of a (seq 2) was invoked.
	in.Ops[3].Invoke, in.Ops[3].Complete = 1, 2
	res := DurableAcknowledgement(in)
	require.False(t, res.Pass)
	require.Contains(t, evidence0(res),
		"[ack-order] t/a: remove acknowledged at 0.000s by master-0 is seq 4, after the put invoked at 0.000s (by master-0) at seq 2")
}

// A history that starts from a legacy import: the model has no start for
// the imported snapshot yet (the snapshot half), so recovered-state and
// convergence say they did not judge against it rather than pass on it
// or fail it; acknowledgements after the import are found as usual.
func TestModelAuditsOnAnImportedHistory(t *testing.T) {
	r := importHistory(t, nil) // batches 2 and 3: REMOVE t/k each
	r.appendEntries(putEntry("after", "10.0.0.1:7000", 0, 10))
	in := r.input()
	n := Node{Name: "master-0", Running: true, State: client.State{Cursor: client.Cursor{BatchID: 4, Seq: importSeq + 3}, Digest: "sha256:x", Objects: 3}}
	in.Nodes = []Node{n}
	res := RecoveredState(in)
	require.True(t, res.Pass, evidence0(res))
	require.Contains(t, res.Summary, "not judged: nodes whose history starts from a legacy import")
	res = Convergence(in)
	require.True(t, res.Pass, evidence0(res))
	require.Contains(t, res.Summary, "not judged against the model")
	require.Contains(t, res.Summary, "the history starts from a legacy import at batch 1 seq 5000")

	in.Ops = []history.Op{ack(history.Put, "after", 4, importSeq+3, 1, 2)}
	in.Ops[0].Size = 10
	res = DurableAcknowledgement(in)
	require.True(t, res.Pass, evidence0(res))
	in.Ops[0].Seq = importSeq // the import's own seq: not an entry of the lineage
	in.Ops[0].BatchID = 1
	res = DurableAcknowledgement(in)
	require.False(t, res.Pass)
	require.Contains(t, evidence0(res), "seq 5000 is not in the durable history's lineage (it starts at batch 1 seq 5000, import)")
}

// TestDurableAcknowledgementNamesAWriterThatStopped: when, from some time
// to the end of the run, none of a node's acknowledgements became durable,
// the first finding (and the summary) says so in one line — the node, the
// time, how many of how many, the last durable revision — before the list
// of lost writes; a few lost writes at the end are not a stall.
func TestDurableAcknowledgementNamesAWriterThatStopped(t *testing.T) {
	lost := func(n int, apart float64) []history.Op {
		var out []history.Op
		for i := range n {
			o := ack(history.Put, fmt.Sprintf("late-%02d", i), 0, 0, int64(20e9+float64(i)*apart), int64(20.27e9+float64(i)*apart))
			o.Size = 10
			out = append(out, o)
		}
		return out
	}
	in := modelHistory().input()
	in.Ops = append(modelAcks(), lost(stallMinAcks+4, 100e6)...)
	res := DurableAcknowledgement(in)
	require.False(t, res.Pass)
	require.Equal(t, "[writer-stalled] master-0: none of its acknowledgements from 20.270s on became durable (14 of its 19, to the end "+
		"of the run); its last durable one was acknowledged at 0.000s; the durable history's last entry is at rev 5 (batch 4)", res.Evidence[0])
	require.Contains(t, res.Summary, "[writer-stalled] master-0")
	require.Contains(t, evidence0(res), "[ack-durable] put t/late-00 acknowledged at 20.270s by master-0: ",
		"an acknowledgement that named no position is shown without one")
	require.NotContains(t, evidence0(res), "(batch 0 seq 0)")

	in.Ops = append(modelAcks(), lost(stallMinAcks-1, 100e6)...)
	res = DurableAcknowledgement(in)
	require.False(t, res.Pass)
	require.NotContains(t, evidence0(res), "writer-stalled")

	// As many lost by a primary killed right after answering them are each
	// a lost write, not a writer that stopped while its node went on.
	in.Ops = append(modelAcks(), lost(stallMinAcks+4, 1e6)...)
	in.Events = append(in.Events, Event{At: 21e9, Kind: "fault", Name: "kill", Target: "[master-0]", Ended: []string{"master-0"}, OK: true})
	res = DurableAcknowledgement(in)
	require.False(t, res.Pass)
	require.NotContains(t, evidence0(res), "writer-stalled")

	// Acknowledged, every one, while the node was cut off from etcd: lost
	// to the cut (its fate says so), not a writer that stopped.
	in.Ops = append(modelAcks(), lost(stallMinAcks+4, 100e6)...)
	in.Events = []Event{{At: 19e9, Kind: "fault", Name: "blackhole", Target: "[master-0.etcd-0]", Detail: "cut", OK: true}}
	res = DurableAcknowledgement(in)
	require.False(t, res.Pass)
	require.NotContains(t, evidence0(res), "writer-stalled")
	require.Contains(t, evidence0(res), "[ack-durable] lost (its node was cut off): 14 acknowledged by master-0")
	// healed halfway: the rest went on being acknowledged and never became
	// durable: the writer stopped
	in.Events = append(in.Events, Event{At: 20.5e9, Kind: "heal", Name: "blackhole", Target: "[master-0.etcd-0]", Detail: "cut", OK: true})
	res = DurableAcknowledgement(in)
	require.Contains(t, evidence0(res), "writer-stalled")
}
