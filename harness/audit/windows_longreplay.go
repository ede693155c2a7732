package audit

import (
	"sort"
	"strings"

	"github.com/oplogha/oplogha/harness/etcddump"
	"github.com/oplogha/oplogha/impl/contract/batchlog"
	"github.com/oplogha/oplogha/impl/contract/batchsnap"
	"github.com/oplogha/oplogha/impl/contract/keyspace"
)

// longReplayPages is how many of the reader's pages a replay must span to
// be long: a replay of one or two pages never reuses a page's buffers, never
// reads a page while it applies the one two before, never holds a scan
// open across more than two etcd round trips.
const longReplayPages = 3

// rebootstrapAfterRestore is the failpoint a rebootstrap passes once it
// has restored a snapshot, before it replays the suffix (its pointer was
// read before it).
const rebootstrapAfterRestore = "rebootstrapAfterRestore"

// countLongReplay counts window 2, by form and by whether the OpLog below
// was pruned (a floor above 0). Each form is counted only where what the
// run left behind proves the replay spanned at least longReplayPages of
// the reader's page (Input.ReadPageSize):
//
//   - bootstrap: at each start of masters the harness ended, the batches
//     above the newest pointer that decodes (latest, else fallback, else
//     none: from batch 1) up to the durable prefix — fewer than any
//     bootstrap then replays, since none can restore a snapshot newer than
//     the newest pointer;
//   - promotion catch-up: a node elected (its candidacy became the oldest
//     in etcd's history) while its applier was held, with the durable
//     prefix then that many batches above the prefix at the hold's hit —
//     its cursor was at or below that, it applied nothing until the hold
//     was healed after its election, and it must reach the prefix before
//     it serves;
//   - rebootstrap: a hit of rebootstrapAfterRestore (a snapshot restored
//     below the floor, suffix not yet replayed), with the durable prefix
//     at the hit that many batches above the newest pointer that decodes
//     then — the snapshot it restored was read before the hit.
//
// A standby's ordinary catch-up after a pause is none of these.
func countLongReplay(in *Input) map[string]int {
	out := map[string]int{}
	for _, r := range longReplays(in) {
		out[r.form]++
	}
	return out
}

// longReplayPagesRead is window 2's extent: for each form, the most reader
// pages one counted replay read — at least, from the fewest batches it can
// have replayed (a replay of n batches reads ceil(n / page) pages).
func longReplayPagesRead(in *Input) map[string]int {
	out := map[string]int{}
	for _, r := range longReplays(in) {
		pages := int((r.batches + uint64(in.ReadPageSize) - 1) / uint64(in.ReadPageSize))
		key := "most pages in one " + r.form
		out[key] = max(out[key], pages)
	}
	return out
}

// longReplay is one counted replay: its form and the fewest batches it
// can have replayed.
type longReplay struct {
	form    string
	batches uint64
}

// longReplays are the replays countLongReplay counts.
func longReplays(in *Input) []longReplay {
	var out []longReplay
	if in.ReadPageSize <= 0 {
		return out
	}
	long := uint64(longReplayPages * in.ReadPageSize)
	pruned := func(values map[string][]byte, ks keyspace.Keyspace) string {
		if f, err := batchsnap.DecodeFloor(values[ks.CompactionFloor()]); err == nil && f.BatchID > 0 {
			return "OpLog pruned"
		}
		return "OpLog complete"
	}
	keysAt(in, func(s start, ns *namespaceAt) {
		raw, ok := ns.values[ns.ks.DurablePrefix()]
		if !ok {
			return
		}
		p, err := batchlog.DecodeDurablePrefix(raw)
		if err != nil {
			return
		}
		if base := newestPointerBatch(ns.values, ns.ks); p.BatchID >= base+long {
			for range s.nodes {
				out = append(out, longReplay{"bootstrap, " + pruned(ns.values, ns.ks), p.BatchID - base})
			}
		}
	})
	ks, err := keyspace.New(in.ClusterID)
	if err != nil {
		return out
	}
	holds := applierHolds(in)
	var rebootstraps []int64 // the hits' revisions
	for _, e := range in.Events {
		if e.Kind == "hit" && e.Name == rebootstrapAfterRestore && e.EtcdRevision > 0 {
			rebootstraps = append(rebootstraps, e.EtcdRevision)
		}
	}
	sort.Slice(rebootstraps, func(i, j int) bool { return rebootstraps[i] < rebootstraps[j] })
	if len(holds) == 0 && len(rebootstraps) == 0 {
		return out
	}
	evs := etcdByRevision(in)
	values := map[string][]byte{}
	var prefix uint64
	elec := newCaptureTrack(in.Advertised)
	leaderKey := ""
	counted := map[*applierHold]bool{}
	// settle counts the rebootstrap hits at or below rev, once every event
	// up to rev is applied.
	settle := func(rev int64) {
		for len(rebootstraps) > 0 && rebootstraps[0] <= rev {
			if base := newestPointerBatch(values, ks); prefix >= base+long {
				out = append(out, longReplay{"rebootstrap, " + pruned(values, ks), prefix - base})
			}
			rebootstraps = rebootstraps[1:]
		}
	}
	for i := 0; i < len(evs); {
		rev := evs[i].Revision
		settle(rev - 1)
		bindHolds(holds, rev, prefix)
		for ; i < len(evs) && evs[i].Revision == rev; i++ {
			e := evs[i]
			switch {
			case strings.HasPrefix(e.Key, ks.LeaderCandidates()):
				elec.elect([]etcddump.Event{e})
			case e.Key == ks.DurablePrefix() || e.Key == ks.CompactionFloor() || e.Key == ks.SnapshotLatest() || e.Key == ks.SnapshotFallback():
				if e.Type != "put" {
					delete(values, e.Key)
					continue
				}
				values[e.Key] = append([]byte{}, e.Value...)
				if e.Key == ks.DurablePrefix() {
					if p, err := batchlog.DecodeDurablePrefix(e.Value); err == nil {
						prefix = p.BatchID
					}
				}
			}
		}
		lead := elec.leader()
		if lead == nil || lead.key == leaderKey {
			continue
		}
		leaderKey = lead.key
		node, ok := in.Advertised[lead.url]
		if !ok {
			continue
		}
		for _, h := range holds {
			if h.node == node && h.bounded && !counted[h] && h.from < rev && rev <= h.to && prefix >= h.bound+long {
				counted[h] = true
				out = append(out, longReplay{"promotion catch-up, " + pruned(values, ks), prefix - h.bound})
			}
		}
	}
	settle(1<<63 - 1)
	return out
}

// newestPointerBatch is the batch of the newest pointer that decodes
// (latest or fallback; 0: none).
func newestPointerBatch(values map[string][]byte, ks keyspace.Keyspace) uint64 {
	var base uint64
	for _, key := range []string{ks.SnapshotLatest(), ks.SnapshotFallback()} {
		if ptr, err := batchsnap.DecodePointer(values[key]); err == nil {
			base = max(base, ptr.LastIncludedBatchID)
		}
	}
	return base
}
