package oplog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/oplogha/oplogha/impl/contract/keyspace"
	"github.com/oplogha/oplogha/impl/state"
)

// Writer appends batches for one producer view. Each append is one etcd
// transaction that compares the producer view and the durable prefix the
// writer last saw, and puts the batch with the new prefix. A Writer is not
// safe for concurrent use; GroupCommitter serialises callers onto one.
type Writer struct {
	kv        clientv3.KV
	ks        keyspace.Keyspace
	view      uint64
	viewRaw   string
	prefix    DurablePrefix
	prefixRaw []byte // nil: the prefix key was absent
	poisoned  error  // set after an unresolved commit; cleared by Resync

	// RequestTimeout bounds one append transaction and each request of
	// the resolver.
	RequestTimeout time.Duration
	// ResolveTimeout bounds how long an ambiguous commit is resolved by
	// re-reading before the writer reports ErrUnknownOutcome.
	ResolveTimeout time.Duration
	// BeforeResolve, when set, is called with the batch id once an
	// append's outcome is unknown, before the resolver reads anything
	// back (and before its ResolveTimeout starts): a crash window.
	BeforeResolve func(batchID uint64)
}

// NewWriter returns a writer for view, which must be the current producer view
// (claimed by ClaimProducerView). It reads the durable prefix to append after.
func NewWriter(ctx context.Context, kv clientv3.KV, ks keyspace.Keyspace, view uint64) (*Writer, error) {
	w := &Writer{kv: kv, ks: ks, view: view, viewRaw: string(EncodeProducerView(view)),
		RequestTimeout: 2 * time.Second, ResolveTimeout: 10 * time.Second}
	if err := w.Resync(ctx); err != nil {
		return nil, err
	}
	return w, nil
}

// View is the producer view the writer appends under.
func (w *Writer) View() uint64 { return w.view }

// Prefix is the durable prefix as of the writer's last append or resync.
func (w *Writer) Prefix() DurablePrefix { return w.prefix }

// Resync re-reads the producer view and durable prefix. It clears an unknown
// outcome: whatever the ambiguous commit did is now in the prefix read.
func (w *Writer) Resync(ctx context.Context) error {
	resp, err := w.kv.Txn(ctx).Then(
		clientv3.OpGet(w.ks.ProducerView()),
		clientv3.OpGet(w.ks.DurablePrefix()),
	).Commit()
	if err != nil {
		return fmt.Errorf("read producer view and durable prefix: %w", err)
	}
	view, prefixKV := firstKV(resp.Responses[0]), firstKV(resp.Responses[1])
	if err := w.checkView(view); err != nil {
		return err
	}
	if prefixKV == nil {
		w.prefix, w.prefixRaw = DurablePrefix{}, nil
	} else {
		p, err := DecodeDurablePrefix(prefixKV.Value)
		if err != nil {
			return &RecordError{Key: w.ks.DurablePrefix(), Err: err}
		}
		w.prefix, w.prefixRaw = p, bytes.Clone(prefixKV.Value)
	}
	w.poisoned = nil
	return nil
}

func (w *Writer) checkView(kv *mvccKV) error {
	if kv == nil {
		return &FencedError{Mine: w.view, Current: 0}
	}
	if string(kv.Value) == w.viewRaw {
		return nil
	}
	cur, err := DecodeProducerView(kv.Value)
	if err != nil {
		return &RecordError{Key: w.ks.ProducerView(), Err: err}
	}
	return &FencedError{Mine: w.view, Current: cur}
}

