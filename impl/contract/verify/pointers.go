package verify

import (
	"context"
	"fmt"
	"strings"

	"github.com/oplogha/oplogha/impl/contract/keyspace"

	"github.com/oplogha/oplogha/impl/contract/batchsnap"
)

// judgePointers holds each decoded pointer to the OpLog, the floor, the
// other pointer and, with a store, the snapshot it names (read by exact
// keys, as a recovering node reads it: batchsnap.Open).
func judgePointers(ctx context.Context, rep *Report, ks keyspace.Keyspace, h *head, s *scan, opt Options) error {
	if opt.Store != nil {
		rep.Store = opt.Store.Name()
	}
	var decoded []*slot
	for i := range h.slots {
		sl := &h.slots[i]
		if sl.p == nil {
			continue
		}
		decoded = append(decoded, sl)
		p := sl.p
		pr := Pointer{Slot: sl.name, SnapshotID: p.SnapshotID, BatchID: p.LastIncludedBatchID, Seq: p.LastIncludedSeq}
		if h.prefixOK && p.LastIncludedBatchID > h.prefix.BatchID {
			rep.violate(sl.key, "%s pointer names batch %d, beyond the durable prefix %d", sl.name, p.LastIncludedBatchID, h.prefix.BatchID)
		}
		if last := s.wanted[p.LastIncludedBatchID]; last != 0 && last != p.LastIncludedSeq {
			rep.violate(sl.key, "%s pointer's cursor is batch %d seq %d, but that batch record ends at seq %d", sl.name, p.LastIncludedBatchID, p.LastIncludedSeq, last)
		}
		if h.view > 0 && p.ProducerViewVersion > h.view {
			rep.violate(sl.key, "%s pointer was written under producer view %d, newer than the current view %d", sl.name, p.ProducerViewVersion, h.view)
		}
		if h.floorOK && h.floor > p.LastIncludedBatchID {
			rep.violate(ks.CompactionFloor(), "the compaction floor %d is above the %s snapshot's batch %d: batches its recovery "+
				"replays may be gone", h.floor, sl.name, p.LastIncludedBatchID)
		}
		if root := strings.TrimRight(opt.ObjectRoot, "/"); root != "" && p.Root() != root {
			pr.Error = fmt.Sprintf("names a descriptor at %q, outside the cluster's snapshot root %q", p.DescriptorKey, root)
			rep.violate(sl.key, "%s pointer %s", sl.name, pr.Error)
		} else if opt.Store != nil {
			_, err := batchsnap.Open(ctx, opt.Store, *p)
			if ctx.Err() != nil {
				return fmt.Errorf("open the %s snapshot: %w", sl.name, ctx.Err())
			}
			if err != nil {
				pr.Error = err.Error()
				rep.violate(sl.key, "%s snapshot %s does not verify: %v", sl.name, p.SnapshotID, err)
			} else {
				pr.Opened = true
			}
		}
		rep.Pointers = append(rep.Pointers, pr)
	}
	if len(decoded) == 2 && decoded[0].p.LastIncludedBatchID < decoded[1].p.LastIncludedBatchID {
		rep.violate(decoded[0].key, "latest pointer (batch %d) is older than fallback (batch %d)", decoded[0].p.LastIncludedBatchID, decoded[1].p.LastIncludedBatchID)
	}
	if h.floorOK && h.floor > 0 && len(decoded) == 0 {
		rep.violate(ks.CompactionFloor(), "compaction floor %d with no readable snapshot pointer: nothing covers the batches it let go", h.floor)
	}
	return nil
}
