package retention

import (
	"context"
	"errors"
	"fmt"
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"

	"github.com/oplogha/oplogha/impl/contract/batchsnap"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/oplogha/oplogha/impl/contract/keyspace"
	"github.com/oplogha/oplogha/impl/oplog"
	"github.com/oplogha/oplogha/impl/publish"
)

// The compaction floor only moves up, and only here: CASFloor in a
// retention cycle, InitialFloorOp in the one transaction that installs a
// legacy import (the floor at the imported batch). Its record is
// batchsnap.Floor; ReadFloor reads it.

// ReadFloor is the compaction floor's batch (0 when there is no floor). A
// floor that does not decode is an error naming its key: nothing may be
// published or pruned against a record that cannot be read.
func ReadFloor(ctx context.Context, kv clientv3.KV, ks keyspace.Keyspace) (uint64, error) {
	resp, err := kv.Get(ctx, ks.CompactionFloor())
	if err != nil || len(resp.Kvs) == 0 {
		return 0, err
	}
	f, err := oplog.DecodeFloor(resp.Kvs[0].Value)
	if err != nil {
		return 0, &oplog.RecordError{Key: ks.CompactionFloor(), Err: err}
	}
	return f.BatchID, nil
}

// InitialFloorOp writes the first floor, at batch: a transaction that
// installs an imported history puts it beside the pointer it covers (the
// caller compares that no floor exists).
func InitialFloorOp(ks keyspace.Keyspace, batch uint64) clientv3.Op {
	return clientv3.OpPut(ks.CompactionFloor(), string(batchsnap.Floor{BatchID: batch}.Encode()))
}

// Pointers are the raw values of both pointer slots a cycle validated:
// its floor CAS and range delete compare them, so neither commits once a
// slot changed (nil: the slot was absent).
type Pointers struct{ Latest, Fallback []byte }

// compares are the transaction compares that hold the slots to p.
func (p Pointers) compares(ks keyspace.Keyspace) []clientv3.Cmp {
	return []clientv3.Cmp{publish.CompareRaw(ks.SnapshotLatest(), p.Latest), publish.CompareRaw(ks.SnapshotFallback(), p.Fallback)}
}

// CASFloor moves the floor to target if it is below it and returns the
// floor after the call; it never decreases it (moved is false when the
// floor already covers target). The transaction compares the writer token
// (a cycle whose lease was lost moves nothing: ErrLeaseLost), the floor as
// observed (observed nil: no floor yet) and both pointer slots as the
// cycle validated them (ErrPointersMoved).
func CASFloor(ctx context.Context, kv clientv3.KV, ks keyspace.Keyspace, token string, observed []byte, target uint64, ptrs Pointers) (uint64, bool, error) {
	cmp := clientv3.Compare(clientv3.CreateRevision(ks.CompactionFloor()), "=", 0)
	if observed != nil {
		cur, err := oplog.DecodeFloor(observed)
		if err != nil {
			return 0, false, &oplog.RecordError{Key: ks.CompactionFloor(), Err: err}
		}
		if cur.BatchID >= target {
			return cur.BatchID, false, nil
		}
		cmp = clientv3.Compare(clientv3.Value(ks.CompactionFloor()), "=", string(observed))
	}
	cmps := append([]clientv3.Cmp{cmp, clientv3.Compare(clientv3.Value(ks.SnapshotMaintenance()), "=", token)}, ptrs.compares(ks)...)
	put, err := kv.Txn(ctx).If(cmps...).
		Then(clientv3.OpPut(ks.CompactionFloor(), string(batchsnap.Floor{BatchID: target}.Encode()))).
		Else(clientv3.OpGet(ks.SnapshotMaintenance()), clientv3.OpGet(ks.SnapshotLatest()), clientv3.OpGet(ks.SnapshotFallback())).Commit()
	if err != nil {
		return 0, false, err
	}
	if !put.Succeeded {
		if kvs := put.Responses[0].GetResponseRange().Kvs; len(kvs) == 0 || string(kvs[0].Value) != token {
			return 0, false, fmt.Errorf("%w: floor CAS to %d refused", ErrLeaseLost, target)
		}
		if !sameSlot(put.Responses[1], ptrs.Latest) || !sameSlot(put.Responses[2], ptrs.Fallback) {
			return 0, false, fmt.Errorf("%w: floor CAS to %d refused", ErrPointersMoved, target)
		}
		return 0, false, errors.New("floor changed concurrently")
	}
	return target, true, nil
}

// sameSlot reports whether a range response holds raw (nil: absent).
func sameSlot(r *pb.ResponseOp, raw []byte) bool {
	kv := firstKV(r)
	if kv == nil {
		return raw == nil
	}
	return raw != nil && string(kv.Value) == string(raw)
}
