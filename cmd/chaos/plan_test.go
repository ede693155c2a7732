package main

import (
	"fmt"
	"testing"

	"github.com/oplogha/oplogha/harness/plan"
	"github.com/oplogha/oplogha/harness/swarm"
	"github.com/stretchr/testify/require"
)

// The nightly's shards, computed as each CI machine computes them, partition
// the whole batch: every scenario run (name, seed) and every swarm run in
// exactly one shard, none lost, none twice.
func TestNightlyShardsPartitionTheBatch(t *testing.T) {
	const shards, seeds, swarmRuns = 16, 5, 1000
	all, err := planRuns([]string{"../../scenarios"}, runPlan{tier: "nightly", seeds: seeds, seedStep: 1000})
	require.NoError(t, err)
	want := map[string]int{}
	for _, sc := range all {
		want[fmt.Sprintf("%s@%d", sc.Name, sc.Seed)]++
	}
	require.Len(t, want, len(all), "the plan itself names no run twice")
	got := map[string]int{}
	swarmGot := map[int]int{}
	for k := 1; k <= shards; k++ {
		sh := plan.Shard{K: k, N: shards}
		// planned again, as a separate machine would
		again, err := planRuns([]string{"../../scenarios"}, runPlan{tier: "nightly", seeds: seeds, seedStep: 1000})
		require.NoError(t, err)
		for _, sc := range plan.Pick(sh, again) {
			got[fmt.Sprintf("%s@%d", sc.Name, sc.Seed)]++
		}
		for i := 0; i < swarmRuns; i++ {
			if sh.Owns(i) {
				swarmGot[i]++
			}
		}
	}
	require.Equal(t, want, got)
	require.Len(t, swarmGot, swarmRuns)
	for i, c := range swarmGot {
		require.Equal(t, 1, c, "swarm run %d", i)
	}
	// every shard draws the same scenario for the same swarm index
	a, err := swarm.Draw(7, 123)
	require.NoError(t, err)
	b, err := swarm.Draw(7, 123)
	require.NoError(t, err)
	require.Equal(t, a, b)
}
