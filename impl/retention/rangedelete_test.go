package retention

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/oplogha/oplogha/impl/contract/keyspace"
	"github.com/oplogha/oplogha/impl/internal/etcdtest"
	"github.com/oplogha/oplogha/impl/oplog"
	"github.com/oplogha/oplogha/impl/state"
)

func newWriter(t *testing.T, kv clientv3.KV, ks keyspace.Keyspace) *oplog.Writer {
	t.Helper()
	ctx := ctxT(t)
	view, err := oplog.ClaimProducerView(ctx, kv, ks)
	require.NoError(t, err)
	w, err := oplog.NewWriter(ctx, kv, ks, view)
	require.NoError(t, err)
	return w
}

func appendN(t *testing.T, w *oplog.Writer, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		_, err := w.Append(ctxT(t), []state.Entry{state.PutRevoke("t", fmt.Sprintf("k%d", i))})
		require.NoError(t, err)
	}
}

func batchIDs(t *testing.T, kv clientv3.KV, ks keyspace.Keyspace) []uint64 {
	t.Helper()
	resp, err := kv.Get(ctxT(t), ks.BatchPrefix(), clientv3.WithPrefix(), clientv3.WithKeysOnly())
	require.NoError(t, err)
	var ids []uint64
	for _, kv := range resp.Kvs {
		id, ok := ks.ParseBatch(string(kv.Key))
		require.True(t, ok)
		ids = append(ids, id)
	}
	return ids
}

func putRaw(t *testing.T, kv clientv3.KV, key, val string) {
	t.Helper()
	_, err := kv.Put(ctxT(t), key, val)
	require.NoError(t, err)
}

// stateTx stages a group commit's entries on a state behind a mutex.
type stateTx struct {
	mu *sync.Mutex
	s  *state.State
	tx *state.Tx
}

func (x stateTx) Stage(e state.Entry) error { return x.tx.Stage(e) }
func (x stateTx) Commit(b state.Batch) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.s.Commit(x.tx, b)
}

func newCommitter(t *testing.T, w *oplog.Writer, max int) (*oplog.GroupCommitter, *state.State, *sync.Mutex) {
	s, mu := state.New(), &sync.Mutex{}
	g := oplog.NewGroupCommitter(w, func() oplog.Tx {
		mu.Lock()
		defer mu.Unlock()
		return stateTx{mu: mu, s: s, tx: s.Begin()}
	}, oplog.Limits{MaxEntries: max}, oplog.Hooks{})
	t.Cleanup(g.Close)
	return g, s, mu
}

func TestRangeDeleteRespectsBoundAndFence(t *testing.T) {
	srv := etcdtest.Start(t)
	ks := keyspace.Must("prune")
	ctx := ctxT(t)
	w := newWriter(t, srv.Client, ks)
	appendN(t, w, 10)
	g := DeleteGuard{ProducerView: w.View()}

	_, err := DeleteThrough(ctx, srv.Client, ks, 10, g)
	require.ErrorIs(t, err, ErrWouldDeletePrefix)
	_, err = DeleteThrough(ctx, srv.Client, ks, 11, g)
	require.ErrorIs(t, err, ErrWouldDeletePrefix)
	_, err = DeleteThrough(ctx, srv.Client, ks, 4, DeleteGuard{ProducerView: w.View() + 1})
	require.ErrorIs(t, err, oplog.ErrFenced)
	_, err = DeleteThrough(ctx, srv.Client, ks, 4, DeleteGuard{ProducerView: w.View(), RequireFloor: true})
	require.ErrorIs(t, err, ErrFloorBelow, "no floor published yet")
	putRaw(t, srv.Client, ks.CompactionFloor(), string(oplog.Floor{BatchID: 3}.Encode()))
	_, err = DeleteThrough(ctx, srv.Client, ks, 4, DeleteGuard{ProducerView: w.View(), RequireFloor: true})
	require.ErrorIs(t, err, ErrFloorBelow, "floor 3 does not cover 4")
	require.Len(t, batchIDs(t, srv.Client, ks), 10, "refused deletes removed nothing")

	res, err := DeleteThrough(ctx, srv.Client, ks, 3, DeleteGuard{ProducerView: w.View(), RequireFloor: true})
	require.NoError(t, err)
	require.Equal(t, int64(3), res.Deleted)
	require.Equal(t, []uint64{4, 5, 6, 7, 8, 9, 10}, batchIDs(t, srv.Client, ks))
	res, err = DeleteThrough(ctx, srv.Client, ks, 9, g)
	require.NoError(t, err)
	require.Equal(t, int64(6), res.Deleted)
	require.Equal(t, []uint64{10}, batchIDs(t, srv.Client, ks), "the prefix's batch stays")
	res, err = DeleteThrough(ctx, srv.Client, ks, 9, g)
	require.NoError(t, err)
	require.Zero(t, res.Deleted, "a retry is harmless")

	// A new primary fences deletes made with the old view.
	w2 := newWriter(t, srv.Client, ks)
	appendN(t, w2, 2)
	_, err = DeleteThrough(ctx, srv.Client, ks, 11, g)
	require.ErrorIs(t, err, oplog.ErrFenced)
	r := &oplog.Reader{KV: srv.Client, Keyspace: ks}
	n := 0
	_, err = r.Scan(ctx, state.Cursor{BatchID: 10, Seq: 10}, func(state.Batch) error { n++; return nil })
	require.NoError(t, err)
	require.Equal(t, 2, n)
}

