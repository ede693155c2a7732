package oplog

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/oplogha/oplogha/impl/contract"
	"github.com/oplogha/oplogha/impl/contract/keyspace"
	"github.com/oplogha/oplogha/impl/internal/etcdtest"
	"github.com/oplogha/oplogha/impl/state"
)

var bigSeg = state.Segment{Endpoint: "s1", Name: "s", Capacity: 1 << 40, Kind: state.ReplicaMemory}

// bigPut is a put whose payload (the object's struct_pack) is about n
// bytes: its replicas' protocols carry the bulk.
func bigPut(key string, n int) state.Entry {
	o := state.Object{Size: 1, Replicas: bulkReplicas(bigSeg.Endpoint, n)}
	return state.PutEnd("t", key, o)
}

// bulkReplicas is a replica list whose PUT_END payload takes about n
// bytes: protocol strings of up to 4000 bytes carry the bulk.
func bulkReplicas(seg string, n int) []state.Replica {
	k := (n + 3999) / 4000
	reps := make([]state.Replica, k)
	for i := range reps {
		reps[i] = state.Replica{ID: uint64(i + 1), Kind: state.ReplicaMemory, Segment: seg, Length: 1,
			Status: state.ReplicaComplete, Protocol: strings.Repeat("p", n/k)}
	}
	return reps
}

// gate holds the commit loop in its first BeforeAppend until open is
// closed, so that the requests submitted meanwhile queue up and the batches
// after it are cut deterministically from the queue.
type gate struct {
	first   atomic.Bool
	entered chan struct{}
	open    chan struct{}
}

func newGate() *gate { return &gate{entered: make(chan struct{}), open: make(chan struct{})} }

func (g *gate) hook(int) {
	if g.first.CompareAndSwap(false, true) {
		close(g.entered)
		<-g.open
	}
}

func newLimitedCommitter(t *testing.T, w *Writer, limits Limits, hooks Hooks) (*GroupCommitter, *state.State, *sync.Mutex) {
	s, mu := state.New(), &sync.Mutex{}
	g := NewGroupCommitter(w, func() Tx {
		mu.Lock()
		defer mu.Unlock()
		return stateTx{mu: mu, s: s, tx: s.Begin()}
	}, limits, hooks)
	t.Cleanup(g.Close)
	return g, s, mu
}

// rawBatches reads every batch record as stored, by id.
func rawBatches(t *testing.T, kv clientv3.KV, ks keyspace.Keyspace) map[uint64][]byte {
	t.Helper()
	resp, err := kv.Get(ctxT(t), ks.BatchPrefix(), clientv3.WithPrefix())
	require.NoError(t, err)
	out := map[uint64][]byte{}
	for _, kv := range resp.Kvs {
		id, ok := ks.ParseBatch(string(kv.Key))
		require.True(t, ok)
		out[id] = kv.Value
	}
	return out
}

// recordBound is what the committer counts for a batch of entries.
func recordBound(t *testing.T, entries []state.Entry) int {
	n := recordOverheadBytes
	for _, e := range entries {
		b, err := entryBytes(e)
		require.NoError(t, err)
		n += b
	}
	return n
}

// entryBytes is exact for the entry's element (plus its comma), and the
// committer's count bounds the whole record even at the widest ids.
func TestEntryBytesMatchesTheRecord(t *testing.T) {
	entries := []state.Entry{
		removeEntry(1),
		state.PutRevoke("", "k"),
		state.PutRevoke("tenant \"quoted\" \\ <html> & \u00e9\u4e2d", "key\x00\x01\n\t\u2028"),
		bigPut("a", 1), bigPut("b", 2), bigPut("c", 3), bigPut("d", 1000),
		state.MountSegment(bigSeg),
		{Op: state.OpPutEnd, Tenant: "t", Key: "k", Payload: []byte{0, 1, 2, 255}},
	}
	for i, e := range entries {
		n, err := entryBytes(e)
		require.NoError(t, err)
		rec, err := EncodeBatch(state.Batch{ID: 1, FirstSeq: 1, LastSeq: 1, Entries: []state.Entry{e}})
		require.NoError(t, err)
		// "[1,1,1,1,[" entry "],checksum]": the entry's element is exact, its comma aside.
		elem := rec[len("[1,1,1,1,[") : bytes.LastIndexByte(rec, ',')-1]
		require.Equal(t, len(elem), n-1, "entry %d: %q", i, elem)
	}
	for _, b := range []state.Batch{
		{ID: 1, FirstSeq: 1, LastSeq: uint64(len(entries)), Entries: entries},
		{ID: math.MaxUint64, FirstSeq: math.MaxUint64 - uint64(len(entries)) + 1, LastSeq: math.MaxUint64, Entries: entries},
		{ID: math.MaxUint64, FirstSeq: math.MaxUint64, LastSeq: math.MaxUint64, Entries: entries[:1]},
	} {
		rec, err := EncodeBatch(b)
		require.NoError(t, err)
		require.LessOrEqual(t, len(rec), recordBound(t, b.Entries), "batch %d", b.ID)
	}
	_, err := entryBytes(state.PutRevoke("t", "bad \xff utf-8"))
	require.ErrorIs(t, err, ErrMalformed)
}

