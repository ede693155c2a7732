package master

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/oplogha/oplogha/impl/objstore"
	"github.com/oplogha/oplogha/impl/oplog"
	"github.com/oplogha/oplogha/impl/publish"
	"github.com/oplogha/oplogha/impl/snapshot"
	"github.com/oplogha/oplogha/impl/state"
)

// bootstrap builds the local state in a temporary recovery context, in the
// RFC's order: the latest pointer's snapshot plus the OpLog suffix, else the
// fallback's, else the complete OpLog from batch 1, else fail closed. The
// running state is replaced only when all of it is valid. Recovery reads
// snapshots by the exact keys a pointer names; it never lists the store.
func (m *Master) bootstrap(ctx context.Context) (BootstrapInfo, error) {
	start := time.Now()
	r := m.oplogReader()
	var tried []string
	if m.store != nil {
		latest, fallback, err := publish.ObserveSlots(ctx, m.cli, m.ks)
		if err != nil {
			return BootstrapInfo{Error: err.Error()}, err
		}
		for _, slot := range []struct {
			name string
			s    publish.Slot
		}{{"latest", latest}, {"fallback", fallback}} {
			if !slot.s.Present() {
				continue
			}
			if !slot.s.Valid() {
				tried = append(tried, fmt.Sprintf("%s: %v", slot.name, slot.s.Err))
				m.log.Warn("pointer unusable", "phase", "bootstrap", "slot", slot.name, "code", "pointer_malformed", "err", slot.s.Err)
				continue
			}
			st, t, err := m.restore(ctx, *slot.s.Pointer)
			var head oplog.Head
			if err == nil {
				replay := time.Now()
				head, err = r.Scan(ctx, st.Cursor(), st.Apply)
				m.notePhases(t, time.Since(replay))
			}
			if err != nil {
				tried = append(tried, fmt.Sprintf("%s %s: %v", slot.name, slot.s.Pointer.SnapshotID, err))
				m.log.Warn("snapshot unusable", "phase", "bootstrap", "slot", slot.name, "snapshot_id", slot.s.Pointer.SnapshotID, "code", "snapshot_invalid", "err", err)
				continue
			}
			return m.install(st, head, BootstrapInfo{Source: slot.name, Duration: time.Since(start)}, slot.s.Pointer.SnapshotID), nil
		}
	}
	tmp := state.New()
	replay := time.Now()
	head, err := r.ReadAll(ctx, tmp.Apply)
	m.notePhases(snapshot.Timings{}, time.Since(replay))
	if err == nil {
		err = m.checkFencing(ctx, head)
	}
	if err != nil {
		if len(tried) > 0 {
			err = fmt.Errorf("%w (after: %s)", err, strings.Join(tried, "; "))
		}
		return BootstrapInfo{Error: err.Error()}, err
	}
	info := BootstrapInfo{Source: "oplog", Duration: time.Since(start)}
	if head.Prefix.BatchID == 0 {
		info.Source = "empty"
	}
	return m.install(tmp, head, info, ""), nil
}

// checkFencing is the complete-OpLog fallback's last condition (RFC
// "Complete OpLog Fallback": producer view/fencing data is valid): once a
// durable prefix exists, the producer view must be there and canonical.
// Garbage in it is never read as "no view yet": a node that cannot know the
// fencing state stays non-serving and non-promotable.
func (m *Master) checkFencing(ctx context.Context, head oplog.Head) error {
	view, err := oplog.ReadProducerView(ctx, m.cli, m.ks)
	if err != nil {
		return fmt.Errorf("complete OpLog recovery: %w", err)
	}
	if head.Present && view == 0 {
		return fmt.Errorf("complete OpLog recovery: %w", &oplog.RecordError{Key: m.ks.ProducerView(),
			Err: fmt.Errorf("%w: absent while the durable prefix is at batch %d", oplog.ErrMalformed, head.Prefix.BatchID)})
	}
	return nil
}

// restore loads the snapshot a pointer names, as batchsnap's reader checks
// it (the descriptor held to the pointer's size and CRC32C, the manifest
// to the descriptor's, every object to the manifest's, all identities
// agreeing); it must lie under this cluster's snapshot root, and the view
// it records cannot be above the current producer view (no batch was ever
// appended under a view not yet claimed). Each object read is bounded by
// snapshot_read_timeout_seconds: a store that never answers makes the
// snapshot unreadable, and recovery goes on to the next source.
func (m *Master) restore(ctx context.Context, p publish.Pointer) (*state.State, snapshot.Timings, error) {
	if p.Root() != m.storePrefix() {
		return nil, snapshot.Timings{}, fmt.Errorf("%w: pointer names %q, outside the snapshot root %q", snapshot.ErrIdentity, p.DescriptorKey, m.storePrefix())
	}
	h, st, t, err := snapshot.OpenState(ctx, objstore.ReadDeadline(m.store, time.Duration(m.cfg.SnapshotReadTimeoutSecs)*time.Second), p)
	if err != nil {
		return nil, t, err
	}
	d := h.Descriptor
	view, err := oplog.ReadProducerView(ctx, m.cli, m.ks)
	if err != nil {
		return nil, t, err
	}
	if d.ProducerViewVersion < 0 || uint64(d.ProducerViewVersion) > view {
		return nil, t, fmt.Errorf("%w: snapshot %s records producer view %d, above the current view %d", snapshot.ErrIdentity, d.SnapshotID,
			d.ProducerViewVersion, view)
	}
	return st, t, nil
}

// notePhases records the last bootstrap's download, decode and replay times.
func (m *Master) notePhases(t snapshot.Timings, replay time.Duration) {
	m.m.bootstrapPhase.WithLabelValues("download").Set(t.Download.Seconds())
	m.m.bootstrapPhase.WithLabelValues("decode").Set(t.Decode.Seconds())
	m.m.bootstrapPhase.WithLabelValues("replay").Set(replay.Seconds())
}

func (m *Master) install(st *state.State, head oplog.Head, info BootstrapInfo, snapshotID string) BootstrapInfo {
	m.mu.Lock()
	m.st = st
	m.mu.Unlock()
	m.noteDurable(head.Prefix)
	m.noteApplied(st.Cursor())
	for _, s := range []string{"latest", "fallback", "oplog", "empty"} {
		v := 0.0
		if s == info.Source {
			v = 1
		}
		m.m.bootstrapSource.WithLabelValues(s).Set(v)
	}
	m.m.bootstrapSeconds.Set(info.Duration.Seconds())
	m.log.Info("bootstrapped", "phase", "bootstrap", "source", info.Source, "snapshot_id", snapshotID, "cursor", st.Cursor().String(),
		"duration_ms", info.Duration.Milliseconds())
	return info
}
