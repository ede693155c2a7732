package oplog

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/oplogha/oplogha/impl/contract/keyspace"
)

// ClaimProducerView moves the producer view to one above its current value
// and returns the new view; every writer holding a lower view is fenced from
// then on. On a fresh namespace (no view, no prefix, no batch) the same
// transaction writes the zero durable prefix, the S01 zero state, so that an
// absent prefix never has to be read as empty. A malformed stored view is
// corruption and is returned as an error, never overwritten.
func ClaimProducerView(ctx context.Context, kv clientv3.KV, ks keyspace.Keyspace) (uint64, error) {
	for attempt := 0; attempt < 16; attempt++ {
		resp, err := kv.Txn(ctx).Then(
			clientv3.OpGet(ks.ProducerView()),
			clientv3.OpGet(ks.DurablePrefix()),
		).Commit()
		if err != nil {
			return 0, fmt.Errorf("read producer view: %w", err)
		}
		viewKV, prefixKV := firstKV(resp.Responses[0]), firstKV(resp.Responses[1])
		var cur uint64
		var viewRev int64
		if viewKV != nil {
			if cur, err = DecodeProducerView(viewKV.Value); err != nil {
				return 0, &RecordError{Key: ks.ProducerView(), Err: err}
			}
			viewRev = viewKV.ModRevision
		}
		if cur >= MaxProducerView {
			return 0, fmt.Errorf("producer view %d cannot grow", cur)
		}
		next := cur + 1
		cmps := []clientv3.Cmp{clientv3.Compare(clientv3.ModRevision(ks.ProducerView()), "=", viewRev)}
		ops := []clientv3.Op{clientv3.OpPut(ks.ProducerView(), string(EncodeProducerView(next)))}
		if prefixKV == nil {
			// Initialise the zero state only if the namespace holds nothing at
			// all: no batch, and none of what a history leaves (a view
			// without a prefix is such residue, never an empty cluster).
			if viewKV != nil {
				return 0, &ResidueError{Keys: []string{ks.ProducerView()}}
			}
			cmps = append(cmps,
				clientv3.Compare(clientv3.CreateRevision(ks.DurablePrefix()), "=", 0),
				clientv3.Compare(clientv3.CreateRevision(ks.BatchPrefix()), "=", 0).WithPrefix())
			for _, k := range ResidueKeys(ks) {
				cmps = append(cmps, clientv3.Compare(clientv3.CreateRevision(k), "=", 0))
			}
			ops = append(ops, clientv3.OpPut(ks.DurablePrefix(), string(DurablePrefix{}.Encode())))
		}
		put, err := kv.Txn(ctx).If(cmps...).Then(ops...).Commit()
		if err != nil {
			return 0, fmt.Errorf("claim producer view %d: %w", next, err)
		}
		if put.Succeeded {
			return next, nil
		}
		if prefixKV == nil {
			// Someone raced us (and wrote a prefix: retry), or the namespace
			// holds batches or residue without a prefix: tell them apart,
			// all read at one revision.
			p, err := kv.Txn(ctx).Then(clientv3.OpGet(ks.DurablePrefix()), clientv3.OpGet(ks.BatchPrefix(), clientv3.WithPrefix(), clientv3.WithCountOnly())).Commit()
			if err != nil {
				return 0, fmt.Errorf("read durable prefix: %w", err)
			}
			if firstKV(p.Responses[0]) != nil {
				continue
			}
			if n := p.Responses[1].GetResponseRange().Count; n > 0 {
				return 0, fmt.Errorf("claim producer view: %w (%d batch keys)", ErrNoDurablePrefix, n)
			}
			if err := checkNoResidue(ctx, kv, ks, p.Header.Revision); err != nil {
				return 0, err
			}
		}
	}
	return 0, fmt.Errorf("claim producer view: too much contention")
}

// ReadProducerView returns the current producer view (0 when absent).
func ReadProducerView(ctx context.Context, kv clientv3.KV, ks keyspace.Keyspace) (uint64, error) {
	resp, err := kv.Get(ctx, ks.ProducerView())
	if err != nil {
		return 0, fmt.Errorf("read producer view: %w", err)
	}
	if len(resp.Kvs) == 0 {
		return 0, nil
	}
	v, err := DecodeProducerView(resp.Kvs[0].Value)
	if err != nil {
		return 0, &RecordError{Key: ks.ProducerView(), Err: err}
	}
	return v, nil
}
