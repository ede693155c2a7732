package oplog

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/oplogha/oplogha/impl/contract"
	"github.com/oplogha/oplogha/impl/contract/keyspace"
	"github.com/oplogha/oplogha/impl/internal/etcdtest"
	"github.com/oplogha/oplogha/impl/state"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func newWriter(t *testing.T, kv clientv3.KV, ks keyspace.Keyspace) *Writer {
	t.Helper()
	ctx := ctxT(t)
	view, err := ClaimProducerView(ctx, kv, ks)
	require.NoError(t, err)
	w, err := NewWriter(ctx, kv, ks, view)
	require.NoError(t, err)
	return w
}

func removeEntry(i int) state.Entry { return state.PutRevoke("t", fmt.Sprintf("k%d", i)) }

func TestAppendAndReadBack10kBatches(t *testing.T) {
	srv := etcdtest.Start(t)
	ks := keyspace.Must("c10k")
	ctx := ctxT(t)
	w := newWriter(t, srv.Client, ks)
	const n = 10_000
	for i := 1; i <= n; i++ {
		entries := make([]state.Entry, 1+i%3)
		for j := range entries {
			entries[j] = removeEntry(i*10 + j)
		}
		b, err := w.Append(ctx, entries)
		require.NoError(t, err)
		require.Equal(t, uint64(i), b.ID)
	}
	r := &Reader{KV: srv.Client, Keyspace: ks, PageSize: 333}
	var got []state.Batch
	head, err := r.ReadAll(ctx, func(b state.Batch) error { got = append(got, b); return nil })
	require.NoError(t, err)
	require.Len(t, got, n)
	require.Equal(t, w.Prefix(), head.Prefix)
	seq := uint64(0)
	for i, b := range got {
		require.Equal(t, uint64(i+1), b.ID)
		require.Equal(t, seq+1, b.FirstSeq)
		require.Len(t, b.Entries, 1+(i+1)%3)
		require.Equal(t, removeEntry((i+1)*10), b.Entries[0])
		seq = b.LastSeq
	}
	// Reading on from a middle cursor returns exactly the suffix.
	var suffix int
	_, err = r.Scan(ctx, got[n-11].Cursor(), func(state.Batch) error { suffix++; return nil })
	require.NoError(t, err)
	require.Equal(t, 10, suffix)
}

func TestZeroStateIsWrittenAndRead(t *testing.T) {
	srv := etcdtest.Start(t)
	ks := keyspace.Must("zero")
	ctx := ctxT(t)
	r := &Reader{KV: srv.Client, Keyspace: ks}
	h, err := r.ReadHead(ctx)
	require.NoError(t, err)
	require.False(t, h.Present, "fresh namespace")
	_ = newWriter(t, srv.Client, ks)
	h, err = r.ReadHead(ctx)
	require.NoError(t, err)
	require.True(t, h.Present)
	require.Equal(t, DurablePrefix{}, h.Prefix)
	calls := 0
	_, err = r.ReadAll(ctx, func(state.Batch) error { calls++; return nil })
	require.NoError(t, err)
	require.Zero(t, calls)
}

func TestStaleProducerViewIsFenced(t *testing.T) {
	srv := etcdtest.Start(t)
	ks := keyspace.Must("fence")
	ctx := ctxT(t)
	old := newWriter(t, srv.Client, ks)
	_, err := old.Append(ctx, []state.Entry{removeEntry(1)})
	require.NoError(t, err)
	newer := newWriter(t, srv.Client, ks)
	require.Greater(t, newer.View(), old.View())

	_, err = old.Append(ctx, []state.Entry{removeEntry(2)})
	var fe *FencedError
	require.ErrorAs(t, err, &fe)
	require.ErrorIs(t, err, ErrFenced)
	require.Equal(t, newer.View(), fe.Current)
	b, err := newer.Append(ctx, []state.Entry{removeEntry(3)})
	require.NoError(t, err)
	require.Equal(t, uint64(2), b.ID, "the fenced append left no trace")
	// A writer cannot even start on a stale view.
	_, err = NewWriter(ctx, srv.Client, ks, old.View())
	require.ErrorIs(t, err, ErrFenced)
}

