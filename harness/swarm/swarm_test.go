package swarm

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/faults"
	"github.com/oplogha/oplogha/harness/audit"
	"github.com/oplogha/oplogha/harness/masterkind"
	"github.com/oplogha/oplogha/harness/scenario"
)

// The same (seed, run) draws the same scenario, byte for byte; other runs
// draw others; over many runs every move of the menu is drawn.
func TestDrawIsDeterministicAndCoversTheMenu(t *testing.T) {
	a, err := Draw(42, 7)
	require.NoError(t, err)
	b, err := Draw(42, 7)
	require.NoError(t, err)
	ya, _ := a.Marshal()
	yb, _ := b.Marshal()
	require.Equal(t, string(ya), string(yb))
	c, err := Draw(42, 8)
	require.NoError(t, err)
	yc, _ := c.Marshal()
	require.NotEqual(t, string(ya), string(yc))

	seen, legacy := map[string]int{}, map[string]int{}
	shapes := map[[2]int]bool{}
	for i := 0; i < 300; i++ {
		sc, err := Draw(1, i)
		require.NoError(t, err, "run %d", i)
		require.Equal(t, "swarm", sc.Tier)
		require.NotEmpty(t, sc.Steps)
		shapes[[2]int{sc.Cluster.Etcd, sc.Cluster.Masters}] = true
		if li := sc.Cluster.LegacyImport; li != nil {
			legacy[strings.TrimPrefix(li.Root, "fixtures/legacy/")]++
		}
		for _, m := range Moves() {
			if strings.Contains(sc.Description, m+" ") || strings.Contains(sc.Description, m+"]") {
				seen[m]++
			}
		}
	}
	// The widest cluster the swarm draws: a kind unavailable even there
	// needs what a swarm run never has (docker's addresses, mount rights).
	widest := faults.Shape{Etcd: 3, Masters: 3, Snapshots: true, Retention: true, StoreFiles: true, PeerPairs: true}
	for _, m := range Moves() {
		if k, ok := faults.Lookup(m); ok && k.Available(widest) != nil {
			require.Zero(t, seen[m], "move %s drawn where it cannot apply", m)
			continue
		}
		require.Positive(t, seen[m], "move %s never drawn in 300 runs", m)
	}
	for _, f := range []string{"small", "zero-cursor", "empty", "offloaded"} {
		require.Positive(t, legacy[f], "no run in 300 imports legacy fixture %s", f)
	}
	require.Len(t, shapes, 4, "1 or 3 etcd members × 2 or 3 masters")
}

// The menu holds a move for every fault kind the registry draws, by the
// kind's name: a kind joins the swarm by being registered.
func TestMenuHasEveryKindTheRegistryDraws(t *testing.T) {
	moves := Moves()
	for _, k := range faults.Kinds() {
		if k.NotDrawn != "" {
			require.NotContains(t, moves, k.Name)
			continue
		}
		require.Contains(t, moves, k.Name)
	}
}

// TestWindowMovesExpectTheirWindow: a run that draws a move named for a
// counted window expects that window, so minimum-work fails it if it never
// got there; a run expects no window it drew no move for; every window
// move is drawn somewhere.
func TestWindowMovesExpectTheirWindow(t *testing.T) {
	drawn := map[string]int{}
	for i := range 200 {
		sc, err := Draw(7, i)
		require.NoError(t, err)
		_, list, _ := strings.Cut(sc.Description, "moves [")
		list, _, _ = strings.Cut(list, "]")
		moves := strings.Fields(list)
		var want []string
		for _, name := range moves {
			drawn[name]++
			id := name
			if w, ok := aimedAt[name]; ok {
				id = w
			}
			if w, ok := audit.WindowByID(id); ok && w.Count != nil && !slices.Contains(want, id) {
				want = append(want, id)
			}
		}
		require.ElementsMatch(t, want, sc.Expect.Windows, sc.Name)
	}
	for _, id := range []string{"long-replay", "promotion-catch-up", "deposed-reads", "foreign-batch-at-id", "stale-publisher"} {
		require.Positive(t, drawn[id], "no run of 200 drew %s", id)
	}
}

// TestLongReplayRestoresTheDrawnInterval: the long-replay move stops
// publication with an hour's interval and gives the run back the interval
// it drew, never a placeholder.
func TestLongReplayRestoresTheDrawnInterval(t *testing.T) {
	restored := 0
	for i := range 200 {
		sc, err := Draw(7, i)
		require.NoError(t, err)
		for _, st := range sc.Steps {
			if st.Restart == nil || st.Restart.Config == nil {
				continue
			}
			v, ok := st.Restart.Config["snapshot_interval_seconds"]
			if !ok || v == 3600 {
				continue
			}
			require.Equal(t, sc.Cluster.Config["snapshot_interval_seconds"], v, sc.Name)
			restored++
		}
	}
	require.Positive(t, restored)
}