// Append writes entries as the next batch. On success the batch is durable.
// Errors: *FencedError (stop writing), ErrPrefixMoved, ErrUnknownOutcome (the
// batch may or may not be durable; the writer refuses appends until Resync),
// ErrBatchTooLarge (etcd refused the request for its size: nothing was
// written and the writer can append the next, smaller batch), or an encoding
// error (nothing was sent).
func (w *Writer) Append(ctx context.Context, entries []state.Entry) (state.Batch, error) {
	if w.poisoned != nil {
		return state.Batch{}, fmt.Errorf("writer needs Resync: %w", w.poisoned)
	}
	b := state.Batch{ID: w.prefix.BatchID + 1, FirstSeq: w.prefix.LastSeq + 1, Entries: entries}
	b.LastSeq = b.FirstSeq + uint64(len(entries)) - 1
	rec, err := EncodeBatch(b)
	if err != nil {
		return state.Batch{}, err
	}
	next := DurablePrefix{BatchID: b.ID, LastSeq: b.LastSeq}
	nextRaw := next.Encode()
	actx, cancel := context.WithTimeout(ctx, w.RequestTimeout)
	resp, err := w.appendTxn(actx, b.ID, rec, nextRaw).Commit()
	cancel()
	if err == nil {
		if resp.Succeeded {
			w.prefix, w.prefixRaw = next, nextRaw
			return b, nil
		}
		return state.Batch{}, w.classifyRejection(resp)
	}
	if errors.Is(err, rpctypes.ErrRequestTooLarge) {
		// A definite failure, not an ambiguous one. etcd (server/v3 v3.7.3,
		// etcdserver/v3_server.go, processInternalRaftRequestOnce) marshals
		// the request and returns errors.ErrRequestTooLarge when it is over
		// --max-request-bytes before it registers a wait or calls
		// s.r.Propose: the transaction never reaches the raft log. The member
		// that received it checks; a follower forwards only what passed.
		// The client does not retry a Txn after an answer from the server
		// (client/v3 retry.go, isSafeRetryMutableRPC: only Unavailable before
		// a connection exists), so no earlier copy of this request was
		// proposed either. The prefix is unchanged and the writer stays usable.
		return state.Batch{}, fmt.Errorf("%w: batch %d, a record of %d bytes: %w", ErrBatchTooLarge, b.ID, len(rec), err)
	}
	return w.resolve(b, rec, next, nextRaw, err)
}

func (w *Writer) appendTxn(ctx context.Context, id uint64, rec, nextRaw []byte) clientv3.Txn {
	prefixCmp := clientv3.Compare(clientv3.CreateRevision(w.ks.DurablePrefix()), "=", 0)
	if w.prefixRaw != nil {
		prefixCmp = clientv3.Compare(clientv3.Value(w.ks.DurablePrefix()), "=", string(w.prefixRaw))
	}
	return w.kv.Txn(ctx).If(
		clientv3.Compare(clientv3.Value(w.ks.ProducerView()), "=", w.viewRaw),
		prefixCmp,
		clientv3.Compare(clientv3.CreateRevision(w.ks.Batch(id)), "=", 0),
	).Then(
		clientv3.OpPut(w.ks.Batch(id), string(rec)),
		clientv3.OpPut(w.ks.DurablePrefix(), string(nextRaw)),
	).Else(
		clientv3.OpGet(w.ks.ProducerView()),
		clientv3.OpGet(w.ks.DurablePrefix()),
	)
}

func (w *Writer) classifyRejection(resp *clientv3.TxnResponse) error {
	if err := w.checkView(firstKV(resp.Responses[0])); err != nil {
		return err
	}
	return w.prefixMoved(firstKV(resp.Responses[1]))
}

func (w *Writer) prefixMoved(kv *mvccKV) error {
	w.poisoned = ErrPrefixMoved
	if kv == nil {
		return fmt.Errorf("%w: expected %s, key is absent", ErrPrefixMoved, w.prefixRaw)
	}
	return fmt.Errorf("%w: expected %s, found %s", ErrPrefixMoved, w.prefixRaw, kv.Value)
}