func TestLostPrefixCompareFailsCleanly(t *testing.T) {
	srv := etcdtest.Start(t)
	ks := keyspace.Must("prefix")
	ctx := ctxT(t)
	w := newWriter(t, srv.Client, ks)
	_, err := w.Append(ctx, []state.Entry{removeEntry(1)})
	require.NoError(t, err)
	// A second writer on the same view (a bug the compare must catch) moves the prefix.
	twin, err := NewWriter(ctx, srv.Client, ks, w.View())
	require.NoError(t, err)
	_, err = twin.Append(ctx, []state.Entry{removeEntry(2)})
	require.NoError(t, err)

	_, err = w.Append(ctx, []state.Entry{removeEntry(3)})
	require.ErrorIs(t, err, ErrPrefixMoved)
	// The writer refuses to go on until it resyncs, then appends after the twin.
	_, err = w.Append(ctx, []state.Entry{removeEntry(4)})
	require.ErrorIs(t, err, ErrPrefixMoved)
	require.NoError(t, w.Resync(ctx))
	b, err := w.Append(ctx, []state.Entry{removeEntry(5)})
	require.NoError(t, err)
	require.Equal(t, uint64(3), b.ID)
	requireContinuous(t, srv.Client, ks, 3)
}

// lossyKV is a real etcd client whose next txn commits are made to fail: with
// commitThenLose the transaction reaches etcd and only the response is lost;
// otherwise it fails before being sent. failReads makes the resolver's reads
// fail too. dropNext write commits are never answered: they wait for their
// context and write nothing, as a proposal a dying etcd leader dropped.
type lossyKV struct {
	clientv3.KV
	mu             sync.Mutex
	loseNext       int
	commitThenLose bool
	failReads      bool
	dropNext       int
}

func (l *lossyKV) Txn(ctx context.Context) clientv3.Txn {
	return &lossyTxn{Txn: l.KV.Txn(ctx), l: l, ctx: ctx}
}

type lossyTxn struct {
	clientv3.Txn
	l      *lossyKV
	ctx    context.Context
	writes bool
}

func (t *lossyTxn) If(cs ...clientv3.Cmp) clientv3.Txn { t.Txn = t.Txn.If(cs...); return t }
func (t *lossyTxn) Then(ops ...clientv3.Op) clientv3.Txn {
	for _, op := range ops {
		if op.IsPut() || op.IsDelete() {
			t.writes = true
		}
	}
	t.Txn = t.Txn.Then(ops...)
	return t
}
func (t *lossyTxn) Else(ops ...clientv3.Op) clientv3.Txn { t.Txn = t.Txn.Else(ops...); return t }

func (t *lossyTxn) Commit() (*clientv3.TxnResponse, error) {
	t.l.mu.Lock()
	if t.writes && t.l.dropNext > 0 {
		t.l.dropNext--
		t.l.mu.Unlock()
		<-t.ctx.Done()
		return nil, t.ctx.Err()
	}
	defer t.l.mu.Unlock()
	if !t.writes {
		if t.l.failReads {
			return nil, errors.New("injected: read unavailable")
		}
		return t.Txn.Commit()
	}
	if t.l.loseNext == 0 {
		return t.Txn.Commit()
	}
	t.l.loseNext--
	if t.l.commitThenLose {
		_, _ = t.Txn.Commit()
		return nil, errors.New("injected: response lost after commit")
	}
	return nil, errors.New("injected: request lost before commit")
}

func TestAmbiguousCommitIsResolvedByReread(t *testing.T) {
	for _, committed := range []bool{true, false} {
		t.Run(fmt.Sprintf("committed=%v", committed), func(t *testing.T) {
			srv := etcdtest.Start(t)
			ks := keyspace.Must("ambig")
			ctx := ctxT(t)
			lossy := &lossyKV{KV: srv.Client}
			w := newWriter(t, lossy, ks)
			_, err := w.Append(ctx, []state.Entry{removeEntry(1)})
			require.NoError(t, err)
			lossy.mu.Lock()
			lossy.loseNext, lossy.commitThenLose = 1, committed
			lossy.mu.Unlock()
			b, err := w.Append(ctx, []state.Entry{removeEntry(2)})
			require.NoError(t, err, "re-read resolves the lost response")
			require.Equal(t, uint64(2), b.ID)
			b, err = w.Append(ctx, []state.Entry{removeEntry(3)})
			require.NoError(t, err)
			require.Equal(t, uint64(3), b.ID)
			requireContinuous(t, srv.Client, ks, 3)
		})
	}
}