// TestDrawForUpstreamTakesOnlyWhatItCan: a swarm for upstream's master
// draws only scenarios it can run (nothing its kind lacks: no snapshot
// store, project keys, cursor waits, failpoints it has not), the same for
// the same seed, and over many runs every move of its menu — its three
// failpoints held and crashed, process and network faults, quorum loss,
// supervised clusters.
func TestDrawForUpstreamTakesOnlyWhatItCan(t *testing.T) {
	up := masterkind.Mooncake()
	menu := Menu(up)
	for _, want := range []string{"kill", "pause", "stop", "restart", "toxic", "link-down", "blackhole", "compact-defrag",
		"crash-after-append", "crash-before-append", "crash-before-serve", "zombie-append", "quorum-loss"} {
		require.Contains(t, menu, want)
	}
	for _, never := range []string{"slow-apply", "crash-before-cas", "deposed-reads", "foreign-batch-at-id", "promotion-catch-up",
		"long-replay", "stale-publisher", "revoke-lease", "corrupt-pointer", "corrupt-snapshot"} {
		require.NotContains(t, menu, never)
	}
	a, err := DrawFor(43, 5, up)
	require.NoError(t, err)
	b, err := DrawFor(43, 5, up)
	require.NoError(t, err)
	ya, _ := a.Marshal()
	yb, _ := b.Marshal()
	require.Equal(t, string(ya), string(yb))

	seen := map[string]int{}
	for i := range 300 {
		sc, err := DrawFor(43, i, up)
		require.NoError(t, err, "run %d", i)
		require.Empty(t, up.Missing(sc.Requires()), sc.Name)
		require.Empty(t, sc.Cluster.S3, sc.Name)
		require.Empty(t, sc.Cluster.Config, sc.Name)
		_, list, _ := strings.Cut(sc.Description, "moves [")
		list, _, _ = strings.Cut(list, "]")
		for _, m := range strings.Fields(list) {
			seen[m]++
		}
		for _, w := range sc.Expect.Windows {
			require.Contains(t, []string{"zombie-primary", "crash-before-append"}, w,
				"%s expects a window upstream's master is not known to reach countably", sc.Name)
		}
	}
	for _, m := range menu {
		require.Positive(t, seen[m], "move %s never drawn in 300 runs", m)
	}
	require.Positive(t, seen["supervised"])
	require.Positive(t, seen["restart-all"])
}

// TestSupervisedRunsWaitForAnyPrimary: under a supervisor a node whose
// process a fault ended is restarted at once and may win again, so no
// drawn wait insists on a primary other than it, or on it being a
// standby; and no node is crashed at a failpoint (it would be back before
// a wait could tell it crashed).
func TestSupervisedRunsWaitForAnyPrimary(t *testing.T) {
	supervisedRuns := 0
	for i := range 300 {
		sc, err := DrawFor(43, i, masterkind.Mooncake())
		require.NoError(t, err)
		if sc.Cluster.Supervisor == nil {
			continue
		}
		supervisedRuns++
		ended := map[string]bool{}
		for _, st := range sc.Steps {
			if f := st.Fault; f != nil && f.Kind == "failpoint" {
				require.NotEqual(t, "panic", masterkind.TermForm(f.Term), "%s crashes at a failpoint under a supervisor", sc.Name)
			}
			if f := st.Fault; f != nil && (f.Kind == "kill" || f.Kind == "stop" || f.Kind == "restart") {
				ended[st.As] = true
			}
			if w := st.Wait; w != nil {
				require.False(t, ended[w.Excluding], "%s waits for a primary other than %s, which its supervisor restarts", sc.Name, w.Excluding)
				require.False(t, w.For == "role" && ended[w.Node] && w.Role == "standby", "%s waits for %s to be a standby", sc.Name, w.Node)
			}
		}
	}
	require.Positive(t, supervisedRuns)
}

// A run's moves leave every master they ended back up: after a fault that
// ends a master's process (kill, stop, restart, a panic at a failpoint) or
// a restart of every master, the run waits for that master to be a primary
// or a standby again before it goes on. Without the wait, the next move's
// fault on "standby" found no node while a restarted one was starting
// (swarm seed 50, runs 20 and 32: "fault not available").
func TestEveryMoveWaitsForTheMastersItEnded(t *testing.T) {
	for _, k := range []masterkind.Kind{masterkind.Reference(), masterkind.Mooncake()} {
		checked := 0
		for i := range 300 {
			sc, err := DrawFor(50, i, k)
			require.NoError(t, err)
			for j, st := range sc.Steps {
				var ended []string
				if f := st.Fault; f != nil && !strings.HasPrefix(f.Target, "etcd") &&
					(f.Kind == "kill" || f.Kind == "stop" || f.Kind == "restart" || f.Kind == "failpoint" && masterkind.TermForm(f.Term) == "panic") {
					ended = []string{st.As}
				}
				if rs := st.Restart; rs != nil && rs.Target == "all-masters" {
					for m := range sc.Cluster.Masters {
						ended = append(ended, "master-"+strconv.Itoa(m))
					}
				}
				for _, node := range ended {
					checked++
					waited := slices.ContainsFunc(sc.Steps[j+1:], func(later scenario.Step) bool {
						w := later.Wait
						return w != nil && w.For == "role" && w.Node == node && (w.Role == "up" || w.Role == "standby")
					})
					require.True(t, waited, "%s step %d ends %s and nothing waits for it to be back up", sc.Name, j, node)
				}
			}
		}
		require.Positive(t, checked)
	}
}
