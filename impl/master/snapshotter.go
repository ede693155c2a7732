package master

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/oplogha/oplogha/impl/contract/batchsnap"
	"github.com/oplogha/oplogha/impl/oplog"
	"github.com/oplogha/oplogha/impl/publish"
	"github.com/oplogha/oplogha/impl/retention"
	"github.com/oplogha/oplogha/impl/snapshot"
	"github.com/oplogha/oplogha/impl/state"
)

// snapshotLoop is the standby snapshot scheduler: at most one local attempt
// at a time, started only while this node is a standby. The primary never
// starts one.
func (m *Master) snapshotLoop(ctx context.Context) {
	interval := time.Duration(m.cfg.SnapshotIntervalSeconds) * time.Second
	tick := min(max(interval/4, 200*time.Millisecond), 5*time.Second)
	t := time.NewTicker(tick)
	defer t.Stop()
	var b backoff
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !b.due(time.Now()) {
			continue
		}
		published, err := m.trySnapshot(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			delay := b.failed(time.Now(), tick, maxSnapshotBackoff(interval))
			m.m.snapshotBackoff.Set(delay.Seconds())
			m.log.Warn("snapshot attempt failed", "phase", "snapshot", "code", snapshotCode(err), "err", err,
				"failures_in_a_row", b.failures, "next_attempt_in", delay.String())
		case published:
			if b.failures > 0 {
				m.log.Info("snapshot published after failed attempts: backoff ended", "phase", "snapshot", "failures_in_a_row", b.failures)
			}
			b = backoff{}
			m.m.snapshotBackoff.Set(0)
		}
	}
}

// backoff spaces snapshot attempts after failed ones in a row: each failure
// doubles the wait from one tick up to a bound, and a publication ends it.
// Without it, an attempt that fails after its upload (a refused CAS, a
// failed verification) would capture, encode and upload again on every
// tick — with no latest pointer, due() bypasses the interval — and a
// persistent failure would fill the store with candidates.
type backoff struct {
	failures  int
	notBefore time.Time
}

func (b *backoff) due(now time.Time) bool { return !now.Before(b.notBefore) }

// failed records a failure and returns how long to wait before the next attempt.
func (b *backoff) failed(now time.Time, tick, limit time.Duration) time.Duration {
	b.failures++
	d := tick
	for i := 1; i < b.failures && d < limit; i++ {
		d *= 2
	}
	d = min(d, limit)
	b.notBefore = now.Add(d)
	return d
}

// maxSnapshotBackoff bounds the wait: eight snapshot intervals, at least
// 5 s and at most 5 minutes.
func maxSnapshotBackoff(interval time.Duration) time.Duration {
	return min(max(8*interval, 5*time.Second), 5*time.Minute)
}

// errSkip marks an attempt that did not start, with its reason as the metric label.
type errSkip struct{ reason string }

func (e errSkip) Error() string { return "skipped: " + e.reason }

func skip(reason string) error { return errSkip{reason} }

// phaseErr names the phase an attempt failed in.
type phaseErr struct {
	phase string
	err   error
}

func (e *phaseErr) Error() string { return e.phase + ": " + e.err.Error() }
func (e *phaseErr) Unwrap() error { return e.err }

func failed(phase string, err error) error { return &phaseErr{phase, err} }

// failedPhase names the phase an attempt failed in ("cas" for a
// publication the pointer CAS refused).
func failedPhase(err error) string {
	var pe *phaseErr
	switch {
	case errors.As(err, &pe):
		return pe.phase
	case errors.Is(err, publish.ErrCASConflict), errors.Is(err, publish.ErrLeaseLost):
		return "cas"
	}
	return "admission"
}

func snapshotCode(err error) string {
	var pe *phaseErr
	switch {
	case errors.Is(err, publish.ErrCASConflict):
		return "cas_conflict"
	case errors.Is(err, publish.ErrLeaseLost):
		return "lease_lost"
	case errors.Is(err, snapshot.ErrPrefixTaken):
		return "prefix_taken"
	case errors.Is(err, snapshot.ErrDiskBudget):
		return "disk_budget" // the work directory filled while the payload was written
	case errors.As(err, &pe):
		return "snapshot_" + pe.phase + "_failed"
	}
	return errorCode(err)
}