// A write etcd never answers (a dying leader dropped the proposal) times out
// after RequestTimeout; so does each copy the resolver sends again, so a
// second dropped copy costs one RequestTimeout, not the whole ResolveTimeout.
func TestDroppedProposalsAreSentAgain(t *testing.T) {
	srv := etcdtest.Start(t)
	ks := keyspace.Must("dropped")
	ctx := ctxT(t)
	lossy := &lossyKV{KV: srv.Client}
	w := newWriter(t, lossy, ks)
	w.RequestTimeout, w.ResolveTimeout = 100*time.Millisecond, 2*time.Second
	lossy.mu.Lock()
	lossy.dropNext = 2 // the append and the resolver's first copy
	lossy.mu.Unlock()
	b, err := w.Append(ctx, []state.Entry{removeEntry(1)})
	require.NoError(t, err, "the resolver's next copy lands")
	require.Equal(t, uint64(1), b.ID)
	b, err = w.Append(ctx, []state.Entry{removeEntry(2)})
	require.NoError(t, err)
	require.Equal(t, uint64(2), b.ID)
	requireContinuous(t, srv.Client, ks, 2)
}

func TestUnresolvableCommitIsUnknownUntilResync(t *testing.T) {
	srv := etcdtest.Start(t)
	ks := keyspace.Must("unknown")
	ctx := ctxT(t)
	lossy := &lossyKV{KV: srv.Client}
	w := newWriter(t, lossy, ks)
	w.ResolveTimeout = 300 * time.Millisecond
	lossy.mu.Lock()
	lossy.loseNext, lossy.commitThenLose, lossy.failReads = 1, true, true
	lossy.mu.Unlock()
	_, err := w.Append(ctx, []state.Entry{removeEntry(1)})
	require.ErrorIs(t, err, ErrUnknownOutcome)
	require.True(t, IsAmbiguous(err))
	_, err = w.Append(ctx, []state.Entry{removeEntry(2)})
	require.ErrorIs(t, err, ErrUnknownOutcome, "refuses to append on an unknown prefix")
	lossy.mu.Lock()
	lossy.failReads = false
	lossy.mu.Unlock()
	require.NoError(t, w.Resync(ctx))
	require.Equal(t, uint64(1), w.Prefix().BatchID, "the lost commit did land")
	b, err := w.Append(ctx, []state.Entry{removeEntry(3)})
	require.NoError(t, err)
	require.Equal(t, uint64(2), b.ID)
}

func requireContinuous(t *testing.T, kv clientv3.KV, ks keyspace.Keyspace, wantBatches int) {
	t.Helper()
	r := &Reader{KV: kv, Keyspace: ks}
	n := 0
	_, err := r.ReadAll(ctxT(t), func(state.Batch) error { n++; return nil })
	require.NoError(t, err)
	require.Equal(t, wantBatches, n)
}

// putRaw writes a raw value behind the writer's back (corruption).
func putRaw(t *testing.T, kv clientv3.KV, key, val string) {
	t.Helper()
	_, err := kv.Put(ctxT(t), key, val)
	require.NoError(t, err)
}

