package audit

import (
	"time"

	"github.com/oplogha/oplogha/impl/contract/batchsnap"
	"github.com/oplogha/oplogha/impl/contract/keyspace"
)

// Publication backoff, judged from the object store's record: a publisher
// whose attempts fail in a row (each a candidate no pointer ever names)
// must space them out, each failure doubling its wait from one scheduler
// tick (at least 200 ms) — so once four have failed in a row, the attempts
// that follow are at least 8 ticks, 1.6 s, apart until one publishes. A
// metric that reports a backoff proves nothing about the attempts; the
// store's own log of the candidates' first writes does. Its times are
// whole seconds, so two attempts i < j of the judged run must lie more than
// 1.6 s × (j−i) − 1 s apart in it.
const (
	backoffJudgedAfter = 4   // failures in a row before the attempts are judged
	backoffMinGap      = 1.6 // seconds: 8 ticks of the smallest tick
)

// judgeBackoff checks publication-backoff; it returns how many attempts it
// judged. Each candidate is tied to its publisher through the maintenance
// lease its id names (the node in the token that lease put); one whose
// lease the history does not show is put with the others of unknown node.
func judgeBackoff(in *Input, ev *evidence) int {
	ks, err := keyspace.New(in.ClusterID)
	if err != nil {
		return 0
	}
	type attempt struct {
		id string
		at int64
	}
	seen := map[string]bool{}
	var attempts []attempt
	for _, q := range in.Objects.Access.Requests {
		if !storeWrites[q.Op] || q.Status < 200 || q.Status > 299 {
			continue
		}
		_, id, _, ok := batchsnap.ParseArtifactKey(q.Key)
		if !ok || seen[id.String()] {
			continue
		}
		seen[id.String()] = true
		attempts = append(attempts, attempt{id.String(), q.At})
	}
	named := map[string]bool{}
	nodeOf := map[int64]string{}
	for _, e := range etcdByRevision(in) {
		if e.Type != "put" {
			continue
		}
		switch e.Key {
		case ks.SnapshotLatest(), ks.SnapshotFallback():
			if p, err := batchsnap.DecodePointer(e.Value); err == nil {
				named[p.SnapshotID] = true
			}
		case ks.SnapshotMaintenance():
			if node, lease, ok := parseToken(string(e.Value)); ok {
				nodeOf[lease] = node
			}
		}
	}
	type streak struct {
		failures int
		judged   []attempt // the attempts after the first backoffJudgedAfter failures
	}
	streaks := map[string]*streak{}
	judged := 0
	for _, a := range attempts {
		id, _ := batchsnap.ParseID(a.id)
		node := nodeOf[id.Lease]
		s := streaks[node]
		if s == nil {
			s = &streak{}
			streaks[node] = s
		}
		if s.failures >= backoffJudgedAfter && a.at > 0 {
			judged++
			for i, b := range s.judged {
				gaps := len(s.judged) - i
				if b.at > 0 && float64(a.at-b.at) <= backoffMinGap*float64(gaps)-1 {
					who := node
					if who == "" {
						who = "a publisher the history does not name"
					}
					ev.add("[publication-backoff] snapshot %s (first written at %s): %d attempts of %s after %s (first written %ds before) "+
						"with %d failures in a row before them, so at least %.1fs apart in all: the attempts are not held back",
						a.id, unixClock(a.at), gaps, who, b.id, a.at-b.at, s.failures, backoffMinGap*float64(gaps))
					break
				}
			}
			s.judged = append(s.judged, a)
		}
		if named[a.id] {
			streaks[node] = &streak{}
			continue
		}
		s.failures++
	}
	return judged
}

// unixClock is a Unix second as the store's log gave it, for evidence.
func unixClock(sec int64) string {
	return time.Unix(sec, 0).UTC().Format("15:04:05")
}
