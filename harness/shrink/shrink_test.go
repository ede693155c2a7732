package shrink

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/harness/scenario"
	"github.com/oplogha/oplogha/harness/swarm"
)

const noisy = `
name: noisy
tier: harness-test
seed: 3
cluster: {etcd: 3, masters: 3}
traffic: {clients: 4, rate: 400, max_ops: 1000, duration: 1m}
steps:
  - wait: {for: ops, ops: 100}
  - fault: {kind: kill, target: primary}
    as: a
  - wait: {for: primary, excluding: a}
  - heal: a
  - fault: {kind: failpoint, target: standby, name: standbyBeforeApply, term: "sleep(100)"}
    as: slow
  - sleep: 2s
  - heal: slow
  - fault: {kind: failpoint, target: primary, name: brokenAckWithoutAppend, term: "return(true)"}
    as: broken
  - wait: {for: ops, ops: 100}
  - heal: broken
  - wait: {for: caught-up}
expect: {recovery_source: [oplog, empty], min_ok_ops: 10}
`

// With a Try that fails exactly when the sabotage failpoint is in the
// scenario, the shrinker keeps that fault and its heal, drops every other
// step, and shrinks the cluster and the load.
func TestShrinkKeepsOnlyTheCause(t *testing.T) {
	sc, err := scenario.Parse([]byte(noisy))
	require.NoError(t, err)
	try := func(_ context.Context, c *scenario.Scenario, origin []int) (bool, error) {
		require.Len(t, origin, len(c.Steps))
		for i, st := range c.Steps {
			// Each remaining step is the original's step at its origin.
			require.Equal(t, sc.Steps[origin[i]-1].Label(), st.Label())
			if st.Fault != nil && st.Fault.Name == "brokenAckWithoutAppend" {
				return true, nil
			}
		}
		return false, nil
	}
	res, err := Shrink(context.Background(), sc, try, 50)
	require.NoError(t, err)
	for _, l := range res.Log {
		t.Log(l)
	}
	var labels []string
	for _, st := range res.Scenario.Steps {
		labels = append(labels, st.Label())
	}
	require.Equal(t, []string{"failpoint brokenAckWithoutAppend=return(true) on primary", "heal broken"}, labels)
	require.Len(t, res.Origin, 2)
	require.Equal(t, labels[0], sc.Steps[res.Origin[0]-1].Label())
	require.Equal(t, 2, res.Scenario.Cluster.Masters)
	require.Equal(t, 1, res.Scenario.Cluster.Etcd)
	require.Equal(t, 200.0, res.Scenario.Traffic.Rate)
	require.LessOrEqual(t, res.Runs, 50)
}

// The run budget is a hard bound.
func TestShrinkStopsAtItsBudget(t *testing.T) {
	sc, err := scenario.Parse([]byte(noisy))
	require.NoError(t, err)
	runs := 0
	res, err := Shrink(context.Background(), sc, func(context.Context, *scenario.Scenario, []int) (bool, error) { runs++; return false, nil }, 3)
	require.NoError(t, err)
	require.Equal(t, 3, runs)
	require.Equal(t, 3, res.Runs)
	require.Len(t, res.Scenario.Steps, len(sc.Steps), "nothing removed: every candidate passed")
}

// A drawn scenario is shrunk a whole move at a time first: with a Try that
// fails while move 2 is there, two runs remove moves 3 and 1 (last first)
// with the waits that follow each, before any single step is tried.
func TestShrinkRemovesWholeDrawnMovesFirst(t *testing.T) {
	sc, err := swarm.Draw(5, 3)
	require.NoError(t, err)
	ms := moveUnits(sc)
	require.GreaterOrEqual(t, len(ms), 2, sc.Description)
	keep := 2
	if len(ms) < 2 {
		t.Skip()
	}
	try := func(_ context.Context, c *scenario.Scenario, _ []int) (bool, error) {
		for _, st := range c.Steps {
			if n, ok := drawnMove(st); ok && n == keep {
				return true, nil
			}
		}
		return false, nil
	}
	res, err := Shrink(context.Background(), sc, try, 100)
	require.NoError(t, err)
	for i := 0; i < len(ms)-1; i++ {
		require.Contains(t, res.Log[i], "without move", res.Log)
	}
	for _, st := range res.Scenario.Steps {
		if n, ok := drawnMove(st); ok {
			require.Equal(t, keep, n)
		}
	}
}