func TestConcurrentAppendsDuringRangeDeleteLoseNothing(t *testing.T) {
	srv := etcdtest.Start(t)
	ks := keyspace.Must("race")
	ctx := ctxT(t)
	w := newWriter(t, srv.Client, ks)
	g, s, mu := newCommitter(t, w, 16)

	const writers, each = 4, 150
	var wg sync.WaitGroup
	acked := make(chan oplog.Committed, writers*each)
	for c := 0; c < writers; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				res, err := g.Submit(ctx, state.PutRevoke("t", fmt.Sprintf("w%d-%d", c, i)))
				if err != nil {
					t.Errorf("submit: %v", err)
					return
				}
				acked <- res
			}
		}()
	}
	// Prune continuously behind the writers: floor first, then the guarded delete.
	stop := make(chan struct{})
	var pruned atomic.Uint64
	var deletes atomic.Int64
	pruneDone := make(chan struct{})
	go func() {
		defer close(pruneDone)
		r := &oplog.Reader{KV: srv.Client, Keyspace: ks}
		for {
			select {
			case <-stop:
				return
			default:
			}
			h, err := r.ReadHead(ctx)
			if err != nil || h.Prefix.BatchID < 3 {
				continue
			}
			through := h.Prefix.BatchID - 2
			if _, err := srv.Client.Put(ctx, ks.CompactionFloor(), string(oplog.Floor{BatchID: through}.Encode())); err != nil {
				t.Errorf("floor: %v", err)
				return
			}
			_, err = DeleteThrough(ctx, srv.Client, ks, through, DeleteGuard{ProducerView: w.View(), RequireFloor: true})
			if err != nil {
				t.Errorf("delete through %d: %v", through, err)
				return
			}
			pruned.Store(through)
			deletes.Add(1)
			time.Sleep(2 * time.Millisecond)
		}
	}()
	wg.Wait()
	close(stop)
	<-pruneDone
	close(acked)
	require.Greater(t, deletes.Load(), int64(5), "deletes really raced the appends")

	mu.Lock()
	prefix := s.Cursor()
	mu.Unlock()
	through := pruned.Load()
	ids := batchIDs(t, srv.Client, ks)
	require.Equal(t, through+1, ids[0], "nothing at or below the bound survives, nothing above it is gone")
	require.Equal(t, prefix.BatchID, ids[len(ids)-1])
	require.Len(t, ids, int(prefix.BatchID-through))
	// Every acknowledged entry above the pruned bound is in the log exactly where it was acknowledged.
	r := &oplog.Reader{KV: srv.Client, Keyspace: ks}
	resp, err := srv.Client.Get(ctx, ks.Batch(through))
	require.NoError(t, err)
	require.Empty(t, resp.Kvs)
	bySeq := map[uint64]bool{}
	var from state.Cursor
	first, err := srv.Client.Get(ctx, ks.Batch(through+1))
	require.NoError(t, err)
	fb, err := oplog.DecodeBatch(first.Kvs[0].Value)
	require.NoError(t, err)
	from = state.Cursor{BatchID: through, Seq: fb.FirstSeq - 1}
	_, err = r.Scan(ctx, from, func(b state.Batch) error {
		for i := range b.Entries {
			bySeq[b.FirstSeq+uint64(i)] = true
		}
		return nil
	})
	require.NoError(t, err)
	n := 0
	for a := range acked {
		n++
		if a.BatchID > through {
			require.True(t, bySeq[a.Seq], "acknowledged seq %d (batch %d) missing", a.Seq, a.BatchID)
		}
	}
	require.Equal(t, writers*each, n)
}
