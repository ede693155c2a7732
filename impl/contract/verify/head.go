package verify

import (
	"context"
	"fmt"

	"github.com/oplogha/oplogha/impl/contract/batchlog"
	"github.com/oplogha/oplogha/impl/contract/batchsnap"
	"github.com/oplogha/oplogha/impl/contract/keyspace"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// head is the namespace's single keys, read in one transaction: the
// revision every later read is pinned to.
type head struct {
	revision int64

	prefixRaw []byte // nil: absent
	prefix    batchlog.DurablePrefix
	prefixOK  bool // present and decoded

	viewRaw []byte
	view    int64

	floorRaw []byte
	floor    uint64
	floorOK  bool

	imported bool // the legacy import record is present

	slots []slot // latest, fallback
}

// slot is one pointer key.
type slot struct {
	name, key string
	raw       []byte // nil: absent
	p         *batchsnap.Pointer
}

func readHead(ctx context.Context, kv clientv3.KV, ks keyspace.Keyspace) (*head, error) {
	keys := []string{ks.DurablePrefix(), ks.ProducerView(), ks.CompactionFloor(), ks.SnapshotLatest(), ks.SnapshotFallback(), ks.LegacyImport()}
	ops := make([]clientv3.Op, len(keys))
	for i, k := range keys {
		ops[i] = clientv3.OpGet(k)
	}
	resp, err := kv.Txn(ctx).Then(ops...).Commit()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", ks.Root(), err)
	}
	val := func(i int) []byte {
		kvs := resp.Responses[i].GetResponseRange().Kvs
		if len(kvs) == 0 {
			return nil
		}
		return value(kvs[0])
	}
	h := &head{revision: resp.Header.Revision, prefixRaw: val(0), viewRaw: val(1), floorRaw: val(2)}
	h.slots = []slot{{name: "latest", key: keys[3], raw: val(3)}, {name: "fallback", key: keys[4], raw: val(4)}}
	h.imported = val(5) != nil
	return h, nil
}

// value is a key's value, never nil for a present key (an empty value is
// present).
func value(kv *mvccpb.KeyValue) []byte {
	if kv.Value == nil {
		return []byte{}
	}
	return kv.Value
}

// judge decodes the single keys and records what they say.
func (h *head) judge(rep *Report, ks keyspace.Keyspace) {
	if h.prefixRaw != nil {
		rep.PrefixPresent = true
		p, err := batchlog.DecodeDurablePrefix(h.prefixRaw)
		switch {
		case err != nil:
			rep.violate(ks.DurablePrefix(), "durable prefix does not decode: %v", err)
		case (p.BatchID == 0) != (p.LastSeq == 0):
			rep.violate(ks.DurablePrefix(), "durable prefix batch_id %d with last_seq %d: both zero or neither (upstream refuses to start)", p.BatchID, p.LastSeq)
		default:
			h.prefix, h.prefixOK = p, true
			rep.Prefix = p
		}
	}
	if h.viewRaw != nil {
		v, err := batchlog.DecodeProducerView(h.viewRaw)
		if err != nil {
			rep.violate(ks.ProducerView(), "producer view does not decode: %v", err)
		} else {
			h.view, rep.View = v, v
		}
	}
	if h.floorRaw != nil {
		rep.FloorPresent = true
		f, err := batchsnap.DecodeFloor(h.floorRaw)
		if err != nil {
			rep.violate(ks.CompactionFloor(), "compaction floor does not decode: %v", err)
		} else {
			h.floor, h.floorOK, rep.Floor = f.BatchID, true, f.BatchID
		}
	}
	for i := range h.slots {
		s := &h.slots[i]
		if s.raw == nil {
			continue
		}
		p, err := batchsnap.DecodePointer(s.raw)
		if err != nil {
			rep.violate(s.key, "%s pointer does not decode: %v", s.name, err)
			continue
		}
		s.p = &p
	}
}

// snapshotKeys reports whether any key of the RFC's snapshot protocol is
// present (then the producer view is required for fencing).
func (h *head) snapshotKeys() bool {
	return h.floorRaw != nil || h.slots[0].raw != nil || h.slots[1].raw != nil
}
