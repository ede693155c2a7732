// Package upstream runs upstream's mooncake_master under the suite's
// scenarios, as the mooncake master kind. The binary is the user's:
// MOONCAKE_MASTER names it, and without it the tests that need it skip
// with one line; the rest (what a kind lacks is skipped, not failed) run
// everywhere.
package upstream

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/harness/bin"
	"github.com/oplogha/oplogha/harness/bundle"
	"github.com/oplogha/oplogha/harness/history"
	"github.com/oplogha/oplogha/harness/masterkind"
	"github.com/oplogha/oplogha/harness/runner"
	"github.com/oplogha/oplogha/harness/scenario"
)

// A scenario that needs what upstream's master lacks is not run against
// it: the outcome says which capabilities, and nothing is started.
func TestWhatUpstreamLacksIsSkippedWithTheReason(t *testing.T) {
	sc, err := scenario.Load("../../scenarios/nightly/crash-each-object.yaml")
	require.NoError(t, err)
	out := t.TempDir()
	o, err := runner.Run(context.Background(), sc, runner.Options{Out: out, Master: masterkind.MooncakeName})
	require.NoError(t, err)
	require.True(t, o.Pass)
	require.Contains(t, o.Skipped, "master mooncake lacks ")
	require.Contains(t, o.Skipped, "snapshots")
	require.Contains(t, o.Skipped, "failpoint:snapshotAfterObject")
	require.Empty(t, o.Dir)
	entries, _ := os.ReadDir(out)
	require.Empty(t, entries, "a skipped run starts nothing and writes no bundle")
}

// Against a real mooncake_master, a failover scenario runs end to end:
// the load's coro_rpc client is acknowledged, the kill lands, a standby
// promotes, and the audits judge what etcd and the client history hold
// (the verdicts are findings, reported, not asserted here).
func TestFailoverAgainstUpstream(t *testing.T) {
	if os.Getenv(masterkind.BinaryEnv) == "" {
		t.Skip("MOONCAKE_MASTER not set: no upstream mooncake_master to run (docs/upstream.md)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cache, err := bin.NewCache("../..", nil)
	require.NoError(t, err)
	sc, err := scenario.Load("../../scenarios/upstream/failover.yaml")
	require.NoError(t, err)
	o, err := runner.Run(ctx, sc, runner.Options{Out: t.TempDir(), Cache: cache, Keep: true, Master: masterkind.MooncakeName})
	require.NoError(t, err)
	require.Empty(t, o.Skipped)
	require.NoError(t, o.Err, "the run itself completes: boot, load, kill, promotion")
	ran := map[string]bool{}
	for _, r := range o.Results {
		if !r.Skipped {
			ran[r.Name] = true
		}
		t.Logf("%s pass=%v skipped=%v: %s", r.Name, r.Pass, r.Skipped, r.Summary)
	}
	for _, name := range []string{"durable-acknowledgement", "linearizability", "keyspace-order", "minimum-work"} {
		require.True(t, ran[name], "%s judges an upstream run", name)
	}
	ops, err := history.ReadFile(filepath.Join(o.Dir, bundle.HistoryFile))
	require.NoError(t, err)
	acked := 0
	for _, op := range ops {
		if op.Outcome == history.OK && op.Kind == history.Put {
			acked++
		}
	}
	require.Greater(t, acked, 100, "upstream acknowledged the load's puts")
}
