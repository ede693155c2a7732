package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/harness/audit"
)

// TestReplayExitStatus: the replay's exit status says whether the
// original's first failure reproduced; "NOT reproduced" is never exit 0.
func TestReplayExitStatus(t *testing.T) {
	for _, c := range []struct {
		was, now string
		code     int
	}{
		{"", "", 0},
		{"keyspace-order", "keyspace-order", 1},
		{"keyspace-order", "", 3},
		{"keyspace-order", "convergence", 3},
		{"", "convergence", 4},
	} {
		require.Equal(t, c.code, replayExitCode(replayVerdict(c.was, c.now)), "%q → %q", c.was, c.now)
	}
}

// TestAFailedStepFailsFirst: a run that stopped at a step failed there,
// before any audit whose window it never reached.
func TestAFailedStepFailsFirst(t *testing.T) {
	rs := []audit.Result{{Name: "durable-acknowledgement", Pass: true}, {Name: "objects", Pass: false}, {Name: "minimum-work", Pass: false}}
	require.Equal(t, "step 39 wait for snapshots",
		firstFailed(rs, "step 39 (line 79) wait for snapshots: context deadline exceeded: 0 of 2 publications"))
	require.Equal(t, firstFailed(rs, "step 7 (line 42) wait for metric: deadline"), firstFailed(rs, "step 7 (line 55) wait for metric: deadline"),
		"a replay runs the bundle's resolved scenario, whose lines differ")
	require.Equal(t, "objects", firstFailed(rs, ""))
	require.Equal(t, "run error", firstFailed([]audit.Result{{Name: "objects", Pass: true}}, "collect: etcd unreachable"))
	require.Equal(t, "", firstFailed([]audit.Result{{Name: "objects", Pass: true}}, ""))
}