func TestReaderRejectsBrokenHistory(t *testing.T) {
	setup := func(t *testing.T) (*etcdtest.Server, keyspace.Keyspace, *Reader) {
		srv := etcdtest.Start(t)
		ks := keyspace.Must("broken")
		w := newWriter(t, srv.Client, ks)
		for i := 1; i <= 5; i++ {
			_, err := w.Append(ctxT(t), []state.Entry{removeEntry(i), removeEntry(i + 100)})
			require.NoError(t, err)
		}
		return srv, ks, &Reader{KV: srv.Client, Keyspace: ks, PageSize: 2}
	}
	cases := map[string]struct {
		corrupt func(t *testing.T, kv clientv3.KV, ks keyspace.Keyspace)
		want    error
	}{
		"gap": {func(t *testing.T, kv clientv3.KV, ks keyspace.Keyspace) {
			_, err := kv.Delete(ctxT(t), ks.Batch(3))
			require.NoError(t, err)
		}, ErrGap},
		"first batch missing": {func(t *testing.T, kv clientv3.KV, ks keyspace.Keyspace) {
			_, err := kv.Delete(ctxT(t), ks.Batch(1))
			require.NoError(t, err)
		}, ErrGap},
		"tail missing": {func(t *testing.T, kv clientv3.KV, ks keyspace.Keyspace) {
			_, err := kv.Delete(ctxT(t), ks.Batch(5))
			require.NoError(t, err)
		}, ErrGap},
		"bad checksum": {func(t *testing.T, kv clientv3.KV, ks keyspace.Keyspace) {
			rec, _ := EncodeBatch(state.Batch{ID: 3, FirstSeq: 5, LastSeq: 6, Entries: []state.Entry{removeEntry(3), removeEntry(103)}})
			s := string(rec)
			putRaw(t, kv, ks.Batch(3), s[:len(s)-2]+"0]")
		}, ErrChecksum},
		"malformed json": {func(t *testing.T, kv clientv3.KV, ks keyspace.Keyspace) {
			putRaw(t, kv, ks.Batch(2), "[1,2,3")
		}, ErrMalformed},
		"comment inside the record": {func(t *testing.T, kv clientv3.KV, ks keyspace.Keyspace) {
			rec, _ := EncodeBatch(state.Batch{ID: 2, FirstSeq: 3, LastSeq: 4, Entries: []state.Entry{removeEntry(2), removeEntry(102)}})
			putRaw(t, kv, ks.Batch(2), "[1,/* */"+string(rec[3:]))
		}, ErrMalformed},
		"terminal batch ends elsewhere": {func(t *testing.T, kv clientv3.KV, ks keyspace.Keyspace) {
			rec, _ := EncodeBatch(state.Batch{ID: 5, FirstSeq: 9, LastSeq: 9, Entries: []state.Entry{removeEntry(5)}})
			putRaw(t, kv, ks.Batch(5), string(rec))
		}, ErrKeyMismatch},
		"zero prefix over batches": {func(t *testing.T, kv clientv3.KV, ks keyspace.Keyspace) {
			putRaw(t, kv, ks.DurablePrefix(), string(DurablePrefix{}.Encode()))
		}, ErrRegression},
		"seq regression": {func(t *testing.T, kv clientv3.KV, ks keyspace.Keyspace) {
			rec, _ := EncodeBatch(state.Batch{ID: 3, FirstSeq: 4, LastSeq: 5, Entries: []state.Entry{removeEntry(3), removeEntry(103)}})
			putRaw(t, kv, ks.Batch(3), string(rec))
		}, ErrRegression},
		"seq gap": {func(t *testing.T, kv clientv3.KV, ks keyspace.Keyspace) {
			rec, _ := EncodeBatch(state.Batch{ID: 3, FirstSeq: 7, LastSeq: 8, Entries: []state.Entry{removeEntry(3), removeEntry(103)}})
			putRaw(t, kv, ks.Batch(3), string(rec))
		}, ErrGap},
		"record under wrong key": {func(t *testing.T, kv clientv3.KV, ks keyspace.Keyspace) {
			rec, _ := EncodeBatch(state.Batch{ID: 9, FirstSeq: 5, LastSeq: 6, Entries: []state.Entry{removeEntry(3), removeEntry(103)}})
			putRaw(t, kv, ks.Batch(3), string(rec))
		}, ErrKeyMismatch},
		"prefix past the log": {func(t *testing.T, kv clientv3.KV, ks keyspace.Keyspace) {
			putRaw(t, kv, ks.DurablePrefix(), string(DurablePrefix{BatchID: 6, LastSeq: 12}.Encode()))
		}, ErrGap},
		"prefix seq disagrees": {func(t *testing.T, kv clientv3.KV, ks keyspace.Keyspace) {
			putRaw(t, kv, ks.DurablePrefix(), string(DurablePrefix{BatchID: 5, LastSeq: 11}.Encode()))
		}, ErrKeyMismatch},
		"prefix missing": {func(t *testing.T, kv clientv3.KV, ks keyspace.Keyspace) {
			_, err := kv.Delete(ctxT(t), ks.DurablePrefix())
			require.NoError(t, err)
		}, ErrNoDurablePrefix},
		"prefix malformed": {func(t *testing.T, kv clientv3.KV, ks keyspace.Keyspace) {
			putRaw(t, kv, ks.DurablePrefix(), `{"schema_version":1,"batch_id":5}`)
		}, ErrMalformed},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			srv, ks, r := setup(t)
			tc.corrupt(t, srv.Client, ks)
			_, err := r.ReadAll(ctxT(t), func(state.Batch) error { return nil })
			require.ErrorIs(t, err, tc.want)
		})
	}
	t.Run("cursor ahead of prefix", func(t *testing.T) {
		_, _, r := setup(t)
		_, err := r.Scan(ctxT(t), state.Cursor{BatchID: 6, Seq: 12}, func(state.Batch) error { return nil })
		require.ErrorIs(t, err, ErrRegression)
	})
	// Upstream checks the prefix's terminal batch even when there is
	// nothing to replay; so does the head.
	t.Run("terminal batch missing under a caught-up cursor", func(t *testing.T) {
		srv, ks, r := setup(t)
		_, err := srv.Client.Delete(ctxT(t), ks.Batch(5))
		require.NoError(t, err)
		_, err = r.Scan(ctxT(t), state.Cursor{BatchID: 5, Seq: 10}, func(state.Batch) error { return nil })
		require.ErrorIs(t, err, ErrGap)
		require.ErrorContains(t, err, ks.Batch(5))
	})
	// A record upstream's decoder accepts in a form other than its own is
	// history like any other.
	t.Run("upstream's lenient forms read", func(t *testing.T) {
		srv, ks, r := setup(t)
		rec, _ := EncodeBatch(state.Batch{ID: 2, FirstSeq: 3, LastSeq: 4, Entries: []state.Entry{removeEntry(2), removeEntry(102)}})
		putRaw(t, srv.Client, ks.Batch(2), " "+strings.ReplaceAll(string(rec), ",", ", ")+"\n")
		putRaw(t, srv.Client, ks.DurablePrefix(), `{"schema_version":1,"batch_id":5,"last_seq":10}`)
		n := 0
		_, err := r.ReadAll(ctxT(t), func(state.Batch) error { n++; return nil })
		require.NoError(t, err)
		require.Equal(t, 5, n)
	})
}

