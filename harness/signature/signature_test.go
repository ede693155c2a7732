package signature

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/harness/audit"
	"github.com/oplogha/oplogha/harness/history"
)

func exit(node, detail string, sec int, lines ...string) audit.Event {
	return audit.Event{Kind: "exit", Target: node, Name: audit.ExitOwn, Detail: detail, At: int64(time.Duration(sec) * time.Second), Log: lines}
}

// TestRunsOfOneBugShareASignature: two runs of one bug — other nodes, other
// times, revisions, keys and counts — read as one signature, made from the
// audits' own evidence.
func TestRunsOfOneBugShareASignature(t *testing.T) {
	run := func(node string, rev, sec int) []audit.Result {
		var loop []audit.Event
		for i := range 3 {
			loop = append(loop, exit(node, "signal: aborted, 500ms after its start (pid 9)", sec+i,
				"I1206 18:00:01.000000  4242 master.cpp:10] entering serve",
				"E1206 18:00:02.000000  4242 ha.cpp:99] promotion failed for key=/oplog/c/snapshot/latest: INCOMPLETE_OPLOG_CATCH_UP"))
		}
		exits := audit.ProcessExits(&audit.Input{Events: loop})
		exits.Name = "process-exits"
		durable := audit.Result{Name: "durable-acknowledgement", Evidence: []string{
			"[writer-stalled] rev 71: " + node + ": none of its acknowledgements from 19.7s on became durable",
			"[deposed-append] rev 70: batch 65 appended by " + node + " after master-1 served",
			"[ack-durable] rev 71: put g0-c1-000015 acknowledged by " + node + " is in no batch",
			"[ack-durable] lost (its node went down): 11 acknowledged by " + node + " from 16.064s to 16.068s; next on that node: kill (ended its process) at 16.100s",
		}}
		return []audit.Result{{Name: "linearizability", Pass: true}, exits, durable}
	}
	a := Of(run("master-0", 70, 20), "")
	b := Of(run("master-2", 1303, 95), "")
	require.Equal(t, a, b)
	require.Equal(t, "durable-acknowledgement [ack-durable] · durable-acknowledgement [ack-durable] lost: its node went down · "+
		"durable-acknowledgement [deposed-append] · "+
		"durable-acknowledgement [writer-stalled] · process-exits crash loop (signal: aborted, "+
		"«promotion failed for key=… INCOMPLETE_OPLOG_CATCH_UP»)", a)
}

// TestOtherBugsHaveOtherSignatures: another invariant, another exit cause,
// a window never reached, a step that did not complete and a run error
// each change the signature; a run that found nothing has none.
func TestOtherBugsHaveOtherSignatures(t *testing.T) {
	require.Empty(t, Of([]audit.Result{{Name: "linearizability", Pass: true}, {Name: "convergence", Skipped: true}}, ""))

	single := audit.ProcessExits(&audit.Input{Events: []audit.Event{exit("master-1", "exit status 2, 3s after its start (pid 7)", 12, "panic: boom")}})
	single.Name = "process-exits"
	require.Equal(t, "process-exits exit (exit status 2, «panic: boom»)", Of([]audit.Result{single}, ""))
	info := audit.ProcessExits(&audit.Input{Events: []audit.Event{exit("master-1", "exit status 255, 23s after its start (pid 7)", 12,
		"I20261206 22:27:59.656359 30495 hot_standby_service.cpp:336] HotStandbyService stopped, final_state=STOPPED")}})
	info.Name = "process-exits"
	require.Equal(t, "process-exits exit (exit status 255, «HotStandbyService stopped, final_state=STOPPED»)", Of([]audit.Result{info}, ""))

	in := &audit.Input{Expect: audit.Expect{MinOKOps: 2, Windows: []string{"zombie-primary"}}, Steps: 1,
		Ops:    []history.Op{{Kind: history.Put, Tenant: "t", Key: "a", Size: 10, Outcome: history.OK, Invoke: 0, Complete: 1}},
		Events: []audit.Event{{Kind: "step", Name: "wait primary excluding f2-zombie-append-zombie", OK: false, Detail: "timed out after 60s"}}}
	mw := audit.MinimumWork(in)
	mw.Name = "minimum-work"
	sig := Of([]audit.Result{mw}, "")
	for _, want := range []string{"minimum-work step wait primary excluding f-zombie-append-zombie did not complete",
		"minimum-work N acknowledged mutations, the scenario needs at least N"} {
		require.Contains(t, sig, want)
	}
	require.NotContains(t, sig, "fault/heal steps injected", "the steps not injected follow from the step that did not complete")
	stopped := Of([]audit.Result{mw}, "step 4 (line 9) wait for primary: context deadline exceeded")
	require.NotContains(t, stopped, "minimum-work step", "a run that stopped says where itself")
	bare := Of([]audit.Result{{Name: "minimum-work", Evidence: []string{"step wait for failpoint did not complete: timed out"}}}, "step 4 (line 9) wait for failpoint: context deadline exceeded")
	require.Equal(t, "run error: step N (line N) wait for failpoint: context deadline exceeded", bare, "minimum-work failed for the step the run error names")
	require.Contains(t, stopped, "run error: step N (line N) wait for primary: context deadline exceeded")

	lin := Of([]audit.Result{{Name: "linearizability", Evidence: []string{"no linearization of 312 ops on key g0-c1-000015"}}}, "")
	require.Equal(t, "linearizability", lin)
	require.Equal(t, "linearizability · run error: step N (wait primary): timed out after Ns",
		Of([]audit.Result{{Name: "linearizability"}}, "step 4 (wait primary): timed out after 60s: master-2 health: context deadline exceeded"))
}

// TestCoversNeedsEveryPart: a candidate fails the same way only when it
// shows every part of the original's signature; a part every run of a
// master shows (its logs) is not enough on its own.
func TestCoversNeedsEveryPart(t *testing.T) {
	orig := "durable-acknowledgement [deposed-append] · log-audit"
	require.True(t, Covers(orig, orig))
	require.True(t, Covers(orig, "durable-acknowledgement [deposed-append] · linearizability · log-audit"))
	require.False(t, Covers(orig, "log-audit"))
	require.False(t, Covers(orig, ""))
	require.False(t, Covers("", "log-audit"), "a passing original has nothing to cover")
	require.True(t, Overlap(orig, "log-audit"))
	require.False(t, Overlap(orig, "linearizability"))
	require.Equal(t, []string{"a", "b"}, Parts("a · b"))
	require.Nil(t, Parts(""))
}

// TestFindingsLeaveOutWhatAnotherPartSaysMorePrecisely: the bare
// [ack-durable] beside what happened to the node that lost the writes is
// no finding of its own; alone it is one.
func TestFindingsLeaveOutWhatAnotherPartSaysMorePrecisely(t *testing.T) {
	sig := "durable-acknowledgement [ack-durable] · durable-acknowledgement [ack-durable] lost: its node went down · log-audit"
	require.Equal(t, []string{"durable-acknowledgement [ack-durable] lost: its node went down", "log-audit"}, Findings(sig))
	require.Equal(t, []string{"durable-acknowledgement [ack-durable]", "linearizability"}, Findings("durable-acknowledgement [ack-durable] · linearizability"))
}
