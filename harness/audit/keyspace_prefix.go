package audit

import (
	"fmt"
	"strings"

	"github.com/oplogha/oplogha/impl/contract/batchsnap"
)

// The keyspace-order invariants that relate the records to the durable
// prefix and to the pointers, judged after every revision the system
// wrote that touches one of them.

// judgePrefixCovers: neither the compaction floor nor a pointer names a
// batch (or, for a pointer, a sequence id) above the durable prefix. A
// prefix the harness deleted (a lost history) is not judged against.
func (r *replay) judgePrefixCovers(c *change) {
	if r.prefix == nil {
		return
	}
	p := *r.prefix
	r.n["prefix-covers"]++
	if r.hasFloor && r.floor > p.BatchID {
		r.add("prefix-covers", c.rev, "compaction floor %d is above the durable prefix's batch %d", r.floor, p.BatchID)
	}
	for _, s := range []struct {
		name string
		s    slot
	}{{"latest", r.latest}, {"fallback", r.fallback}} {
		if q := s.s.p; q != nil && (q.LastIncludedBatchID > p.BatchID || q.LastIncludedSeq > p.LastSeq) {
			r.add("prefix-covers", c.rev, "%s pointer %s at batch %d seq %d is above the durable prefix (batch %d seq %d)", s.name, q.SnapshotID,
				q.LastIncludedBatchID, q.LastIncludedSeq, p.BatchID, p.LastSeq)
		}
	}
}

// judgeZeroPrefixAlone: while the durable prefix is zero, the namespace
// holds nothing a zero state cannot: no batch, floor, pointer or import
// record, and no view older than the zero prefix itself.
func (r *replay) judgeZeroPrefixAlone(c *change) {
	if r.prefix == nil || r.prefix.BatchID != 0 {
		return
	}
	r.n["zero-prefix-alone"]++
	var held []string
	if r.viewSet && r.viewRev < r.zeroRev {
		held = append(held, fmt.Sprintf("producer view %d (written at rev %d, before the zero prefix at rev %d)", r.view, r.viewRev, r.zeroRev))
	}
	if len(r.batches) > 0 {
		held = append(held, fmt.Sprintf("%d batch keys", len(r.batches)))
	}
	if r.hasFloor {
		held = append(held, fmt.Sprintf("compaction floor %d", r.floor))
	}
	if r.latest.raw != nil || r.fallback.raw != nil {
		held = append(held, "snapshot pointers")
	}
	if r.imported {
		held = append(held, "a legacy import record")
	}
	if len(held) > 0 {
		r.add("zero-prefix-alone", c.rev, "the durable prefix is zero while the namespace holds %s", strings.Join(held, ", "))
	}
}

// judgeDeleteUnderPointers: a batch is deleted only at or below the older
// valid pointer's last batch, so both protected snapshots can be replayed
// to the prefix; with no valid pointer (unless the harness damaged them),
// nothing may be deleted.
func (r *replay) judgeDeleteUnderPointers(c *change) {
	var older *batchsnap.Pointer
	for _, p := range []*batchsnap.Pointer{r.latest.p, r.fallback.p} {
		if p != nil && (older == nil || p.LastIncludedBatchID < older.LastIncludedBatchID) {
			older = p
		}
	}
	for _, id := range c.deletes {
		r.n["delete-under-pointers"]++
		switch {
		case older == nil && !r.latest.injected && !r.fallback.injected:
			r.add("delete-under-pointers", c.rev, "batch %d deleted while neither pointer was valid (%s)", id, invalidSlots(r.latest, r.fallback))
			return
		case older != nil && id > older.LastIncludedBatchID:
			r.add("delete-under-pointers", c.rev, "batch %d deleted above the older valid pointer %s at batch %d", id, older.SnapshotID,
				older.LastIncludedBatchID)
		}
	}
}