// A durable prefix whose terminal batch is missing is refused whatever the
// compaction floor says, as upstream's startup check refuses it
// (ValidateDurablePrefixAtStartup): a floor says batches may be pruned, and
// pruning never reaches the prefix's batch. Present, it must be the
// prefix's.
func TestHeadRefusesMissingTerminalBatchUnderTheFloor(t *testing.T) {
	srv := etcdtest.Start(t)
	ks := keyspace.Must("imported")
	putRaw(t, srv.Client, ks.DurablePrefix(), string(DurablePrefix{BatchID: 1, LastSeq: 40}.Encode()))
	r := &Reader{KV: srv.Client, Keyspace: ks}
	_, err := r.ReadHead(ctxT(t))
	require.ErrorIs(t, err, ErrGap, "no floor: the terminal batch is missing")
	putRaw(t, srv.Client, ks.CompactionFloor(), string(Floor{BatchID: 1}.Encode()))
	_, err = r.ReadHead(ctxT(t))
	require.ErrorIs(t, err, ErrGap, "a floor at the prefix's batch excuses nothing")
	require.ErrorContains(t, err, ks.Batch(1))
	putRaw(t, srv.Client, ks.CompactionFloor(), string(Floor{BatchID: 7}.Encode()))
	_, err = r.ReadHead(ctxT(t))
	require.ErrorIs(t, err, ErrGap, "nor a floor above it")
	rec, _ := EncodeBatch(state.Batch{ID: 1, FirstSeq: 1, LastSeq: 1, Entries: []state.Entry{removeEntry(1)}})
	putRaw(t, srv.Client, ks.Batch(1), string(rec))
	_, err = r.ReadHead(ctxT(t))
	require.ErrorIs(t, err, ErrKeyMismatch, "present, the terminal batch must end at the prefix")
	rec, _ = EncodeBatch(state.Batch{ID: 1, FirstSeq: 40, LastSeq: 40, Entries: []state.Entry{removeEntry(1)}})
	putRaw(t, srv.Client, ks.Batch(1), string(rec))
	h, err := r.ReadHead(ctxT(t))
	require.NoError(t, err)
	require.Equal(t, DurablePrefix{BatchID: 1, LastSeq: 40}, h.Prefix)
}