// due decides whether a snapshot is needed: a first or repairing snapshot
// once a batch exists; otherwise the interval since latest AND the minimum
// advance, or (with pruning on) the capacity trigger (uncompacted batches
// over the limit), which bypasses the interval but still needs one new batch.
func (m *Master) due(o publish.Observed, cur state.Cursor, head oplog.Head, floor uint64) (bool, string) {
	if cur.BatchID == 0 {
		return false, "empty"
	}
	if !o.Latest.Valid() {
		if o.Fallback.Valid() && cur.BatchID <= o.Fallback.Pointer.LastIncludedBatchID {
			return false, "no_advance"
		}
		return true, "no_latest"
	}
	lat := o.Latest.Pointer
	if cur.BatchID <= lat.LastIncludedBatchID {
		return false, "no_advance"
	}
	// The capacity trigger bypasses the interval only where a publication
	// lets the floor follow: with pruning off, an early snapshot frees
	// nothing, and firing on every tick would pile snapshots up.
	if m.cfg.EnableOplogPruning && head.Prefix.BatchID-floor > uint64(m.cfg.MaxUncompactedBatches) {
		return true, "capacity"
	}
	if cur.BatchID-lat.LastIncludedBatchID < uint64(m.cfg.SnapshotMinAdvanceBatches) {
		return false, "min_advance"
	}
	age := time.Since(time.UnixMilli(lat.CreatedAtMS))
	if age < time.Duration(m.cfg.SnapshotIntervalSeconds)*time.Second {
		return false, "interval"
	}
	return true, "interval"
}

// lagAdmits measures lag once, at admission, as durable_prefix.batch_id -
// applied_batch_id, and admits a lag up to and including max (RFC
// "Admission"); it is not rechecked after upload.
func lagAdmits(durable, applied uint64, max int) (uint64, bool) {
	lag := durable - min(durable, applied)
	return lag, lag <= uint64(max)
}

func (m *Master) readFloor(ctx context.Context) (uint64, error) {
	return retention.ReadFloor(ctx, m.cli, m.ks)
}

// admit reads pointers, prefix and floor and applies the trigger and
// admission rules; it returns the observation the publication CAS compares.
func (m *Master) admit(ctx context.Context) (publish.Observed, oplog.Head, error) {
	o, err := publish.Observe(ctx, m.cli, m.ks)
	if err != nil {
		return o, oplog.Head{}, err
	}
	head, err := (&oplog.Reader{KV: m.cli, Keyspace: m.ks}).ReadHead(ctx)
	if err != nil {
		return o, head, err
	}
	floor := o.Floor
	cur := m.cursor()
	m.m.uncompacted.Set(float64(head.Prefix.BatchID - min(head.Prefix.BatchID, floor)))
	if ok, why := m.due(o, cur, head, floor); !ok {
		return o, head, skip(why)
	}
	if cur.BatchID < floor {
		// A capture below the floor can never be published (its suffix may
		// be gone): this node must rebootstrap first.
		return o, head, skip("below_floor")
	}
	lag, ok := lagAdmits(head.Prefix.BatchID, cur.BatchID, m.cfg.MaxSnapshotLagBatches)
	m.m.snapshotLag.Set(float64(lag))
	if !ok {
		return o, head, skip("lag")
	}
	m.m.admittedLagMax.observe(float64(lag))
	est := snapshot.EstimateFor(m.footprint(), m.cfg.SnapshotChunkObjectCount)
	if err := m.budget().Check(est); err != nil {
		return o, head, skip(snapshot.SkipReason(err))
	}
	m.m.captureEstimateMax.observe(float64(est.CaptureBytes))
	return o, head, nil
}

// budget is the admission's resource budget, which the encoder asks again
// while it writes.
func (m *Master) budget() snapshot.Budget {
	return snapshot.Budget{MaxCaptureBytes: m.cfg.MaxSnapshotCaptureBytes, WorkDir: m.workDir()}
}

