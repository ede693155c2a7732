package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/harness/audit"
	"github.com/oplogha/oplogha/harness/runner"
)

// The table puts each scenario's verdict per kind side by side: a pass, a
// failure with its audits, a skip with its reason, a scenario one kind did
// not run.
func TestCompareSideBySide(t *testing.T) {
	dir := t.TempDir()
	ref := filepath.Join(dir, "ref.xml")
	up := filepath.Join(dir, "up.xml")
	require.NoError(t, writeJUnit(ref, []*runner.Outcome{
		{Scenario: "failover", Seed: 1, Tier: "upstream", Pass: true},
		{Scenario: "zombie-primary", Seed: 2, Tier: "upstream", Pass: true},
		{Scenario: "only-here", Seed: 3, Tier: "upstream", Pass: true},
	}, time.Second))
	require.NoError(t, writeJUnit(up, []*runner.Outcome{
		{Scenario: "failover", Seed: 1, Tier: "upstream", Pass: true, Skipped: "master mooncake lacks snapshots"},
		{Scenario: "zombie-primary", Seed: 2, Tier: "upstream", Pass: false, Err: errors.New("boom"),
			Results: []audit.Result{{Name: "durable-acknowledgement", Summary: "1 not durable"}, {Name: "linearizability", Pass: true}}},
	}, time.Second))
	table := filepath.Join(dir, "results.md")
	require.NoError(t, cmdCompare(context.Background(), []string{"reference=" + ref, "mooncake=" + up, "--out", table}))
	got, err := os.ReadFile(table)
	require.NoError(t, err)
	require.Equal(t, "| scenario | reference | mooncake |\n|---|---|---|\n"+
		"| failover/seed=1 | PASS | SKIP: master mooncake lacks snapshots |\n"+
		"| only-here/seed=3 | PASS | not run |\n"+
		"| zombie-primary/seed=2 | PASS | **FAIL**: durable-acknowledgement, run error: boom |\n", string(got))
	require.ErrorContains(t, cmdCompare(context.Background(), []string{"nokind"}), "want kind=junit.xml")
}