// A view upstream's TryParseProducerView refuses (a leading zero) fences
// the writer as a malformed record and is never overwritten by a claim.
func TestNonCanonicalViewIsRefused(t *testing.T) {
	srv := etcdtest.Start(t)
	ks := keyspace.Must("view")
	ctx := ctxT(t)
	w := newWriter(t, srv.Client, ks)
	putRaw(t, srv.Client, ks.ProducerView(), "0"+string(EncodeProducerView(w.View())))
	_, err := w.Append(ctx, []state.Entry{removeEntry(1)})
	require.ErrorIs(t, err, ErrMalformed)
	require.ErrorIs(t, err, contract.ErrMalformed)
	_, err = ClaimProducerView(ctx, srv.Client, ks)
	require.ErrorIs(t, err, ErrMalformed, "a corrupt view is never overwritten")
	got, _ := srv.Client.Get(ctx, ks.ProducerView())
	require.Equal(t, "0"+string(EncodeProducerView(w.View())), string(got.Kvs[0].Value))
}

func TestClaimRefusesBatchesWithoutPrefix(t *testing.T) {
	srv := etcdtest.Start(t)
	ks := keyspace.Must("orphaned")
	rec, _ := EncodeBatch(state.Batch{ID: 1, FirstSeq: 1, LastSeq: 1, Entries: []state.Entry{removeEntry(1)}})
	putRaw(t, srv.Client, ks.Batch(1), string(rec))
	_, err := ClaimProducerView(ctxT(t), srv.Client, ks)
	require.ErrorIs(t, err, ErrNoDurablePrefix)
}

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

func newCommitter(t *testing.T, w *Writer, max int) (*GroupCommitter, *state.State, *sync.Mutex) {
	s, mu := state.New(), &sync.Mutex{}
	g := NewGroupCommitter(w, func() Tx {
		mu.Lock()
		defer mu.Unlock()
		return stateTx{mu: mu, s: s, tx: s.Begin()}
	}, Limits{MaxEntries: max}, Hooks{})
	t.Cleanup(g.Close)
	return g, s, mu
}

