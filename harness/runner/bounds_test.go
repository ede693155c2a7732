package runner

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/faults"
	"github.com/oplogha/oplogha/harness/proc"
	"github.com/oplogha/oplogha/harness/scenario"
)

// stepSlack is what a step may take past its bound: the runner's own
// bookkeeping after the bound's context ends.
const stepSlack = 2 * time.Second

// endBound bounds the end of a run whose etcd and store are still broken:
// settle, collect (every read under its deadline), stopping every process,
// writing, auditing and rendering the bundle.
const endBound = 2 * time.Minute

// TestEveryStepKindReturnsWithinItsBound drives every step kind, every
// wait kind and every fault kind (scenarios/testdata/broken-cluster.yaml)
// against a cluster whose etcd has lost its quorum, whose store answers
// nothing and whose masters are frozen, and sees each step return within
// its bound: the harness never waits on what it broke. A new step, wait or
// fault kind without an entry in the table fails the test. The run then
// ends with etcd and the store still broken: it writes its bundle within
// endBound, and the audits that need what could not be read say they
// cannot judge.
func TestEveryStepKindReturnsWithinItsBound(t *testing.T) {
	sc := load(t, "testdata/broken-cluster.yaml")
	requireEveryKind(t, sc)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	r, skipped, err := newRun(sc, Options{Out: t.TempDir(), Cache: cache(t)})
	require.NoError(t, err)
	require.Nil(t, skipped)
	group := proc.NewGroup()
	defer group.Close(5 * time.Second)
	stop, err := r.boot(ctx, group)
	defer stop()
	require.NoError(t, err)

	require.NoError(t, r.step(ctx, sc.Steps[0]), "the healthy cluster publishes a snapshot")
	freeze := func(names ...string) {
		for _, n := range names {
			require.NoError(t, r.env.Pause(n), "freeze %s", n)
		}
	}
	freeze("etcd-0", "etcd-1", "versitygw", "master-0", "master-1", "master-2")
	for i, st := range sc.Steps[1:] {
		bound, ok := StepBound(st)
		require.True(t, ok, "step %s has no bound", st.Label())
		r.stepIndex = i + 2
		began := time.Now()
		err := r.step(ctx, st)
		took := time.Since(began)
		t.Logf("%-60s %7v (bound %v): %v", st.Label(), took.Round(time.Millisecond), bound, err)
		require.LessOrEqual(t, took, bound+stepSlack, "step %d %s took %v, its bound is %v", i+2, st.Label(), took, bound)
	}

	// The traffic a step started outlives the step's bound.
	require.NotNil(t, r.gen)
	select {
	case <-r.gen.Done():
		t.Fatal("the traffic `traffic: start` started ended with its step")
	default:
	}

	// The run ends with etcd and the store still broken, the masters
	// frozen again (the restart started them afresh).
	freeze("master-0", "master-1", "master-2")
	began := time.Now()
	r.settle(ctx)
	runErr := r.collect(ctx)
	stop()
	out, err := r.finish(ctx, group, runErr)
	took := time.Since(began)
	require.NoError(t, err)
	t.Logf("the end of the run took %v: %v", took.Round(time.Millisecond), runErr)
	require.LessOrEqual(t, took, endBound, "a run whose etcd and store are broken writes its bundle within %v", endBound)
	require.FileExists(t, out.Archive)
	require.False(t, out.Pass, "a run whose evidence could not be read never passes")
	for name, says := range map[string]string{
		"durable-acknowledgement": "etcd unreachable at the end of the run: cannot judge",
		"keyspace-order":          "etcd unreachable at the end of the run: cannot judge",
		"objects":                 "store unreachable at the end of the run: cannot judge",
		"acknowledged-data":       "a master unreadable at the end of the run: cannot judge",
	} {
		res := result(out.Results, name)
		require.False(t, res.Pass, "%s passed without its evidence: %s", name, res.Summary)
		require.Contains(t, res.Summary, says, name)
	}
}

// requireEveryKind fails unless the table holds a step of every kind, a
// wait for every wait kind and a fault of every fault kind.
func requireEveryKind(t *testing.T, sc *scenario.Scenario) {
	t.Helper()
	steps, waits, kinds := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, st := range sc.Steps[1:] {
		steps[st.Kind()] = true
		if st.Wait != nil {
			waits[st.Wait.For] = true
		}
		if st.Fault != nil {
			kinds[st.Fault.Kind] = true
		}
	}
	var missing []string
	for _, k := range scenario.StepKinds {
		if !steps[k] {
			missing = append(missing, "step "+k)
		}
	}
	for _, k := range scenario.WaitKinds {
		if !waits[k] {
			missing = append(missing, "wait for "+k)
		}
	}
	for _, k := range faults.Kinds() {
		if !kinds[k.Name] {
			missing = append(missing, "fault "+k.Name)
		}
	}
	slices.Sort(missing)
	require.Empty(t, missing, "scenarios/testdata/broken-cluster.yaml lacks: %s", strings.Join(missing, ", "))
}
