package runner

import (
	"context"
	"errors"
	"fmt"
	"github.com/oplogha/oplogha/harness/cluster"

	"github.com/oplogha/oplogha/impl/contract/batchlog"
	"github.com/oplogha/oplogha/impl/contract/batchsnap"
	"github.com/oplogha/oplogha/impl/contract/keyspace"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/oplogha/oplogha/harness/scenario"
)

// oplogShape is what etcd holds of the OpLog right now, read directly.
type oplogShape struct {
	Floor          uint64 // 0: no floor
	Lowest, Newest uint64 // batch keys present (0, 0 when none)
	Count          int
	Prefix         uint64 // durable prefix batch id
	// Base is the batch of the newest pointer that decodes (latest, else
	// fallback; 0: none): a bootstrap replays at least Prefix - Base.
	Base uint64
	// Rev is etcd's revision the shape was read at.
	Rev int64
}

func (s oplogShape) String() string {
	return fmt.Sprintf("floor %d, %d batch keys %d..%d, durable prefix %d, newest pointer at batch %d", s.Floor, s.Count, s.Lowest, s.Newest, s.Prefix, s.Base)
}

// Suffix is how many batches a bootstrap would replay at least.
func (s oplogShape) Suffix() uint64 { return s.Prefix - min(s.Prefix, s.Base) }

// oplogShape reads the shape through a client of the caller's; shapeNow
// dials one for a single reading.
func (r *run) oplogShape(ctx context.Context, cli *clientv3.Client, ks keyspace.Keyspace) (oplogShape, error) {
	var sh oplogShape
	resp, err := cli.Txn(ctx).Then(
		clientv3.OpGet(ks.CompactionFloor()),
		clientv3.OpGet(ks.DurablePrefix()),
		clientv3.OpGet(ks.BatchPrefix(), clientv3.WithPrefix(), clientv3.WithKeysOnly()),
		clientv3.OpGet(ks.SnapshotLatest()),
		clientv3.OpGet(ks.SnapshotFallback()),
	).Commit()
	if err != nil {
		return sh, err
	}
	sh.Rev = resp.Header.Revision
	if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
		f, err := batchsnap.DecodeFloor(kvs[0].Value)
		if err != nil {
			return sh, fmt.Errorf("compaction floor: %w", err)
		}
		sh.Floor = f.BatchID
	}
	if kvs := resp.Responses[1].GetResponseRange().Kvs; len(kvs) > 0 {
		p, err := batchlog.DecodeDurablePrefix(kvs[0].Value)
		if err != nil {
			return sh, fmt.Errorf("durable prefix: %w", err)
		}
		sh.Prefix = p.BatchID
	}
	for _, kv := range resp.Responses[2].GetResponseRange().Kvs {
		id, ok := ks.ParseBatch(string(kv.Key))
		if !ok {
			continue
		}
		if sh.Count == 0 || id < sh.Lowest {
			sh.Lowest = id
		}
		sh.Newest = max(sh.Newest, id)
		sh.Count++
	}
	for _, i := range []int{3, 4} {
		if kvs := resp.Responses[i].GetResponseRange().Kvs; len(kvs) > 0 {
			if p, err := batchsnap.DecodePointer(kvs[0].Value); err == nil {
				sh.Base = max(sh.Base, p.LastIncludedBatchID)
			}
		}
	}
	return sh, nil
}

// pollShape polls the OpLog's shape, through one etcd client, until done
// says it holds (its string says why not, for the timeout's error).
func (r *run) pollShape(ctx context.Context, done func(oplogShape) (bool, string)) error {
	cli, ks, err := r.etcd()
	if err != nil {
		return err
	}
	defer cli.Close()
	return poll(ctx, func() (bool, string) {
		cctx, cancel := context.WithTimeout(ctx, cluster.CallTimeout)
		defer cancel()
		sh, err := r.oplogShape(cctx, cli, ks)
		if err != nil {
			return false, err.Error()
		}
		return done(sh)
	})
}

func (r *run) shapeNow(ctx context.Context) (oplogShape, error) {
	cli, ks, err := r.etcd()
	if err != nil {
		return oplogShape{}, err
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(ctx, cluster.CallTimeout)
	defer cancel()
	return r.oplogShape(ctx, cli, ks)
}

func (r *run) assertOplog(ctx context.Context, a *scenario.OplogAssert) error {
	sh, err := r.shapeNow(ctx)
	if err != nil {
		return err
	}
	var errs []error
	if a.Complete != nil {
		complete := sh.Floor == 0 && (sh.Prefix == 0 || (sh.Lowest == 1 && sh.Count == int(sh.Prefix)))
		if complete != *a.Complete {
			errs = append(errs, fmt.Errorf("complete OpLog: %v, want %v", complete, *a.Complete))
		}
	}
	if sh.Floor < a.FloorMin {
		errs = append(errs, fmt.Errorf("floor %d below %d", sh.Floor, a.FloorMin))
	}
	if a.BelowFloor != nil {
		below := sh.Floor > 0 && sh.Count > 0 && sh.Lowest <= sh.Floor
		if below != *a.BelowFloor {
			errs = append(errs, fmt.Errorf("batches at or below the floor present: %v, want %v", below, *a.BelowFloor))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("oplog (%s): %w", sh, err)
	}
	r.events.add("check", "oplog", "etcd", sh.String(), true)
	return nil
}