func TestGroupCommitBatchesConcurrentCallers(t *testing.T) {
	srv := etcdtest.Start(t)
	ks := keyspace.Must("group")
	ctx := ctxT(t)
	w := newWriter(t, srv.Client, ks)
	g, s, mu := newCommitter(t, w, 64)
	seg := state.Segment{Endpoint: "s1", Name: "s", Capacity: 1 << 40, Kind: state.ReplicaMemory}
	_, err := g.Submit(ctx, state.MountSegment(seg))
	require.NoError(t, err)

	const callers, each = 16, 50
	var wg sync.WaitGroup
	var rejected atomic.Int64
	seqs := make(chan uint64, callers*each)
	for c := 0; c < callers; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				key := fmt.Sprintf("c%d-%d", c, i)
				o := state.Object{ClientID: state.UUID{First: 1}, Size: 1,
					Replicas: []state.Replica{{ID: 1, Kind: state.ReplicaMemory,
						Segment: "s1", Length: 1, Status: state.ReplicaComplete}}}
				res, err := g.Submit(ctx, state.PutEnd("t", key, o))
				if err != nil {
					t.Errorf("submit %s: %v", key, err)
					return
				}
				seqs <- res.Seq
				// A duplicate is rejected on its own, without failing the batch it lands in.
				if _, err := g.Submit(ctx, state.PutEnd("t", key, o)); errors.Is(err, state.ErrObjectExists) {
					rejected.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	close(seqs)
	require.Equal(t, int64(callers*each), rejected.Load())
	seen := map[uint64]bool{}
	for s := range seqs {
		require.False(t, seen[s], "seq %d acknowledged twice", s)
		seen[s] = true
	}
	mu.Lock()
	n, _ := s.Len()
	cur := s.Cursor()
	digest := s.Digest()
	mu.Unlock()
	require.Equal(t, callers*each, n)
	require.Less(t, cur.BatchID, uint64(callers*each), "concurrent callers share batches")
	t.Logf("%d entries in %d batches", cur.Seq, cur.BatchID)

	// A standby replaying the log reaches the same state.
	replica := state.New()
	r := &Reader{KV: srv.Client, Keyspace: ks}
	_, err = r.ReadAll(ctx, replica.Apply)
	require.NoError(t, err)
	require.Equal(t, digest, replica.Digest())
	require.Equal(t, cur, replica.Cursor())
}

func TestGroupCommitStopsWhenFenced(t *testing.T) {
	srv := etcdtest.Start(t)
	ks := keyspace.Must("gfence")
	ctx := ctxT(t)
	w := newWriter(t, srv.Client, ks)
	g, _, _ := newCommitter(t, w, 8)
	_, err := g.Submit(ctx, removeEntry(1))
	require.NoError(t, err)
	_ = newWriter(t, srv.Client, ks) // another primary claims a higher view
	_, err = g.Submit(ctx, removeEntry(2))
	require.ErrorIs(t, err, ErrFenced)
	<-g.Done()
	require.ErrorIs(t, g.Err(), ErrFenced)
	_, err = g.Submit(ctx, removeEntry(3))
	require.ErrorIs(t, err, ErrCommitterStopped)
	require.ErrorIs(t, err, ErrFenced)
}

// With ReuseBuffers, fn sees every batch exactly as without (compared while
// fn runs, the only time it may look), across pages whose entries and
// payloads vary in number and size, and the state replays the same.
func TestReuseBuffersReplaysTheSame(t *testing.T) {
	srv := etcdtest.Start(t)
	ks := keyspace.Must("reuse")
	ctx := ctxT(t)
	w := newWriter(t, srv.Client, ks)
	seg := state.Segment{Endpoint: "10.0.0.1:7000", Name: "seg", Capacity: 1 << 50, Kind: state.ReplicaMemory}
	_, err := w.Append(ctx, []state.Entry{state.MountSegment(seg)})
	require.NoError(t, err)
	for i := range 200 {
		entries := make([]state.Entry, 1+i%7*3)
		for j := range entries {
			o := state.Object{Size: 1, Replicas: []state.Replica{{ID: 1, Kind: state.ReplicaMemory, Segment: seg.Endpoint,
				Length: 1, Status: state.ReplicaComplete, Protocol: strings.Repeat("p", (i*7+j)%90)}}}
			entries[j] = state.PutEnd("t", fmt.Sprintf("k%d-%d", i, j), o)
			if j%5 == 4 {
				entries[j] = state.Remove("t", fmt.Sprintf("k%d-%d", i-1, j))
			}
		}
		_, err := w.Append(ctx, entries)
		require.NoError(t, err)
	}
	var plain []state.Batch
	want := state.New()
	_, err = (&Reader{KV: srv.Client, Keyspace: ks, PageSize: 16}).ReadAll(ctx, func(b state.Batch) error {
		plain = append(plain, b)
		return want.Apply(b)
	})
	require.NoError(t, err)
	got := state.New()
	i := 0
	_, err = (&Reader{KV: srv.Client, Keyspace: ks, PageSize: 16, ReuseBuffers: true}).ReadAll(ctx, func(b state.Batch) error {
		require.Equal(t, plain[i], b, "batch %d", b.ID)
		i++
		return got.Apply(b)
	})
	require.NoError(t, err)
	require.Equal(t, len(plain), i)
	require.Equal(t, want.Digest(), got.Digest())
}