// Many concurrent entries of up to ~490 KiB (what the master's API accepts)
// all commit, in batches cut by bytes: none over the budget, none lost,
// sequence contiguous, and a batch is cut only when the next entry would not
// fit. Found by a colleague: 8 such puts used to go into one etcd txn over
// etcd's 1.5 MiB request limit, all ended commit_unknown and the primary
// stopped serving.
func TestGroupCommitCutsBatchesByBytes(t *testing.T) {
	srv := etcdtest.Start(t)
	ks := keyspace.Must("bytes")
	ctx := ctxT(t)
	w := newWriter(t, srv.Client, ks)
	gt := newGate()
	g, s, mu := newLimitedCommitter(t, w, Limits{MaxEntries: 64}, Hooks{BeforeAppend: gt.hook})
	budget := DefaultBatchMaxBytes

	mounted := make(chan error, 1)
	go func() {
		_, err := g.Submit(ctx, state.MountSegment(bigSeg))
		mounted <- err
	}()
	<-gt.entered // batch 1 (the mount) is held before its append

	sizes := []int{490 << 10, 200 << 10, 20 << 10}
	const n = 24
	type ack struct {
		key string
		c   Committed
		err error
	}
	acks := make(chan ack, n)
	for i := 0; i < n; i++ {
		go func() {
			key := fmt.Sprintf("k%02d", i)
			c, err := g.Submit(ctx, bigPut(key, sizes[i%len(sizes)]))
			acks <- ack{key, c, err}
		}()
	}
	require.Eventually(t, func() bool { return len(g.reqs) == n }, 30*time.Second, time.Millisecond, "all %d queued behind the held batch", n)
	close(gt.open)
	require.NoError(t, <-mounted)

	byKey := map[string]Committed{}
	for i := 0; i < n; i++ {
		a := <-acks
		require.NoError(t, a.err, a.key)
		byKey[a.key] = a.c
	}
	require.NoError(t, g.Err())

	raw := rawBatches(t, srv.Client, ks)
	var batches []state.Batch
	head, err := (&Reader{KV: srv.Client, Keyspace: ks}).ReadAll(ctx, func(b state.Batch) error {
		batches = append(batches, b)
		return nil
	})
	require.NoError(t, err, "the log reads back whole and contiguous")
	require.Len(t, raw, len(batches))
	require.Equal(t, uint64(len(batches)), head.Prefix.BatchID)
	require.Equal(t, uint64(n+1), head.Prefix.LastSeq, "every entry, once")
	seq := uint64(0)
	for i, b := range batches {
		require.Equal(t, uint64(i+1), b.ID)
		require.Equal(t, seq+1, b.FirstSeq, "batch %d", b.ID)
		seq = b.LastSeq
		require.LessOrEqual(t, len(raw[b.ID]), budget, "batch %d record over the budget", b.ID)
		require.LessOrEqual(t, len(raw[b.ID]), recordBound(t, b.Entries))
	}
	puts := batches[1:] // batch 1 is the mount
	require.Greater(t, len(puts), 1, "several batches")
	require.Less(t, len(puts), n, "entries that fit together share a batch")
	for i := 0; i+1 < len(puts); i++ {
		next, err := entryBytes(puts[i+1].Entries[0])
		require.NoError(t, err)
		require.Greater(t, recordBound(t, puts[i].Entries)+next, budget,
			"batch %d was cut although batch %d's first entry fit in it", puts[i].ID, puts[i+1].ID)
	}
	t.Logf("%d entries of up to %d KiB in %d batches", n, sizes[0]>>10, len(puts))

	// Each acknowledgement names the entry the log holds at its seq.
	for key, c := range byKey {
		b := batches[c.BatchID-1]
		require.Equal(t, key, b.Entries[c.Seq-b.FirstSeq].Key, "acknowledged at batch %d seq %d", c.BatchID, c.Seq)
	}
	mu.Lock()
	digest, cur := s.Digest(), s.Cursor()
	mu.Unlock()
	replica := state.New()
	_, err = (&Reader{KV: srv.Client, Keyspace: ks}).ReadAll(ctx, replica.Apply)
	require.NoError(t, err)
	require.Equal(t, digest, replica.Digest())
	require.Equal(t, cur, replica.Cursor())
}

