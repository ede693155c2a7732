package master

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/oplogha/oplogha/impl/oplog"
	"github.com/oplogha/oplogha/impl/state"
)

// term is an election won: the session whose lease holds the leader key.
type term struct {
	sess *concurrency.Session
	elec *concurrency.Election
	won  time.Time
}

// standbyTerm applies the OpLog while campaigning, and returns once this node
// has won the election (the apply loop stopped, state at its last batch).
func (m *Master) standbyTerm(ctx context.Context) (*term, error) {
	sess, err := concurrency.NewSession(m.cli, concurrency.WithTTL(m.cfg.LeaderLeaseSeconds), concurrency.WithContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("election session: %w", err)
	}
	elec := concurrency.NewElection(sess, m.ks.Leader())
	// The campaign ends with the session unless etcd still holds its lease.
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	kept := make(chan *concurrency.Session, 1)
	go func() { kept <- m.keepPlace(ctx, cctx, sess, cancel) }()
	go m.observeLeader(cctx, elec)
	applyDone := make(chan struct{})
	go func() {
		defer close(applyDone)
		m.applyLoop(cctx)
	}()
	err = m.waitPromotable(cctx)
	if err == nil {
		camp, stop := context.WithCancelCause(cctx)
		go m.watchPromotable(camp, stop)
		err = elec.Campaign(camp, m.cfg.advertise())
		if cause := context.Cause(camp); err != nil && errors.Is(cause, errNotPromotable) {
			err = cause
		}
		stop(nil)
	}
	if cause := context.Cause(cctx); err != nil && errors.Is(cause, errSessionEnded) {
		err = cause
	}
	cancel(nil)
	<-applyDone
	sess = <-kept
	if err == nil {
		err = m.checkLeadership(ctx, sess, elec)
	}
	if err != nil {
		sess.Close()
		return nil, err
	}
	return &term{sess: sess, elec: elec, won: time.Now()}, nil
}

// errSessionEnded: the election session's lease keep-alive stopped while
// the node waited in the election's queue; its place there is lost.
var errSessionEnded = errors.New("election session ended")

// keepPlace holds this node's place in the election's queue for as long
// as etcd holds its lease, and returns the session the term goes on with
// once cctx ends. The client's keep-alive gives a lease up when no answer
// came within its TTL, although etcd may still hold it (the renewals
// reached etcd, the answers were late); the queue key is named for the
// lease, so keeping the same lease alive in a new session keeps the place.
// Without that, a standby next in line whose answers were late withdrew at
// the moment it should have won, and whichever node campaigned next did —
// a clean stop's handover waited for a node still bootstrapping. When etcd
// no longer holds the lease (expired or revoked) or cannot say, the
// campaign ends with errSessionEnded.
func (m *Master) keepPlace(ctx, cctx context.Context, sess *concurrency.Session, cancel context.CancelCauseFunc) *concurrency.Session {
	for {
		select {
		case <-cctx.Done():
			return sess
		case <-sess.Done():
		}
		if cctx.Err() != nil {
			return sess
		}
		if m.sessionEnded(ctx, sess) {
			next, err := concurrency.NewSession(m.cli, concurrency.WithLease(sess.Lease()),
				concurrency.WithTTL(m.cfg.LeaderLeaseSeconds), concurrency.WithContext(ctx))
			if err == nil {
				m.m.sessionsResumed.Inc()
				sess = next
				continue
			}
			m.log.Warn("election session not resumed", "phase", "campaign", "code", "session_ended", "err", err)
		}
		cancel(errSessionEnded)
		return sess
	}
}

// sessionEnded says why a session ended in one line — whether etcd still
// holds its lease (the keep-alive stopped hearing back: the node keeps its
// place) or not (expired or revoked), asked with a short deadline — and
// reports whether it is held.
func (m *Master) sessionEnded(ctx context.Context, sess *concurrency.Session) (held bool) {
	if ctx.Err() != nil {
		return false // the node is stopping
	}
	tctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	attrs := []any{"phase", "campaign", "code", "session_ended", "lease", fmt.Sprintf("%x", int64(sess.Lease()))}
	ttl, err := m.cli.TimeToLive(tctx, sess.Lease())
	switch {
	case err != nil:
		attrs = append(attrs, "etcd_lease", "unknown", "err", err, "then", "campaigns again")
	case ttl.TTL <= 0:
		attrs = append(attrs, "etcd_lease", "gone (expired or revoked)", "then", "campaigns again")
	default:
		held = true
		attrs = append(attrs, "etcd_lease", "held", "ttl_s", ttl.TTL, "why", "its keep-alive stopped hearing back",
			"then", "keeps its place: the same lease in a new session")
	}
	m.log.Warn("election session ended", attrs...)
	return held
}

// checkLeadership confirms the session is alive and still holds its key:
// Campaign does not check that after waiting.
func (m *Master) checkLeadership(ctx context.Context, sess *concurrency.Session, elec *concurrency.Election) error {
	select {
	case <-sess.Done():
		return fmt.Errorf("election session expired while campaigning")
	default:
	}
	resp, err := m.cli.Get(ctx, elec.Key())
	if err != nil {
		return fmt.Errorf("confirm leadership: %w", err)
	}
	if len(resp.Kvs) == 0 || resp.Kvs[0].CreateRevision != elec.Rev() {
		return fmt.Errorf("leader key %s vanished", elec.Key())
	}
	return nil
}

