package audit

import (
	"fmt"
	"strings"

	"github.com/oplogha/oplogha/harness/etcddump"
	"github.com/oplogha/oplogha/impl/keyspace"
	"github.com/oplogha/oplogha/impl/legacy"
	"github.com/oplogha/oplogha/impl/oplog"
	"github.com/oplogha/oplogha/impl/publish"
	"github.com/oplogha/oplogha/impl/state"
)

// KeyspaceOrder replays etcd's MVCC history of the namespace, revision by
// revision, and checks the OpLog protocol's ordering rules:
//   - the producer view only grows, and is always canonical;
//   - the durable prefix starts at the zero state or batch 1 and moves one
//     batch at a time, in the same revision as the put of exactly that batch,
//     whose sequence continues the previous prefix;
//   - a batch key is written once and never overwritten;
//   - a batch is deleted only when a compaction floor covering it was
//     committed at an earlier revision, and never the prefix's batch;
//   - the floor never decreases;
//   - the latest pointer's cursor only grows, and a fallback is only ever
//     written with the value latest held just before (rotation);
//   - a legacy import is recorded at most once, into a namespace whose
//     prefix was still zero, in one revision that moves the prefix to batch 1
//     at the record's sequence, puts the floor at 1 and the latest pointer
//     at that cursor, and writes no batch.
//
// Revisions the harness itself wrote (fault events' Revisions) are skipped.
func KeyspaceOrder(in *Input) Result {
	ks, err := keyspace.New(in.ClusterID)
	if err != nil {
		return Result{Summary: "bad cluster id", Evidence: []string{err.Error()}}
	}
	var ev evidence
	injected := map[int64]bool{}
	for _, e := range in.Events {
		for _, r := range e.Revisions {
			injected[r] = true
		}
	}
	var (
		view       uint64
		prefix     *oplog.DurablePrefix
		floor      uint64
		floorRev   int64
		hasFloor   bool
		batches    int
		deletes    int
		viewPuts   int
		prefixPuts int
		latestRaw  []byte
		latestCur  *state.Cursor
		pubs       int
		imports    int
	)
	events := in.Etcd
	for i := 0; i < len(events); {
		rev := events[i].Revision
		j := i
		for j < len(events) && events[j].Revision == rev {
			j++
		}
		group := events[i:j]
		i = j
		if injected[rev] {
			// The harness wrote this revision (injected corruption): it is not the
			// system's doing, but what the system does next must cope with it.
			for _, e := range group {
				if e.Key == ks.SnapshotLatest() {
					latestRaw = e.Value
				}
			}
			continue
		}
		var batchPuts []state.Batch
		var prefixPut *oplog.DurablePrefix
		var importPut *legacy.Marker
		prevLatest := latestRaw
		for _, e := range group {
			switch {
			case e.Key == ks.SnapshotLatest():
				if e.Type != "put" {
					ev.add("rev %d: latest pointer deleted", rev)
					continue
				}
				pubs++
				latestRaw = e.Value
				p, err := publish.DecodePointer(e.Value)
				if err != nil {
					ev.add("rev %d: latest pointer written malformed: %v", rev, err)
					continue
				}
				c := p.Cursor()
				if latestCur != nil && c.BatchID <= latestCur.BatchID {
					ev.add("rev %d: latest pointer regressed from batch %d to %d (%s)", rev, latestCur.BatchID, c.BatchID, p.SnapshotID)
				}
				latestCur = &c
			case e.Key == ks.SnapshotFallback():
				if e.Type != "put" {
					ev.add("rev %d: fallback pointer deleted", rev)
					continue
				}
				if prevLatest == nil || string(e.Value) != string(prevLatest) {
					ev.add("rev %d: fallback written with a value latest did not hold just before", rev)
				}
			case e.Key == ks.ProducerView():
				if e.Type != "put" {
					ev.add("rev %d: producer view deleted", rev)
					continue
				}
				v, err := oplog.DecodeProducerView(e.Value)
				if err != nil {
					ev.add("rev %d: producer view %q: %v", rev, e.Value, err)
					continue
				}
				if v <= view {
					ev.add("rev %d: producer view went from %d to %d (must grow)", rev, view, v)
				}
				view = v
				viewPuts++
			case e.Key == ks.DurablePrefix():
				if e.Type != "put" {
					ev.add("rev %d: durable prefix deleted", rev)
					continue
				}
				p, err := oplog.DecodeDurablePrefix(e.Value)
				if err != nil {
					ev.add("rev %d: durable prefix %q: %v", rev, e.Value, err)
					continue
				}
				prefixPut = &p
				prefixPuts++
			case e.Key == ks.LegacyImport():
				if e.Type != "put" {
					ev.add("rev %d: legacy import record deleted", rev)
					continue
				}
				if imports++; imports > 1 {
					ev.add("rev %d: a second legacy import record written", rev)
				}
				m, err := legacy.DecodeMarker(e.Value)
				if err != nil {
					ev.add("rev %d: legacy import record: %v", rev, err)
					continue
				}
				importPut = &m
			case e.Key == ks.CompactionFloor():
				if e.Type != "put" {
					ev.add("rev %d: compaction floor deleted", rev)
					continue
				}
				f, err := oplog.DecodeFloor(e.Value)
				if err != nil {
					ev.add("rev %d: compaction floor %q: %v", rev, e.Value, err)
					continue
				}
				if hasFloor && f.BatchID < floor {
					ev.add("rev %d: compaction floor decreased from %d to %d", rev, floor, f.BatchID)
				}
				floor, floorRev, hasFloor = f.BatchID, rev, true
			default:
				id, isBatch := ks.ParseBatch(e.Key)
				if !isBatch {
					if !strings.HasPrefix(e.Key, ks.Leader()) && !strings.HasPrefix(e.Key, ks.Root()+"/snapshot/") {
						ev.add("rev %d: unexpected key %s in the namespace", rev, e.Key)
					}
					continue
				}
				if e.Type == "delete" {
					deletes++
					switch {
					case !hasFloor:
						ev.add("rev %d: batch %d deleted while no compaction floor was published", rev, id)
					case id > floor:
						ev.add("rev %d: batch %d deleted above the floor %d (floor committed at rev %d)", rev, id, floor, floorRev)
					case floorRev >= rev:
						ev.add("rev %d: batch %d deleted in the revision that published the floor", rev, id)
					}
					if prefix != nil && id >= prefix.BatchID {
						ev.add("rev %d: batch %d deleted at or above the durable prefix %d", rev, id, prefix.BatchID)
					}
					continue
				}
				if e.Version != 1 {
					ev.add("rev %d: batch %d overwritten (version %d, created at rev %d)", rev, id, e.Version, e.CreateRevision)
				}
				b, err := oplog.DecodeBatch(e.Value)
				if err != nil {
					ev.add("rev %d: batch %d does not decode: %v", rev, id, err)
					continue
				}
				if b.ID != id {
					ev.add("rev %d: key of batch %d holds batch %d", rev, id, b.ID)
				}
				batchPuts = append(batchPuts, b)
				batches++
			}
		}
		if importPut != nil {
			checkImport(&ev, rev, importPut, prefix, prefixPut, len(batchPuts), floorRev == rev && floor == importPut.BatchID, latestCur, prevLatest, latestRaw)
			if prefixPut != nil {
				prefix = prefixPut
			}
			continue
		}
		// An append is one transaction: one batch and the prefix that names it.
		switch {
		case prefixPut == nil && len(batchPuts) > 0:
			ev.add("rev %d: batch %d written without moving the durable prefix", rev, batchPuts[0].ID)
		case prefixPut != nil && prefixPut.BatchID == 0:
			if prefix != nil || len(batchPuts) > 0 {
				ev.add("rev %d: durable prefix reset to the zero state", rev)
			}
			prefix = prefixPut
		case prefixPut != nil:
			if len(batchPuts) != 1 || batchPuts[0].ID != prefixPut.BatchID || batchPuts[0].LastSeq != prefixPut.LastSeq {
				ev.add("rev %d: durable prefix moved to batch %d seq %d without exactly that batch in the same transaction (%d batch puts)", rev, prefixPut.BatchID, prefixPut.LastSeq, len(batchPuts))
			}
			var last oplog.DurablePrefix
			if prefix != nil {
				last = *prefix
			}
			if prefixPut.BatchID != last.BatchID+1 {
				ev.add("rev %d: durable prefix jumped from batch %d to %d", rev, last.BatchID, prefixPut.BatchID)
			}
			if len(batchPuts) == 1 && batchPuts[0].FirstSeq != last.LastSeq+1 {
				ev.add("rev %d: batch %d starts at seq %d, the prefix before it ended at %d", rev, batchPuts[0].ID, batchPuts[0].FirstSeq, last.LastSeq)
			}
			prefix = prefixPut
		}
	}
	summary := fmt.Sprintf("%d revisions of history: %d batch appends, %d view claims, %d prefix moves, %d batch deletes, %d pointer publications", len(distinctRevs(events)), batches, viewPuts, prefixPuts, deletes, pubs)
	if imports > 0 {
		summary += fmt.Sprintf(", %d legacy import", imports)
	}
	if len(events) == 0 {
		ev.add("no etcd history in the bundle")
	}
	return Result{Pass: ev.empty(), Summary: summary, Evidence: ev.list()}
}