func (m *Master) workDir() string {
	if m.cfg.SnapshotWorkDir != "" {
		return m.cfg.SnapshotWorkDir
	}
	return os.TempDir()
}

// trySnapshot is one attempt, and whether it published: admission, the maintenance lease, re-admission
// under the lease, an O(1) capture valid only if no role transition
// overlapped it, then encode, decode-check, verified upload and the fenced
// pointer CAS — none of which touches the live state again.
func (m *Master) trySnapshot(ctx context.Context) (published bool, err error) {
	before := m.publications.Load()
	err = m.attemptSnapshot(ctx)
	return m.publications.Load() != before, err
}

// attemptSnapshot is trySnapshot's attempt; a skip is counted and is not
// an error.
func (m *Master) attemptSnapshot(ctx context.Context) (err error) {
	role, gen0 := m.RoleGeneration()
	if role != RoleStandby {
		return nil
	}
	defer func() {
		var s errSkip
		switch {
		case errors.As(err, &s):
			m.m.snapshotSkips.WithLabelValues(s.reason).Inc()
			err = nil
		case err != nil:
			m.m.snapshotAttempts.WithLabelValues("failed").Inc()
			m.m.snapshotFailures.WithLabelValues(snapshotCode(err)).Inc()
			m.m.lastFailure.Set(float64(time.Now().UnixMilli()) / 1000)
			m.m.lastFailedPhase.Reset()
			m.m.lastFailedPhase.WithLabelValues(failedPhase(err)).Set(1)
		}
	}()
	if _, ready := m.storeTrust(); !ready {
		return skip("store_unready")
	}
	if _, _, err := m.admit(ctx); err != nil {
		return err
	}
	hit(fpSnapshotBeforeLease)
	lease, err := publish.AcquireLease(ctx, m.cli, m.ks, m.cfg.nodeID(), int64(max(10, m.cfg.SnapshotIntervalSeconds)))
	if errors.Is(err, publish.ErrLeaseHeld) {
		return skip("lease_held")
	}
	if err != nil {
		return failed("lease", err)
	}
	m.m.leaseAcquisitions.Inc()
	defer func() { _ = lease.Release(context.WithoutCancel(ctx)) }()
	// The winner rereads pointers, prefix and triggers.
	o, _, err := m.admit(ctx)
	if err != nil {
		return err
	}
	start := time.Now()
	capture := m.capture()
	hit(fpSnapshotAfterCopy)
	if role, gen1 := m.RoleGeneration(); role != RoleStandby || gen1 != gen0 {
		return skip("promotion") // a role transition overlapped the copy: the capture is discarded
	}
	m.m.phaseSeconds.WithLabelValues("copy").Set(time.Since(start).Seconds())
	return m.publishCapture(ctx, capture, o, lease)
}

