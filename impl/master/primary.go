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

	committer, view, err := m.promote(ctx)
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
	m.log.Info("serving", "phase", "promote", "producer_view", view, "cursor", m.cursor().String(), "promotion_ms", time.Since(t.won).Milliseconds())

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

func (m *Master) promote(ctx context.Context) (*oplog.GroupCommitter, uint64, error) {
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
	view, err := oplog.ClaimProducerView(ctx, m.cli, m.ks)
	if err != nil {
		return nil, 0, fmt.Errorf("claim producer view: %w", err)
	}
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
	w, err := oplog.NewWriter(ctx, m.cli, m.ks, view)
	if err != nil {
		return nil, 0, err
	}
	w.RequestTimeout = m.cfg.requestTimeout()
	w.BeforeResolve = func(uint64) { hit(fpPrimaryAppendUnknown) }
	if cur := m.cursor(); w.Prefix().Cursor() != cur {
		return nil, 0, fmt.Errorf("%w: state at %s, durable prefix at batch %d seq %d", oplog.ErrPrefixMoved, cur, w.Prefix().BatchID, w.Prefix().LastSeq)
	}
	m.alloc.rebuild(m.capture())
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
	if c != nil {
		c.Close()
	}
	rctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	_ = t.elec.Resign(rctx)
	cancel()
	m.setRole(RoleStandby)
	m.m.demotions.WithLabelValues(reason).Inc()
	m.log.Warn("primary term ended", "phase", "demote", "code", reason, "cursor", m.cursor().String())
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
