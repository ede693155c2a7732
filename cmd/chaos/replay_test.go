package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/harness/audit"
	"github.com/oplogha/oplogha/harness/bundle"
	"github.com/oplogha/oplogha/harness/bundle/bundletest"
	"github.com/oplogha/oplogha/harness/masterkind"
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

// TestReplayThatCannotRunExitsTwo: a replay that could not run says so with
// exit 2 — never "reproduced" (1) or "not reproduced" (3), which a script
// bisecting a failure would take for a verdict on the system.
func TestReplayThatCannotRunExitsTwo(t *testing.T) {
	ctx := context.Background()
	out := t.TempDir()
	require.Equal(t, 2, replayExitCode(cmdReplay(ctx, []string{filepath.Join(out, "no-such-bundle.tar.gz")})), "a bundle that does not exist")
	require.Equal(t, 2, replayExitCode(cmdReplay(ctx, []string{"a.tar.gz", "b.tar.gz"})), "two bundles")
	require.Equal(t, 2, replayExitCode(cmdReplay(ctx, []string{"--no-such-flag", "a.tar.gz"})), "a flag replay does not take")

	// A bundle of upstream's master, replayed where its binary is missing.
	dir, err := bundletest.Small().Write(t.TempDir())
	require.NoError(t, err)
	sc := filepath.Join(dir, bundle.ScenarioFile)
	data, err := os.ReadFile(sc)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(sc, []byte(strings.Replace(string(data), "cluster:\n", "cluster:\n  master: mooncake\n", 1)), 0o644))
	t.Setenv(masterkind.BinaryEnv, filepath.Join(out, "no-such-mooncake_master"))
	err = cmdReplay(ctx, []string{"--out", out, dir})
	require.Equal(t, 2, replayExitCode(err), "%v", err)
	require.ErrorContains(t, err, "no-such-mooncake_master")
}