// publishCapture runs from an immutable capture only.
func (m *Master) publishCapture(ctx context.Context, capture *state.Capture, o publish.Observed, lease *publish.Lease) error {
	cur := capture.Cursor()
	if hit(fpSnapshotTornCursor) {
		cur.Seq++ // injected: a capture whose batch and sequence cursors disagree
	}
	batchRev, err := m.checkCursor(ctx, cur)
	if err != nil {
		return failed("cursor", err) // rejected before anything is encoded; the applied cursor is untouched
	}
	view, err := m.viewAt(ctx, batchRev)
	if err != nil {
		return failed("view", err)
	}
	id := snapshot.NewID(cur.BatchID, int64(lease.ID))
	log := m.log.With("snapshot_id", id.String(), "cursor", cur.String(), "producer_view", view)
	// The capture is copy-on-write: it shares the live state's nodes, so no
	// second full copy exists to release before the decode-check. Each part
	// is uploaded once it has passed its decode-check, while the encoder
	// goes on (snapshot.PrepareAndWrite).
	phase, head0 := time.Now(), m.headTime.Load()
	trust, _ := m.storeTrust() // known: admission required it
	prep, w, err := snapshot.PrepareAndWrite(ctx, m.store, trust, capture, snapshot.PrepareSpec{Root: m.storePrefix(), ID: id,
		View: int64(view), WorkDir: m.workDir(), ChunkObjects: m.cfg.SnapshotChunkObjectCount, Budget: m.budget()}, snapshot.WriteOptions{
		AfterObject: func(string) { hit(fpSnapshotAfterObject) },
		Cleanup: func(deleted []string, err error) {
			if err != nil {
				log.Warn("snapshot candidate cleanup failed: its objects are left to GC", "phase", "upload", "objects", len(deleted), "error", err)
			}
		},
	}, func() { hit(fpSnapshotBeforeUpload) })
	defer prep.Close()
	if prep != nil {
		m.m.phaseSeconds.WithLabelValues("encode").Set(prep.EncodeTime.Seconds())
		m.m.phaseSeconds.WithLabelValues("decode").Set(prep.DecodeTime.Seconds())
		if prep.Layout != nil {
			m.m.capturedBytes.Set(float64(prep.Layout.Size))
		}
	}
	var se *snapshot.StageError
	switch {
	case errors.As(err, &se) && se.Stage == "encode":
		return failed("encode", se.Err)
	case err != nil:
		m.m.orphans.WithLabelValues("upload_failed").Inc()
		return failed("upload", err)
	}
	m.m.phaseSeconds.WithLabelValues("upload").Set(time.Since(phase).Seconds())
	m.m.phaseSeconds.WithLabelValues("verify").Set(time.Duration(m.headTime.Load() - head0).Seconds())
	for _, proof := range w.Proofs {
		m.m.verifiedObjects.WithLabelValues(string(proof)).Inc()
	}
	phase = time.Now()
	plan, err := publish.PlanFor(o, w.Pointer)
	if err != nil {
		m.m.orphans.WithLabelValues(orphanReason(err)).Inc()
		m.deleteRefused(ctx, log, w)
		return failed("plan", err)
	}
	hit(fpSnapshotBeforeCAS)
	var res publish.Result
	if err = injected(fpSnapshotCASRefused); err != nil {
		err = fmt.Errorf("%w (%w)", publish.ErrCASConflict, err)
	} else {
		res, err = publish.Publish(ctx, m.cli, m.ks, lease.Token, o, plan)
	}
	if err != nil {
		m.m.orphans.WithLabelValues(orphanReason(err)).Inc()
		switch {
		case errors.Is(err, publish.ErrCASConflict):
			m.m.casConflicts.Inc()
		case errors.Is(err, publish.ErrLeaseLost):
			m.m.leaseLosses.WithLabelValues("publish").Inc()
		default:
			// The CAS's outcome is unknown (it may have committed): the
			// candidate stays for GC, which knows what the pointers name.
			return fmt.Errorf("publish %s (left as an orphan): %w", id, err)
		}
		m.deleteRefused(ctx, log, w)
		return fmt.Errorf("publish %s (refused; its objects deleted): %w", id, err)
	}
	// The server validated every object's checksum on upload (or a
	// complete readback did): the newer protected snapshot needs no
	// second complete read before the floor moves.
	m.verified.Add(id.String())
	hit(fpSnapshotAfterCAS)
	m.m.phaseSeconds.WithLabelValues("cas").Set(time.Since(phase).Seconds())
	m.m.snapshotAttempts.WithLabelValues("published").Inc()
	m.publications.Add(1)
	m.m.lastSuccess.Set(float64(time.Now().UnixMilli()) / 1000)
	m.m.latestSnapshotBatch.Set(float64(cur.BatchID))
	if role, _ := m.RoleGeneration(); role != RoleStandby {
		// Allowed: the capture completed while this node was a standby.
		m.m.publishedAfterPromo.Inc()
		log = log.With("role_at_publication", string(role))
	}
	log.Info("snapshot published", "phase", "cas", "kind", plan.Kind, "revision", res.Revision, "payload_bytes", prep.Layout.Size, "proof",
		string(w.Proofs[batchsnap.SegmentsObject]))
	if m.cfg.EnableSnapshotGC || m.cfg.EnableOplogPruning {
		m.retain(ctx, lease)
	}
	return nil
}