func (m *Master) observeLeader(ctx context.Context, elec *concurrency.Election) {
	for resp := range elec.Observe(ctx) {
		if len(resp.Kvs) > 0 {
			m.roleMu.Lock()
			m.leaderURL = string(resp.Kvs[0].Value)
			m.roleMu.Unlock()
		}
	}
}

// waitPromotable returns once this node may campaign: its cursor is at or
// above a compaction floor it can read. A standby below the floor must
// rebootstrap first (the apply loop does); one that cannot read the floor
// cannot know it is not below it (RFC: never skip to the floor), so it is
// not electable either until the floor reads again.
func (m *Master) waitPromotable(ctx context.Context) error {
	said := ""
	for {
		ok, why := m.promotableNow(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		m.setPromotable(ok)
		if ok {
			return nil
		}
		if why != said {
			m.log.Warn("not promotable", "phase", "campaign", "code", "not_promotable", "cursor", m.cursor().String(), "why", why)
			said = why
		}
		sleep(ctx, m.cfg.pollInterval())
	}
}

// promotableNow says whether this node may be elected now, and why not.
func (m *Master) promotableNow(ctx context.Context) (bool, string) {
	floor, err := m.readFloor(ctx)
	switch {
	case err != nil:
		return false, "the compaction floor cannot be read: " + err.Error()
	case m.cursor().BatchID < floor:
		return false, fmt.Sprintf("cursor below the compaction floor %d", floor)
	}
	return true, ""
}

// watchPromotable cancels a campaign once this node stops being
// promotable while it waits in the election's queue (the floor moved past
// its cursor, or can no longer be read): the check before the campaign
// alone would let a node that fell behind win.
func (m *Master) watchPromotable(ctx context.Context, cancel context.CancelCauseFunc) {
	t := time.NewTicker(max(m.cfg.pollInterval(), 100*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if ok, why := m.promotableNow(ctx); !ok && ctx.Err() == nil {
			m.setPromotable(false)
			cancel(fmt.Errorf("%w while campaigning: %s", errNotPromotable, why))
			return
		}
	}
}

// errNotPromotable: the node may not be elected (below or unsure of the floor).
var errNotPromotable = errors.New("not promotable")

func (m *Master) setPromotable(ok bool) {
	m.roleMu.Lock()
	m.promotable = ok
	m.roleMu.Unlock()
	m.m.promotable.Set(b2f(ok))
}

// applyLoop polls the OpLog and applies complete batches until ctx ends.
// A cursor below the compaction floor stops ordinary apply: the standby
// rebootstraps from a snapshot covering the floor (RFC "Lagging Live
// Standby"), whether or not the batches it needs are gone yet.
func (m *Master) applyLoop(ctx context.Context) {
	r := m.oplogReader()
	t := time.NewTicker(m.cfg.pollInterval())
	defer t.Stop()
	for {
		err := m.applyOnce(ctx, r)
		if (errors.Is(err, oplog.ErrGap) || errors.Is(err, errBelowFloor)) && ctx.Err() == nil {
			err = m.rebootstrapIfBelowFloor(ctx, err)
		}
		if err != nil && ctx.Err() == nil {
			code := errorCode(err)
			m.m.applyFailures.WithLabelValues(code).Inc()
			m.roleMu.Lock()
			m.applyErr = err.Error()
			m.roleMu.Unlock()
			m.log.Warn("apply failed", "phase", "apply", "code", code, "cursor", m.cursor().String(), "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// errBelowFloor: the applied cursor is below the compaction floor.
var errBelowFloor = errors.New("applied cursor below the compaction floor")

// applyOnce applies every batch from the cursor to the durable prefix.
func (m *Master) applyOnce(ctx context.Context, r *oplog.Reader) error {
	head, err := r.ReadHead(ctx)
	if err != nil {
		return err
	}
	if cur := m.cursor(); head.FloorErr == nil && cur.BatchID < head.Floor {
		return fmt.Errorf("%w: cursor %s, floor %d", errBelowFloor, cur, head.Floor)
	}
	err = r.ScanTo(ctx, m.cursor(), head, func(b state.Batch) error {
		hit(fpStandbyBeforeApply)
		m.mu.Lock()
		err := m.st.Apply(b)
		m.mu.Unlock()
		if err != nil {
			return fmt.Errorf("apply: %w", err)
		}
		m.m.batchesApplied.Inc()
		m.noteApplied(b.Cursor())
		hit(fpStandbyAfterApply)
		return nil
	})
	if err != nil {
		return err
	}
	m.noteDurable(head.Prefix)
	m.roleMu.Lock()
	m.applyErr = ""
	m.roleMu.Unlock()
	return nil
}

// oplogReader is the reader of every OpLog scan the master makes: each
// feeds the batches to state.(*State).Apply (the apply loop also notes the
// cursor), which keeps neither a batch's entries nor its payloads, so the
// reader may reuse their memory from page to page.
func (m *Master) oplogReader() *oplog.Reader {
	return &oplog.Reader{KV: m.cli, Keyspace: m.ks, PageSize: m.cfg.OplogReadPageSize, ReuseBuffers: true}
}
