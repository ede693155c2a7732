package faults

import (
	"context"
	"fmt"
	"strings"

	"github.com/oplogha/oplogha/impl/contract/batchlog"
	"github.com/oplogha/oplogha/impl/contract/keyspace"
)

// pointerKey is the key of a pointer slot, latest or fallback (the callers
// validate the slot).
func pointerKey(ks keyspace.Keyspace, slot string) string {
	if slot == "fallback" {
		return ks.SnapshotFallback()
	}
	return ks.SnapshotLatest()
}

// shortKey is key without the namespace root, as reports name keys
// ("durable_prefix", "batches/00000000000000000004").
func shortKey(ks keyspace.Keyspace, key string) string {
	return strings.TrimPrefix(key, ks.Root()+"/")
}

// durableBatch is the batch id of the durable prefix (through contract's
// decoder); ErrUnavailable when there is no durable batch.
func durableBatch(ctx context.Context, env Env) (uint64, error) {
	raw, err := env.EtcdGet(ctx, env.Keyspace().DurablePrefix())
	if err != nil {
		return 0, err
	}
	if raw == nil {
		return 0, fmt.Errorf("%w: no durable prefix", ErrUnavailable)
	}
	p, err := batchlog.DecodeDurablePrefix(raw)
	if err != nil || p.BatchID == 0 {
		return 0, fmt.Errorf("%w: no durable batch", ErrUnavailable)
	}
	return p.BatchID, nil
}