// deleteRefused deletes a written candidate whose publication was refused
// for certain (the plan refused it, or the CAS transaction answered
// "not succeeded"): no pointer names it, none ever will (its id carries this
// attempt's lease), and waiting for a later successful publication's GC
// would let a run of refusals pile candidates up in the store. A delete
// that fails leaves them to GC.
func (m *Master) deleteRefused(ctx context.Context, log *slog.Logger, w *snapshot.Written) {
	if err := m.store.Delete(context.WithoutCancel(ctx), w.Stored); err != nil {
		m.m.candidatesDeleted.WithLabelValues("failed").Inc()
		log.Warn("refused snapshot candidate not deleted: its objects are left to GC", "phase", "cas", "objects", len(w.Stored), "err", err)
		return
	}
	m.m.candidatesDeleted.WithLabelValues("deleted").Inc()
}

// orphanReason labels why a written candidate was left unpublished.
func orphanReason(err error) string {
	switch {
	case errors.Is(err, publish.ErrLeaseLost):
		return "lease_lost"
	case errors.Is(err, publish.ErrCASConflict):
		return "conflict"
	case errors.Is(err, publish.ErrNotNewer):
		return "not_newer"
	case errors.Is(err, publish.ErrBelowFloor):
		return "below_floor"
	}
	return "other"
}

// retainReadBound bounds a retention cycle's validation reads under the
// maintenance lease: two snapshot intervals, at least 2 s. Every
// publication waits for the lease, so a full read of a protected snapshot
// through a slow store would hold them all back; past the bound the cycle
// is inconclusive and skips pruning (RFC Design Principle 5). The reads
// stay under the lease, right before the floor CAS, rather than move
// outside it: a snapshot read in full outside the lease could rot behind
// the store between that read and the floor moving onto it, which the
// floor-onto-corrupt scenario aims at.
func retainReadBound(interval time.Duration) time.Duration {
	return max(2*interval, 2*time.Second)
}

// retain runs the retention cycle under the lease just used to publish.
func (m *Master) retain(ctx context.Context, lease *publish.Lease) {
	grace := time.Duration(float64(m.cfg.SnapshotIntervalSeconds)*m.cfg.SnapshotGCGraceMultiplier*1000) * time.Millisecond
	rep, err := retention.Run(ctx, m.cli, m.ks, m.store, retention.Options{Prefix: m.storePrefix(), GC: m.cfg.EnableSnapshotGC, Prune: m.cfg.EnableOplogPruning,
		Grace: grace, Lease: lease, Verified: m.verified, ReadBound: retainReadBound(time.Duration(m.cfg.SnapshotIntervalSeconds) * time.Second),
		AfterGC: func() { hit(fpMaintainAfterGC) }, AfterCAS: func() { hit(fpMaintainAfterFloor) },
		GCDeleteFault: func(string) error { return injected(fpMaintainGCDeleteFails) },
		FloorCASFault: func() error { return injected(fpMaintainFloorCASFails) },
		DeleteFault:   func() error { return injected(fpMaintainDeleteFails) }})
	m.m.gcGroups.Add(float64(rep.GCGroups))
	m.m.gcObjects.Add(float64(rep.GCDeleted))
	m.m.gcFailures.Add(float64(rep.GCFailures))
	m.m.gcBytes.Add(float64(rep.GCBytes))
	m.m.uploadsAborted.Add(float64(rep.UploadsAborted))
	if rep.Floor > 0 {
		m.m.floor.Set(float64(rep.Floor))
	}
	if rep.FloorAboveSafe > 0 {
		m.m.floorAboveSafe.Inc()
		m.log.Error("compaction floor above the older snapshot pointer: batches deleted only through it", "phase", "retain",
			"code", "floor_above_safe", "floor", rep.FloorAboveSafe, "s_safe", rep.Protected[1])
	}
	if err != nil {
		switch {
		case errors.Is(err, retention.ErrLeaseLost):
			m.m.leaseLosses.WithLabelValues("retain").Inc()
		case errors.Is(err, retention.ErrRangeDelete):
			m.m.rangeDeleteFailures.Inc()
		case errors.Is(err, retention.ErrFloorCAS):
			m.m.floorCASFailures.Inc()
		}
		m.log.Warn("retention cycle failed", "phase", "retain", "code", "retain_failed", "floor", rep.Floor, "err", err)
		return
	}
	if rep.Inconclusive {
		m.m.retainInconclusive.Inc()
		m.log.Warn("retention validation inconclusive: nothing pruned, the next cycle tries again", "phase", "retain",
			"code", "retain_inconclusive", "why", rep.Skipped)
	}
	if rep.BatchesDeleted > 0 {
		m.m.rangeDeletes.Inc()
		m.m.rangeDeleted.Add(float64(rep.BatchesDeleted))
	}
	m.log.Info("retention cycle", "phase", "retain", "floor", rep.Floor, "floor_moved", rep.FloorMoved, "batches_deleted", rep.BatchesDeleted,
		"gc_groups", rep.GCGroups, "gc_objects", rep.GCDeleted, "gc_bytes", rep.GCBytes, "gc_failures", rep.GCFailures, "skipped", rep.Skipped)
}

