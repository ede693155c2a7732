package audit

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/harness/client"
	"github.com/oplogha/oplogha/harness/etcddump"
	"github.com/oplogha/oplogha/harness/history"
	"github.com/oplogha/oplogha/harness/masterkind"
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
	for _, want := range []string{"1 acknowledged mutations, the scenario needs at least 2",
		"step kill primary did not complete", "0 of 1 fault/heal steps injected", "0 promotions observed"} {
		require.Contains(t, evidence0(r), want)
	}
	in = &Input{Expect: Expect{MinOKOps: 1, MinPromotions: 1}, Steps: 1,
		Ops:    []history.Op{op(history.Put, "a", history.OK, 0, 1)},
		Events: []Event{{Kind: "fault", OK: true}, {Kind: "role", Detail: "standby → primary"}}}
	require.True(t, MinimumWork(in).Pass)

	// Heals the runner made after the steps are no step's work: two fault
	// steps of which one injected, and its fault healed at settle, is 1 of 2.
	in = &Input{Expect: Expect{MinOKOps: 1}, Steps: 2, Ops: []history.Op{op(history.Put, "a", history.OK, 0, 1)},
		Events: []Event{{Kind: "fault", OK: true}, {Kind: "heal", OK: true, Settle: true}}}
	r = MinimumWork(in)
	require.False(t, r.Pass)
	require.Contains(t, evidence0(r), "1 of 2 fault/heal steps injected")
	require.Contains(t, r.Summary, "1/2 faults and heals (and 1 healed after the steps)")
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

// A violation the verifier found fails the audit, unless the run damaged
// records on purpose.
func TestOperatorVerifyFailsAViolation(t *testing.T) {
	in := &Input{Verify: &VerifyReport{Revision: 9, Keys: 5, Batches: 3,
		Violations: []VerifyViolation{{Key: "/oplog/c/batches/00000000000000000002", Reason: "batch record rejected: checksum mismatch"}}}}
	res := OperatorVerify(in)
	require.False(t, res.Pass)
	require.Equal(t, []string{"/oplog/c/batches/00000000000000000002: batch record rejected: checksum mismatch"}, res.Evidence)

	in.Events = []Event{{Kind: "fault", Name: "kill", OK: true}}
	require.False(t, OperatorVerify(in).Pass, "a kill damages no record")
	// A damaging fault excuses the violations at what it left damaged,
	// named; the rest are judged as in any run.
	batch2, batch3 := "/oplog/c/batches/00000000000000000002", "/oplog/c/batches/00000000000000000003"
	in.Etcd = []etcddump.Event{{Revision: 7, Type: "put", Key: batch2}, {Revision: 8, Type: "put", Key: batch3},
		{Revision: 12, Type: "put", Key: batch2}}
	in.Events = append(in.Events, Event{Kind: "fault", Name: "corrupt-batch", OK: true, Revisions: []int64{12}})
	res = OperatorVerify(in)
	require.True(t, res.Pass, res.Evidence)
	require.Contains(t, res.Summary, "1 on what the run damaged on purpose (/oplog/c/batches/00000000000000000002 by corrupt-batch), not judged")
	in.Verify.Violations = append(in.Verify.Violations, VerifyViolation{Key: batch3, Reason: "first_seq 9 does not follow batch 2's last_seq 4"})
	res = OperatorVerify(in)
	require.False(t, res.Pass)
	require.Equal(t, []string{batch3 + ": first_seq 9 does not follow batch 2's last_seq 4"}, res.Evidence)

	// A record the system wrote again since is no longer damaged.
	in.Verify.Violations = in.Verify.Violations[:1]
	in.Etcd = append(in.Etcd, etcddump.Event{Revision: 13, Type: "put", Key: batch2})
	require.False(t, OperatorVerify(in).Pass)

	// A snapshot damaged behind the store excuses what names it.
	in.Verify.Violations = []VerifyViolation{{Key: "/oplog/c/snapshot/latest", Reason: "latest snapshot 9-3 does not verify: CRC32C"}}
	in.Events = []Event{{Kind: "fault", Name: "corrupt-snapshot", OK: true, Corrupted: []string{"9-3"}}}
	res = OperatorVerify(in)
	require.True(t, res.Pass, res.Evidence)
	require.Contains(t, res.Summary, "snapshot 9-3 by corrupt-snapshot")
	in.Events[0].Corrupted = []string{"9-4"}
	require.False(t, OperatorVerify(in).Pass)

	// A damaging fault that says nothing of what it damaged cannot be
	// judged around.
	in.Verify.Violations = nil
	in.Events = []Event{{Kind: "fault", Name: "corrupt-batch", OK: true}}
	res = OperatorVerify(in)
	require.False(t, res.Pass)
	require.Contains(t, res.Evidence[0], "the fault corrupt-batch damaged records without saying which")

	in.Events, in.Verify.Violations = nil, nil
	require.True(t, OperatorVerify(in).Pass)
	require.True(t, OperatorVerify(&Input{}).Pass, "a bundle without a report")
}

// An audit that reads what a master kind does not expose is skipped, with
// the reason, and the others run; the reference master (the zero Kind
// included) runs every audit.
func TestAuditsSkipWhatTheMasterDoesNotExpose(t *testing.T) {
	in := &Input{Master: masterkind.Mooncake(), Expect: Expect{Audits: []string{"convergence", "recovered-state", "acknowledged-data", "recovery-source", "minimum-work"}}}
	byName := map[string]Result{}
	for _, r := range Run(in) {
		byName[r.Name] = r
	}
	for _, name := range []string{"convergence", "recovered-state", "acknowledged-data"} {
		r := byName[name]
		require.True(t, r.Skipped, name)
		require.True(t, r.Pass, name)
		require.Equal(t, "skipped: master mooncake lacks state", r.Summary, name)
	}
	require.Equal(t, "skipped: master mooncake lacks bootstrap-report", byName["recovery-source"].Summary)
	require.False(t, byName["minimum-work"].Skipped, "minimum-work reads the history: it runs")
	for _, r := range Run(&Input{Expect: in.Expect}) {
		require.False(t, r.Skipped, r.Name)
	}
}
