package audit

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestProcessExits: an exit the harness did not cause fails the run with
// the node's last log lines; three of one cause are a crash loop; a crash
// window the scenario armed, or an exit it expects, does not fail it.
func TestProcessExits(t *testing.T) {
	exit := func(node, name, detail string, sec int, lines ...string) Event {
		return Event{Kind: "exit", Target: node, Name: name, Detail: detail, At: int64(time.Duration(sec) * time.Second), Log: lines}
	}
	r := ProcessExits(&Input{})
	require.True(t, r.Pass, r.Summary)

	r = ProcessExits(&Input{Events: []Event{exit("master-1", ExitOwn, "exit status 2, 3s after its start (pid 7)", 12, "panic: boom", "goroutine 1")}})
	require.False(t, r.Pass)
	require.Contains(t, evidence0(r), "master-1 exited on its own at 12.00s (exit status 2, 3s after its start (pid 7)); its last log lines: «panic: boom» «goroutine 1»")

	var loop []Event
	for i := range 6 {
		loop = append(loop, exit("master-0", ExitOwn, "signal: aborted, 500ms after its start (pid 9)", 20+i, "F1206 Check failed: INCOMPLETE_OPLOG_CATCH_UP"),
			Event{Kind: "note", Name: "supervisor", Target: "master-0", OK: true})
	}
	r = ProcessExits(&Input{Events: loop})
	require.False(t, r.Pass)
	require.Contains(t, evidence0(r), "master-0 crash-looped: 6 exits with signal: aborted between 20.00s and 25.00s")
	require.Contains(t, evidence0(r), "INCOMPLETE_OPLOG_CATCH_UP")
	require.Contains(t, r.Summary, "6 supervisor restarts")

	armed := exit("master-2", ExitArmed, "exit status 2, 9s after its start (pid 3); armed: primaryBeforeAppend=1*panic", 9)
	refused := exit("master-2", ExitOwn, "exit status 1, 1s after its start (pid 4)", 11, `{"msg":"exit","code":"residue_without_history"}`)
	r = ProcessExits(&Input{Events: []Event{armed, refused}, Expect: Expect{ExitReasons: []string{"residue_without_history"}}})
	require.True(t, r.Pass, evidence0(r))
	require.Contains(t, r.Summary, "1 at a crash window the scenario armed, 1 the scenario expects")
	r = ProcessExits(&Input{Events: []Event{armed, refused}})
	require.False(t, r.Pass, "an exit the scenario does not expect")
}