// errInconsistentCursor: a capture's batch and sequence cursors disagree
// with the OpLog (RFC "Inconsistent batch/sequence cursor": reject capture).
var errInconsistentCursor = errors.New("inconsistent batch/sequence cursor")

// checkCursor verifies that a capture's cursor names a complete batch: the
// OpLog's batch cur.BatchID must end at sequence cur.Seq. It returns the
// etcd revision that appended the batch (0 for the empty cursor).
func (m *Master) checkCursor(ctx context.Context, cur state.Cursor) (int64, error) {
	if cur.BatchID == 0 {
		if cur.Seq != 0 {
			return 0, fmt.Errorf("%w: batch 0 with seq %d", errInconsistentCursor, cur.Seq)
		}
		return 0, nil
	}
	resp, err := m.cli.Get(ctx, m.ks.Batch(cur.BatchID))
	if err != nil {
		return 0, err
	}
	if len(resp.Kvs) == 0 {
		return 0, fmt.Errorf("%w: batch %d is not in the OpLog (pruned below the floor?)", errInconsistentCursor, cur.BatchID)
	}
	b, err := oplog.DecodeBatch(resp.Kvs[0].Value)
	if err != nil {
		return 0, err
	}
	if b.LastSeq != cur.Seq {
		return 0, fmt.Errorf("%w: capture at %s, but batch %d ends at seq %d", errInconsistentCursor, cur, b.ID, b.LastSeq)
	}
	return resp.Kvs[0].ModRevision, nil
}

// errViewUnknown: the view a batch was appended under can no longer be read.
var errViewUnknown = errors.New("producer view of the captured batch is unknown")

// viewAt is the producer view under which the batch written at revision
// batchRev was appended: the view associated with the captured prefix
// (RFC "State Persisted in the Snapshot"), not the view of the moment of
// capture, which a promotion since the batch has moved on. When the view
// has not changed since the batch it is the current one; otherwise it is
// read at that revision, and if etcd compacted it away the attempt fails
// (the next capture, at a newer batch, will know its view).
func (m *Master) viewAt(ctx context.Context, batchRev int64) (uint64, error) {
	resp, err := m.cli.Get(ctx, m.ks.ProducerView())
	if err != nil {
		return 0, err
	}
	if len(resp.Kvs) == 0 {
		return 0, fmt.Errorf("%w: no producer view", errViewUnknown)
	}
	if batchRev != 0 && resp.Kvs[0].ModRevision > batchRev {
		if resp, err = m.cli.Get(ctx, m.ks.ProducerView(), clientv3.WithRev(batchRev)); err != nil {
			return 0, fmt.Errorf("%w: at revision %d: %v", errViewUnknown, batchRev, err)
		}
		if len(resp.Kvs) == 0 {
			return 0, fmt.Errorf("%w: none at revision %d", errViewUnknown, batchRev)
		}
	}
	return oplog.DecodeProducerView(resp.Kvs[0].Value)
}