// An entry too large for a batch of its own is refused definitely before
// anything is sent; entries queued around it commit, and the committer
// keeps serving.
func TestOversizedEntryIsRefusedDefinitely(t *testing.T) {
	srv := etcdtest.Start(t)
	ks := keyspace.Must("oversized")
	ctx := ctxT(t)
	w := newWriter(t, srv.Client, ks)
	g, _, _ := newLimitedCommitter(t, w, Limits{}, Hooks{})
	_, err := g.Submit(ctx, state.MountSegment(bigSeg))
	require.NoError(t, err)
	_, err = g.Submit(ctx, bigPut("small", 100))
	require.NoError(t, err)
	r := &Reader{KV: srv.Client, Keyspace: ks}
	before, err := r.ReadHead(ctx)
	require.NoError(t, err)

	// 800 KiB of payload is over 1 MiB of base64.
	huge := bigPut("huge", 800<<10)
	_, err = g.Submit(ctx, huge)
	require.ErrorIs(t, err, ErrBatchTooLarge)
	require.False(t, IsAmbiguous(err), "a definite failure: %v", err)
	require.NotErrorIs(t, err, ErrCommitterStopped)
	after, err := r.ReadHead(ctx)
	require.NoError(t, err)
	require.Equal(t, before.Prefix, after.Prefix, "nothing written")
	require.Len(t, rawBatches(t, srv.Client, ks), int(before.Prefix.BatchID))
	require.NoError(t, g.Err())

	// Submitted along with entries that fit, it fails alone.
	c, err := g.Submit(ctx, bigPut("a", 300<<10))
	require.NoError(t, err, "the committer keeps serving")
	require.Equal(t, before.Prefix.BatchID+1, c.BatchID)
	res := make(chan error, 3)
	for _, e := range []state.Entry{bigPut("b", 300<<10), bigPut("huge", 800<<10), bigPut("c", 300<<10)} {
		go func() {
			_, err := g.Submit(ctx, e)
			res <- err
		}()
	}
	var tooLarge, ok int
	for i := 0; i < 3; i++ {
		switch err := <-res; {
		case err == nil:
			ok++
		case errors.Is(err, ErrBatchTooLarge) && !IsAmbiguous(err):
			tooLarge++
		default:
			t.Fatalf("unexpected: %v", err)
		}
	}
	require.Equal(t, 2, ok)
	require.Equal(t, 1, tooLarge)
	_, err = r.ReadAll(ctx, func(b state.Batch) error {
		for _, e := range b.Entries {
			require.NotEqual(t, "huge", e.Key)
		}
		return nil
	})
	require.NoError(t, err)
	require.NoError(t, g.Err())
}

// etcd answering "request is too large" to an append is a definite failure:
// etcd refused it before proposing it. The writer says so at once (it used
// to resolve it as ambiguous for ResolveTimeout, then report an unknown
// outcome), keeps its prefix and appends the next batch.
func TestEtcdRequestTooLargeIsDefinite(t *testing.T) {
	srv := etcdtest.Start(t)
	ks := keyspace.Must("etcdlimit")
	ctx := ctxT(t)
	w := newWriter(t, srv.Client, ks)
	_, err := w.Append(ctx, []state.Entry{removeEntry(1)})
	require.NoError(t, err)
	prefix := w.Prefix()

	// 1.2 MiB of payload: about 1.6 MiB of record, over etcd's default
	// --max-request-bytes (1.5 MiB) and under the gRPC limits (2 MiB), so
	// etcd's own size check answers.
	huge := bigPut("huge", 1200<<10)
	start := time.Now()
	_, err = w.Append(ctx, []state.Entry{huge})
	require.ErrorIs(t, err, ErrBatchTooLarge)
	require.ErrorIs(t, err, rpctypes.ErrRequestTooLarge, "etcd's answer, kept")
	require.False(t, IsAmbiguous(err), "a definite failure: %v", err)
	require.Less(t, time.Since(start), w.ResolveTimeout/2, "not resolved as ambiguous")
	require.Equal(t, prefix, w.Prefix())
	head, err := (&Reader{KV: srv.Client, Keyspace: ks}).ReadHead(ctx)
	require.NoError(t, err)
	require.Equal(t, prefix, head.Prefix, "nothing written")
	b, err := w.Append(ctx, []state.Entry{removeEntry(2)})
	require.NoError(t, err, "the writer goes on")
	require.Equal(t, prefix.BatchID+1, b.ID)
	requireContinuous(t, srv.Client, ks, int(b.ID))

	// A committer whose budget is over etcd's limit fails that batch
	// definitely and keeps serving.
	ks2 := keyspace.Must("etcdlimit-committer")
	g, _, _ := newLimitedCommitter(t, newWriter(t, srv.Client, ks2), Limits{MaxBytes: 1900 << 10}, Hooks{})
	_, err = g.Submit(ctx, state.MountSegment(bigSeg))
	require.NoError(t, err)
	_, err = g.Submit(ctx, huge)
	require.ErrorIs(t, err, ErrBatchTooLarge)
	require.ErrorIs(t, err, rpctypes.ErrRequestTooLarge)
	require.False(t, IsAmbiguous(err))
	require.NoError(t, g.Err())
	c, err := g.Submit(ctx, bigPut("after", 100))
	require.NoError(t, err, "the committer keeps serving")
	require.Equal(t, uint64(2), c.BatchID, "the refused batch left no id behind")
	requireContinuous(t, srv.Client, ks2, 2)
}