// resolve settles an append whose response was lost. It re-reads the prefix
// and the batch key: both equal to what was sent means committed; the old
// prefix and no batch means not committed (yet), so the identical transaction
// is sent again — at most one of the two copies can pass the prefix compare.
// Each read and each copy sent again is bounded by RequestTimeout, like the
// append: a proposal that a dying etcd leader dropped is never answered, and
// an unbounded copy would hold the whole ResolveTimeout on it.
func (w *Writer) resolve(b state.Batch, rec []byte, next DurablePrefix, nextRaw []byte, cause error) (state.Batch, error) {
	if w.BeforeResolve != nil {
		w.BeforeResolve(b.ID)
	}
	ctx, cancel := context.WithTimeout(context.Background(), w.ResolveTimeout)
	defer cancel()
	lastErr := cause
	for attempt := 0; ; attempt++ {
		if ctx.Err() != nil {
			w.poisoned = fmt.Errorf("%w: batch %d: %v", ErrUnknownOutcome, b.ID, lastErr)
			return state.Batch{}, w.poisoned
		}
		if attempt > 0 {
			sleepCtx(ctx, time.Duration(min(attempt, 10))*50*time.Millisecond)
		}
		rctx, rcancel := context.WithTimeout(ctx, w.RequestTimeout)
		resp, err := w.kv.Txn(rctx).Then(
			clientv3.OpGet(w.ks.ProducerView()),
			clientv3.OpGet(w.ks.DurablePrefix()),
			clientv3.OpGet(w.ks.Batch(b.ID)),
		).Commit()
		rcancel()
		if err != nil {
			lastErr = err
			continue
		}
		prefixKV, batchKV := firstKV(resp.Responses[1]), firstKV(resp.Responses[2])
		switch {
		case batchKV != nil && bytes.Equal(batchKV.Value, rec):
			// Our record is at our batch id: the append committed (the prefix may
			// have moved on since, under a newer primary).
			if sameRaw(prefixKV, nextRaw) {
				w.prefix, w.prefixRaw = next, nextRaw
				return b, nil
			}
			w.poisoned = ErrPrefixMoved
			return b, nil
		case batchKV == nil && sameRaw(prefixKV, w.prefixRaw):
			if err := w.checkView(firstKV(resp.Responses[0])); err != nil {
				return state.Batch{}, err // not committed, and never will be: the view moved
			}
			sctx, scancel := context.WithTimeout(ctx, w.RequestTimeout)
			resend, err := w.appendTxn(sctx, b.ID, rec, nextRaw).Commit()
			scancel()
			if err != nil {
				lastErr = err
				continue
			}
			if resend.Succeeded {
				w.prefix, w.prefixRaw = next, nextRaw
				return b, nil
			}
			// The first copy committed meanwhile, or someone else wrote: read again.
		case batchKV == nil && prefixKV != nil && prefixBeyond(prefixKV.Value, b.ID):
			// The prefix covers our batch id but the key is gone (pruned or lost):
			// whether it was ours cannot be told any more.
			w.poisoned = fmt.Errorf("%w: batch %d: prefix moved past it and its key is gone", ErrUnknownOutcome, b.ID)
			return state.Batch{}, w.poisoned
		default:
			// Another record holds our batch id, or the prefix moved: our
			// transaction's compares can never pass.
			if err := w.checkView(firstKV(resp.Responses[0])); err != nil {
				return state.Batch{}, err
			}
			return state.Batch{}, w.prefixMoved(prefixKV)
		}
	}
}

func prefixBeyond(raw []byte, id uint64) bool {
	p, err := DecodeDurablePrefix(raw)
	return err != nil || p.BatchID >= id
}

func sameRaw(kv *mvccKV, raw []byte) bool {
	if kv == nil {
		return raw == nil
	}
	return raw != nil && bytes.Equal(kv.Value, raw)
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// IsAmbiguous reports whether err leaves a write's outcome unknown.
func IsAmbiguous(err error) bool { return errors.Is(err, ErrUnknownOutcome) }
