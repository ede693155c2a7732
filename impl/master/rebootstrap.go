package master

import (
	"context"
	"fmt"
	"time"

	"github.com/oplogha/oplogha/impl/oplog"
	"github.com/oplogha/oplogha/impl/publish"
)

// rebootstrapIfBelowFloor handles a gap met by the apply loop (RFC N08). If
// the local cursor is below the compaction floor, the batches it needs were
// pruned legitimately: the standby stops ordinary apply, loads a valid
// pointer snapshot at or beyond the floor into a temporary context, replays
// the suffix, and only then replaces its state. It never skips to the floor;
// with no usable snapshot it stays as it is and reports the gap. A gap above
// the floor is corruption, returned as is.
func (m *Master) rebootstrapIfBelowFloor(ctx context.Context, gap error) error {
	floor, err := m.readFloor(ctx)
	if err != nil {
		return fmt.Errorf("%w (and the floor could not be read: %v)", gap, err)
	}
	cur := m.cursor()
	if cur.BatchID >= floor {
		return gap
	}
	if m.store == nil {
		return fmt.Errorf("%w: cursor batch %d below floor %d and no snapshot store to rebootstrap from", gap, cur.BatchID, floor)
	}
	start := time.Now()
	o, err := publish.Observe(ctx, m.cli, m.ks)
	if err != nil {
		return err
	}
	r := m.oplogReader()
	var why []string
	for _, slot := range []struct {
		name string
		s    publish.Slot
	}{{"latest", o.Latest}, {"fallback", o.Fallback}} {
		if !slot.s.Valid() {
			continue
		}
		p := slot.s.Pointer
		if p.LastIncludedBatchID < floor || p.LastIncludedBatchID <= cur.BatchID {
			why = append(why, fmt.Sprintf("%s at batch %d does not cover floor %d", slot.name, p.LastIncludedBatchID, floor))
			continue
		}
		st, _, err := m.restore(ctx, *p)
		var head oplog.Head
		if err == nil {
			hit(fpRebootstrapAfterRestore)
			head, err = r.Scan(ctx, st.Cursor(), st.Apply)
		}
		if err != nil {
			why = append(why, fmt.Sprintf("%s %s: %v", slot.name, p.SnapshotID, err))
			continue
		}
		// Nothing else writes the state while the apply loop runs: swap it whole.
		m.mu.Lock()
		m.st = st
		m.mu.Unlock()
		m.noteApplied(st.Cursor())
		m.noteDurable(head.Prefix)
		m.m.rebootstraps.Inc()
		m.log.Warn("rebootstrapped below the floor", "phase", "rebootstrap", "code", "below_floor", "slot", slot.name, "snapshot_id", p.SnapshotID,
			"from_cursor", cur.String(), "floor", floor, "cursor", st.Cursor().String(), "duration_ms", time.Since(start).Milliseconds())
		return nil
	}
	return fmt.Errorf("%w: cursor batch %d below floor %d and no valid snapshot covers it (%v)", gap, cur.BatchID, floor, why)
}