// A committer that stops with an entry carried over to its next batch
// answers it: it was never staged, so ErrCommitterStopped (a definite
// failure), while the batch that failed answers with its own error.
func TestCarriedEntryIsAnsweredWhenTheCommitterStops(t *testing.T) {
	srv := etcdtest.Start(t)
	ks := keyspace.Must("carry")
	ctx := ctxT(t)
	w := newWriter(t, srv.Client, ks)
	gt := newGate()
	var calls atomic.Int32
	fenceErr := make(chan error, 1)
	g, _, _ := newLimitedCommitter(t, w, Limits{}, Hooks{BeforeAppend: func(n int) {
		switch calls.Add(1) {
		case 1:
			gt.hook(n)
		case 2:
			// The batch after the held one: a newer primary fences this
			// writer before it is sent.
			_, err := ClaimProducerView(ctx, srv.Client, ks)
			fenceErr <- err
		}
	}})
	first := make(chan error, 1)
	go func() {
		_, err := g.Submit(ctx, state.MountSegment(bigSeg))
		first <- err
	}()
	<-gt.entered
	// Two entries that do not fit one batch queue behind the held one.
	res := make(chan error, 2)
	for _, k := range []string{"a", "b"} {
		go func() {
			_, err := g.Submit(ctx, bigPut(k, 490<<10))
			res <- err
		}()
	}
	require.Eventually(t, func() bool { return len(g.reqs) == 2 }, 30*time.Second, time.Millisecond)
	close(gt.open)
	require.NoError(t, <-first)
	require.NoError(t, <-fenceErr)
	var fenced, stopped int
	for i := 0; i < 2; i++ {
		err := <-res
		require.ErrorIs(t, err, ErrFenced)
		require.False(t, IsAmbiguous(err))
		if errors.Is(err, ErrCommitterStopped) {
			stopped++ // the carried entry, never staged
		} else {
			fenced++ // the entry of the batch that was fenced
		}
	}
	require.Equal(t, 1, fenced)
	require.Equal(t, 1, stopped)
	<-g.Done()
	require.ErrorIs(t, g.Err(), ErrFenced)
	requireContinuous(t, srv.Client, ks, 1)
}

// An entry upstream's batch decoder would refuse (a reserved tenant) is
// refused alone, as malformed, before its batch is sent: the entries
// around it commit and nothing unreadable reaches etcd.
func TestEntryUpstreamRefusesFailsAlone(t *testing.T) {
	srv := etcdtest.Start(t)
	ks := keyspace.Must("refused")
	ctx := ctxT(t)
	w := newWriter(t, srv.Client, ks)
	g, _, _ := newLimitedCommitter(t, w, Limits{}, Hooks{})
	res := make(chan error, 3)
	for _, e := range []state.Entry{state.PutRevoke("t", "a"), state.PutRevoke("_reserved", "b"), state.PutRevoke("t", "c")} {
		go func() {
			_, err := g.Submit(ctx, e)
			res <- err
		}()
	}
	var ok, refused int
	for i := 0; i < 3; i++ {
		switch err := <-res; {
		case err == nil:
			ok++
		case errors.Is(err, state.ErrMalformed) && errors.Is(err, contract.ErrTenant) && !IsAmbiguous(err):
			refused++
		default:
			t.Fatalf("unexpected: %v", err)
		}
	}
	require.Equal(t, 2, ok)
	require.Equal(t, 1, refused)
	n := 0
	_, err := (&Reader{KV: srv.Client, Keyspace: ks}).ReadAll(ctx, func(b state.Batch) error {
		for _, e := range b.Entries {
			require.Equal(t, "t", e.Tenant)
			n++
		}
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.NoError(t, g.Err())
}
