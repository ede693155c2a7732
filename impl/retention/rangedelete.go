package retention

import (
	"context"
	"fmt"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/oplogha/oplogha/impl/contract/keyspace"
	"github.com/oplogha/oplogha/impl/oplog"
)

// DeleteGuard is what a guarded range delete must find in etcd for the
// delete to commit.
type DeleteGuard struct {
	// ProducerView is the view the caller observed; a different current view
	// fences the delete.
	ProducerView uint64
	// RequireFloor makes the delete commit only if the compaction floor as read
	// covers the range (floor >= through) and is unchanged at commit. The
	// retention cycle always sets it: the floor is visible before data goes.
	RequireFloor bool
	// WriterToken, when set, makes the delete commit only while the
	// maintenance lease's maintenance key holds this token (ErrWriterFenced).
	WriterToken string
	// Pointers, when set, makes the delete commit only while both pointer
	// slots hold the values the caller validated (ErrPointersMoved).
	Pointers *Pointers
}

// DeleteResult reports a committed delete.
type DeleteResult struct {
	Through  uint64 // batches 1..=Through are gone
	Deleted  int64  // keys this transaction removed (0 when already pruned)
	Revision int64
}

// DeleteThrough deletes batch keys 1..=through in one transaction, with the
// range end set exactly at batch through+1. It refuses to delete the durable
// prefix's batch (through must be below it) and commits only while the
// producer view equals guard.ProducerView and, when required, the floor
// covering the range is unchanged. Appends racing with it write keys above the
// prefix, outside the range, so they are never deleted.
func DeleteThrough(ctx context.Context, kv clientv3.KV, ks keyspace.Keyspace, through uint64, guard DeleteGuard) (DeleteResult, error) {
	if through == 0 {
		return DeleteResult{}, fmt.Errorf("range delete through batch 0: nothing to delete")
	}
	resp, err := kv.Txn(ctx).Then(
		clientv3.OpGet(ks.DurablePrefix()),
		clientv3.OpGet(ks.CompactionFloor()),
		clientv3.OpGet(ks.ProducerView()),
	).Commit()
	if err != nil {
		return DeleteResult{}, fmt.Errorf("range delete: read guards: %w", err)
	}
	prefixKV, floorKV, viewKV := firstKV(resp.Responses[0]), firstKV(resp.Responses[1]), firstKV(resp.Responses[2])
	if prefixKV == nil {
		return DeleteResult{}, fmt.Errorf("range delete: %w", oplog.ErrNoDurablePrefix)
	}
	prefix, err := oplog.DecodeDurablePrefix(prefixKV.Value)
	if err != nil {
		return DeleteResult{}, &oplog.RecordError{Key: ks.DurablePrefix(), Err: err}
	}
	if through >= prefix.BatchID {
		return DeleteResult{}, fmt.Errorf("%w: through %d, durable prefix %d", ErrWouldDeletePrefix, through, prefix.BatchID)
	}
	viewRaw := string(oplog.EncodeProducerView(guard.ProducerView))
	if viewKV == nil || string(viewKV.Value) != viewRaw {
		cur := uint64(0)
		if viewKV != nil {
			cur, _ = oplog.DecodeProducerView(viewKV.Value)
		}
		return DeleteResult{}, &oplog.FencedError{Mine: guard.ProducerView, Current: cur}
	}
	cmps := []clientv3.Cmp{clientv3.Compare(clientv3.Value(ks.ProducerView()), "=", viewRaw)}
	if guard.RequireFloor {
		if floorKV == nil {
			return DeleteResult{}, fmt.Errorf("%w: no floor published, through %d", ErrFloorBelow, through)
		}
		f, err := oplog.DecodeFloor(floorKV.Value)
		if err != nil {
			return DeleteResult{}, &oplog.RecordError{Key: ks.CompactionFloor(), Err: err}
		}
		if f.BatchID < through {
			return DeleteResult{}, fmt.Errorf("%w: floor %d, through %d", ErrFloorBelow, f.BatchID, through)
		}
		cmps = append(cmps, clientv3.Compare(clientv3.Value(ks.CompactionFloor()), "=", string(floorKV.Value)))
	}
	if guard.WriterToken != "" {
		cmps = append(cmps, clientv3.Compare(clientv3.Value(ks.SnapshotMaintenance()), "=", guard.WriterToken))
	}
	if guard.Pointers != nil {
		cmps = append(cmps, guard.Pointers.compares(ks)...)
	}
	del, err := kv.Txn(ctx).If(cmps...).Then(
		clientv3.OpDelete(ks.Batch(1), clientv3.WithRange(ks.Batch(through+1))),
	).Else(
		clientv3.OpGet(ks.ProducerView()),
		clientv3.OpGet(ks.SnapshotMaintenance()),
		clientv3.OpGet(ks.SnapshotLatest()),
		clientv3.OpGet(ks.SnapshotFallback()),
	).Commit()
	if err != nil {
		return DeleteResult{}, fmt.Errorf("range delete through %d: %w", through, err)
	}
	if !del.Succeeded {
		if w := firstKV(del.Responses[1]); guard.WriterToken != "" && (w == nil || string(w.Value) != guard.WriterToken) {
			return DeleteResult{}, fmt.Errorf("%w: range delete through %d", ErrWriterFenced, through)
		}
		if v := firstKV(del.Responses[0]); v == nil || string(v.Value) != viewRaw {
			cur := uint64(0)
			if v != nil {
				cur, _ = oplog.DecodeProducerView(v.Value)
			}
			return DeleteResult{}, &oplog.FencedError{Mine: guard.ProducerView, Current: cur}
		}
		if p := guard.Pointers; p != nil && (!sameSlot(del.Responses[2], p.Latest) || !sameSlot(del.Responses[3], p.Fallback)) {
			return DeleteResult{}, fmt.Errorf("range delete through %d: %w", through, ErrPointersMoved)
		}
		return DeleteResult{}, fmt.Errorf("range delete through %d: %w", through, ErrFloorMoved)
	}
	return DeleteResult{Through: through, Deleted: del.Responses[0].GetResponseDeleteRange().Deleted, Revision: del.Header.Revision}, nil
}

// firstKV is the first key of a transaction's range response, nil when none.
func firstKV(r *pb.ResponseOp) *mvccpb.KeyValue {
	if kvs := r.GetResponseRange().GetKvs(); len(kvs) > 0 {
		return kvs[0]
	}
	return nil
}
