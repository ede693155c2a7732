package master

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/oplogha/oplogha/impl/oplog"
	"github.com/oplogha/oplogha/impl/state"
)

// primaryTerm promotes this node and serves until the term ends: the
// election lease is lost, the writer is fenced or meets an unknown outcome,
// or ctx ends. Promotion claims a higher producer view first (fencing any
// older primary), then completes the state to the durable prefix, and only
// then serves. It never waits for snapshot or object-store work. It reports
// whether the node served at all (false: the promotion failed).
func (m *Master) primaryTerm(ctx context.Context, t *term) bool {
	defer t.sess.Close()
	m.setRole(RolePromoting)
	m.log.Info("elected", "phase", "promote", "cursor", m.cursor().String())
	hit(fpPromoteAfterElected)

	steps := &promotionSteps{last: time.Now()}
	committer, view, err := m.promote(ctx, steps)
	if err != nil {
		m.log.Error("promotion failed", "phase", "promote", "code", errorCode(err), "err", err)
		m.endTerm(t, "promotion_failed")
		var r errRefused
		if errors.As(err, &r) {
			m.refused = r.err
		}
		return false
	}
	hit(fpPromoteBeforeServe)
	m.roleMu.Lock()
	m.committer, m.view, m.serving, m.leaderURL = committer, view, true, m.cfg.advertise()
	m.roleMu.Unlock()
	m.setRole(RolePrimary)
	m.m.serving.Set(1)
	m.m.promotions.Inc()
	m.m.promotionSeconds.Set(time.Since(t.won).Seconds())
	m.log.Info("serving", append([]any{"phase", "promote", "producer_view", view, "cursor", m.cursor().String(), "promotion_ms", time.Since(t.won).Milliseconds()}, steps.attrs...)...)

	reason := "shutdown"
	select {
	case <-t.sess.Done():
		reason = "lease_lost"
	case <-committer.Done():
		reason = errorCode(committer.Err())
	case <-ctx.Done():
	}
	m.endTerm(t, reason)
	return true
}

// promotionSteps times a promotion's steps for its "serving" line, so a
// slow handover says which step it waited on.
type promotionSteps struct {
	last  time.Time
	attrs []any
}

// done records the time since the previous step as name_ms (nothing on a
// nil s).
func (s *promotionSteps) done(name string) {
	if s == nil {
		return
	}
	now := time.Now()
	s.attrs = append(s.attrs, name+"_ms", now.Sub(s.last).Milliseconds())
	s.last = now
}

func (m *Master) promote(ctx context.Context, steps *promotionSteps) (*oplog.GroupCommitter, uint64, error) {
	// A node below the compaction floor rebootstraps before it claims a
	// view, and one that cannot read the floor does not claim at all: a
	// claim fences the cluster's writer, and one this node cannot follow by
	// serving would only leave the cluster without a primary.
	floor, err := m.readFloor(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: the compaction floor cannot be read: %w", errNotPromotable, err)
	}
	if m.cursor().BatchID < floor {
		if err := m.rebootstrapIfBelowFloor(ctx, fmt.Errorf("%w: promotion at %s, floor %d", errBelowFloor, m.cursor(), floor)); err != nil {
			return nil, 0, fmt.Errorf("%w: %w", errNotPromotable, err)
		}
	}
	steps.done("floor")
	view, err := oplog.ClaimProducerView(ctx, m.cli, m.ks)
	if err != nil {
		return nil, 0, fmt.Errorf("claim producer view: %w", err)
	}
	steps.done("claim")
	m.m.viewClaims.Inc()
	m.m.producerView.Set(float64(view))
	m.log.Info("claimed producer view", "phase", "promote", "producer_view", view)
	hit(fpPromoteAfterClaim)
	if m.legacy != nil {
		if err := m.importLegacy(ctx, view); err != nil {
			return nil, 0, fmt.Errorf("legacy import: %w", err)
		}
	}
	// No writer below our view can append any more: catch up to the final
	// prefix (through a snapshot when the cursor fell below the floor).
	r := m.oplogReader()
	err = m.applyOnce(ctx, r)
	if errors.Is(err, oplog.ErrGap) || errors.Is(err, errBelowFloor) {
		if err = m.rebootstrapIfBelowFloor(ctx, err); err == nil {
			err = m.applyOnce(ctx, r)
		}
	}
	if err != nil {
		return nil, 0, fmt.Errorf("complete state to the durable prefix: %w", err)
	}
	steps.done("catch_up")
	w, err := oplog.NewWriter(ctx, m.cli, m.ks, view)
	if err != nil {
		return nil, 0, err
	}
	steps.done("writer")
	w.RequestTimeout = m.cfg.requestTimeout()
	w.BeforeResolve = func(uint64) { hit(fpPrimaryAppendUnknown) }
	if cur := m.cursor(); w.Prefix().Cursor() != cur {
		return nil, 0, fmt.Errorf("%w: state at %s, durable prefix at batch %d seq %d", oplog.ErrPrefixMoved, cur, w.Prefix().BatchID, w.Prefix().LastSeq)
	}
	m.alloc.rebuild(m.capture())
	steps.done("placement")
	c := oplog.NewGroupCommitter(w, m.newTx, oplog.Limits{MaxEntries: m.cfg.OplogBatchMaxEntries, MaxBytes: m.cfg.OplogBatchMaxBytes}, oplog.Hooks{
		BeforeAppend: func(n int) { hitBatch(fpPrimaryBeforeAppend, n) },
		AfterAppend:  func(b state.Batch) { hitBatch(fpPrimaryAfterAppend, len(b.Entries)) },
		AfterCommit: func(b state.Batch) {
			m.m.batchesCommitted.Inc()
			m.m.entriesCommitted.Add(float64(len(b.Entries)))
			m.noteApplied(b.Cursor())
			m.noteDurable(oplog.DurablePrefix{BatchID: b.ID, LastSeq: b.LastSeq})
			hit(fpPrimaryAfterCommit)
		},
		SabotageAckWithoutAppend: sabotageAckWithoutAppend,
	})
	return c, view, nil
}

