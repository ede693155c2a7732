package audit

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/harness/history"
)

// TestWhatWasNotReadCannotBeJudged: an audit whose evidence the harness
// could not read at the end fails saying so — it never passes on the
// empty history an unreachable etcd leaves, and never judges a master it
// could not read; the audits that read none of it still judge.
func TestWhatWasNotReadCannotBeJudged(t *testing.T) {
	ops := []history.Op{op(history.Put, "k", history.OK, 1, 2)}
	byName := func(rs []Result) map[string]Result {
		out := map[string]Result{}
		for _, r := range rs {
			out[r.Name] = r
		}
		return out
	}
	for name, tc := range map[string]struct {
		unread      Unread
		cannot, can []string
		says        string
	}{
		"etcd": {Unread{EvidenceEtcd: "read the namespace: context deadline exceeded"},
			[]string{"durable-acknowledgement", "keyspace-order", "convergence", "recovered-state", "snapshot-content", "objects", "operator-verify"},
			[]string{"linearizability", "log-audit", "acknowledged-data"},
			"etcd unreachable at the end of the run: cannot judge (read the namespace: context deadline exceeded)"},
		"store": {Unread{EvidenceStore: "list: timeout"},
			[]string{"objects", "snapshot-content", "operator-verify"},
			[]string{"durable-acknowledgement", "linearizability"},
			"store unreachable at the end of the run: cannot judge (list: timeout)"},
		"a master": {Unread{"node master-1": "health: no answer"},
			[]string{"acknowledged-data", "convergence", "recovered-state", "recovery-source"},
			[]string{"linearizability", "keyspace-order"},
			"a master unreadable at the end of the run: cannot judge (master-1: health: no answer)"},
	} {
		t.Run(name, func(t *testing.T) {
			rs := byName(Run(&Input{Ops: ops, Nodes: []Node{nodeWith(map[string]uint64{"k": 10})}, Unread: tc.unread}))
			for _, a := range tc.cannot {
				require.False(t, rs[a].Pass, "%s judged without its evidence", a)
				require.Contains(t, rs[a].Summary, tc.says, a)
			}
			for _, a := range tc.can {
				require.NotContains(t, rs[a].Summary, "cannot judge", "%s reads none of what was missing", a)
			}
		})
	}
}

// TestAWindowCannotBeJudgedWithoutEtcd: the windows are counted from
// etcd's history; without it minimum-work says it cannot judge them, not
// that they were never reached.
func TestAWindowCannotBeJudgedWithoutEtcd(t *testing.T) {
	in := &Input{Ops: []history.Op{op(history.Put, "k", history.OK, 1, 2)}, Expect: Expect{MinOKOps: 1, Windows: []string{"zombie-primary"}}}
	r := MinimumWork(in)
	require.False(t, r.Pass)
	require.Contains(t, evidence0(r), "never reached")
	in.Unread = Unread{EvidenceEtcd: "read the namespace: context deadline exceeded"}
	r = MinimumWork(in)
	require.False(t, r.Pass)
	require.NotContains(t, evidence0(r), "never reached")
	require.Contains(t, evidence0(r), "window zombie-primary: etcd unreachable at the end of the run: cannot judge")
}