// checkImport checks the revision that recorded a legacy import: it moved
// the prefix from the zero state straight to the import cursor, published
// the floor at batch 1 and the latest pointer at the cursor, and wrote no
// batch.
func checkImport(ev *evidence, rev int64, m *legacy.Marker, before, after *oplog.DurablePrefix, batchPuts int, floorPut bool, latest *state.Cursor, prevLatest, latestRaw []byte) {
	if before != nil && before.BatchID != 0 {
		ev.add("rev %d: legacy import recorded after the durable prefix reached batch %d", rev, before.BatchID)
	}
	if after == nil || after.BatchID != m.BatchID || after.LastSeq != m.LastSeq {
		ev.add("rev %d: legacy import recorded without moving the durable prefix to batch %d seq %d", rev, m.BatchID, m.LastSeq)
	}
	if batchPuts > 0 {
		ev.add("rev %d: legacy import wrote %d batch keys", rev, batchPuts)
	}
	if !floorPut {
		ev.add("rev %d: legacy import did not publish the compaction floor at batch %d in the same revision", rev, m.BatchID)
	}
	if string(prevLatest) == string(latestRaw) || latest == nil || *latest != (state.Cursor{BatchID: m.BatchID, Seq: m.LastSeq}) {
		ev.add("rev %d: legacy import did not publish the latest pointer at batch %d seq %d", rev, m.BatchID, m.LastSeq)
	} else if p, err := publish.DecodePointer(latestRaw); err != nil || p.SnapshotID != m.SnapshotID {
		ev.add("rev %d: legacy import record names snapshot %s, the latest pointer another", rev, m.SnapshotID)
	}
}

func distinctRevs(events []etcddump.Event) map[int64]bool {
	m := map[int64]bool{}
	for _, e := range events {
		m[e.Revision] = true
	}
	return m
}