// endTerm stops serving, resigns and returns to standby.
func (m *Master) endTerm(t *term, reason string) {
	hit(fpPrimaryBeforeStepDown)
	m.roleMu.Lock()
	c := m.committer
	m.committer, m.serving = nil, false
	m.roleMu.Unlock()
	m.m.serving.Set(0)
	began := time.Now()
	if c != nil {
		c.Close()
	}
	closed := time.Now()
	rctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	resignErr := t.elec.Resign(rctx)
	cancel()
	if resignErr != nil {
		// The session cannot revoke its own lease once the node's context
		// has ended (its Close revokes under that context), so without
		// this a failed resign leaves the successor waiting out the lease.
		rctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		if _, err := m.cli.Revoke(rctx, t.sess.Lease()); err != nil {
			resignErr = fmt.Errorf("%w; revoking the lease: %w", resignErr, err)
		}
		cancel()
	}
	m.setRole(RoleStandby)
	m.m.demotions.WithLabelValues(reason).Inc()
	// How long the writer took to finish its batch in flight and the
	// resignation took: a successor waits for both (or, when the resign
	// failed, for the lease to run out).
	attrs := []any{"phase", "demote", "code", reason, "cursor", m.cursor().String(),
		"close_ms", closed.Sub(began).Milliseconds(), "resign_ms", time.Since(closed).Milliseconds()}
	if resignErr != nil {
		attrs = append(attrs, "resign_err", resignErr.Error())
	}
	m.log.Warn("primary term ended", attrs...)
}

// masterTx stages client entries on a private copy of the state.
type masterTx struct {
	m  *Master
	tx *state.Tx
}

func (m *Master) newTx() oplog.Tx {
	m.mu.Lock()
	defer m.mu.Unlock()
	return &masterTx{m: m, tx: m.st.Begin()}
}

func (x *masterTx) Stage(e state.Entry) error { return x.tx.Stage(e) }

func (x *masterTx) Commit(b state.Batch) error {
	x.m.mu.Lock()
	defer x.m.mu.Unlock()
	return x.m.st.Commit(x.tx, b)
}

// submit hands one mutation to the group committer of the current term.
func (m *Master) submit(ctx context.Context, e state.Entry) (oplog.Committed, error) {
	m.roleMu.Lock()
	c, serving := m.committer, m.serving
	m.roleMu.Unlock()
	if !serving || c == nil {
		return oplog.Committed{}, errNotPrimary
	}
	ctx, cancel := context.WithTimeout(ctx, 2*m.cfg.requestTimeout()+10*time.Second)
	defer cancel()
	return c.Submit(ctx, e)
}

var (
	errNotPrimary = errors.New("not the primary")
	errNoCapacity = errors.New("no mounted segment has room")
)
