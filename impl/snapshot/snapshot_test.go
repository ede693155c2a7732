package snapshot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/impl/contract"
	"github.com/oplogha/oplogha/impl/contract/batchsnap"
	"github.com/oplogha/oplogha/impl/objstore"
	"github.com/oplogha/oplogha/impl/objstore/localdir"
	"github.com/oplogha/oplogha/impl/state"
)

// testState is a state of n objects on two segments, with every replica
// kind and hard_pinned in all three states, at batch 1 (each object its own
// entry).
func testState(t testing.TB, n int) *state.State {
	t.Helper()
	s := state.New()
	entries := []state.Entry{
		state.MountSegment(state.Segment{Endpoint: "10.0.0.1:1", Name: "seg-a", Capacity: 1 << 40, Kind: state.ReplicaMemory}),
		state.MountSegment(state.Segment{Endpoint: "10.0.0.2:1", Name: "seg-b", Capacity: 1 << 30, Kind: state.ReplicaDisk, FilePath: "/mnt/b"}),
	}
	for i := range n {
		o := state.Object{ClientID: state.UUID{First: uint64(i), Second: 7}, Size: 4096, GroupID: fmt.Sprintf("g%d", i%3),
			DataType: uint32(i % 5), HardPinned: i%4 == 1}
		switch i % 5 {
		case 0:
			o.Replicas = []state.Replica{{ID: uint64(i), Kind: state.ReplicaMemory, Segment: "10.0.0.1:1", Offset: uint64(i) * 4096, Length: 4096,
				Status: state.ReplicaComplete, Protocol: "tcp"}}
		case 1:
			o.Replicas = []state.Replica{{ID: uint64(i), Kind: state.ReplicaNoF, Segment: "10.0.0.1:1", Offset: 1, Length: 2, Status: state.ReplicaProcessing, Protocol: "nvmeof"},
				{ID: uint64(i) + 1, Kind: state.ReplicaDisk, FilePath: "/x", Length: 4096, Status: state.ReplicaComplete}}
		case 2:
			o.Replicas = []state.Replica{{ID: 3, Kind: state.ReplicaLocalDisk, ClientID: state.UUID{First: 1, Second: 2}, Length: 9, Segment: "ep", Status: state.ReplicaFailed}}
		case 3:
			o.Replicas = []state.Replica{{ID: 4, Kind: state.ReplicaDFS, FilePath: "/dfs", Offset: 8, Length: 9, AlignedSize: 4096, ShardIdx: -1, Status: state.ReplicaRemoved}}
		}
		entries = append(entries, state.PutEnd(fmt.Sprintf("tenant-%d", i%2), fmt.Sprintf("key-%06d", i), o))
	}
	// An empty PUT_END payload: upstream's applier stores empty metadata
	// with hard_pinned unset.
	entries = append(entries, state.Entry{Op: state.OpPutEnd, Tenant: "tenant-0", Key: "empty-payload"})
	require.NoError(t, s.Apply(state.Batch{ID: 1, FirstSeq: 1, LastSeq: uint64(len(entries)), Entries: entries}))
	return s
}

func localStore(t testing.TB) *localdir.Store {
	st, err := localdir.New(t.TempDir())
	require.NoError(t, err)
	return st
}

func prepare(t testing.TB, s *state.State, root string, lease int64, chunk int) *Prepared {
	t.Helper()
	p, err := Prepare(s.Capture(), PrepareSpec{Root: root, ID: NewID(s.Cursor().BatchID, lease), View: 3, WorkDir: t.TempDir(),
		ChunkObjects: chunk, CreatedAt: time.UnixMilli(1767225600000)})
	require.NoError(t, err)
	t.Cleanup(p.Close)
	// The work file names its attempt (faults' occupy-prefix reads it).
	require.True(t, strings.HasPrefix(filepath.Base(p.File.Name()), WorkFilePrefix+NewID(s.Cursor().BatchID, lease).String()+"-"), p.File.Name())
	return p
}

func TestWriteThenOpenState(t *testing.T) {
	for _, c := range []struct{ objects, chunk int }{{0, 4}, {1, 4}, {7, 4}, {8, 4}, {40, 1}, {1000, 333}, {1000, DefaultChunkObjects}} {
		t.Run(fmt.Sprintf("%d objects, chunks of %d", c.objects, c.chunk), func(t *testing.T) {
			s := testState(t, c.objects)
			st := localStore(t)
			p := prepare(t, s, "snapshots/c1", 7, c.chunk)
			want := (c.objects + 1 + c.chunk - 1) / c.chunk
			require.Len(t, p.Layout.Chunks, want)
			w, err := Write(context.Background(), st, objstore.Trust{}, p, WriteOptions{})
			require.NoError(t, err)
			require.Equal(t, "snapshots/c1/batch-oplog/1-7/descriptor.json", w.Pointer.DescriptorKey)
			for name, proof := range w.Proofs {
				require.Equal(t, objstore.ProofReadback, proof, name) // a local directory keeps no checksum
			}
			require.Len(t, w.Proofs, 3+want)
			h, got, _, err := OpenState(context.Background(), st, w.Pointer)
			require.NoError(t, err)
			require.Equal(t, s.Digest(), got.Digest())
			require.Equal(t, s.Cursor(), got.Cursor())
			require.Equal(t, int64(3), h.Descriptor.ProducerViewVersion)
			o, ok := got.Object("tenant-0", "empty-payload")
			require.True(t, ok)
			require.True(t, o.HardPinnedUnset, "an unset hard_pinned survives the snapshot")
			_, err = Verify(context.Background(), st, w.Pointer)
			require.NoError(t, err)
		})
	}
}

// TestReadsUpstreamsDirectory: the snapshot upstream's writer wrote (both
// wire variants, objects in hash-map order) restores into this state model.
func TestReadsUpstreamsDirectory(t *testing.T) {
	for _, variant := range []string{"ndebug", "type_literal"} {
		dir := filepath.Join("..", "contract", "testdata", "upstream", "snapshot", "directory", variant)
		st := &localdir.Store{Root: dir}
		key := batchsnap.Artifacts("snapshots", "42-7").Descriptor()
		raw, err := os.ReadFile(filepath.Join(dir, key))
		require.NoError(t, err)
		d, err := batchsnap.DecodeDescriptor(raw)
		require.NoError(t, err)
		_, s, _, err := OpenState(context.Background(), st, batchsnap.PointerTo(d, key, raw))
		require.NoError(t, err, variant)
		objects, segments := s.Len()
		require.Equal(t, [2]int{7, 3}, [2]int{objects, segments}, variant)
		require.Equal(t, contract.Cursor{BatchID: 42, Seq: 1000}, s.Cursor())
		o, ok := s.Object("tenant-a", "pinned/object")
		require.True(t, ok)
		require.True(t, o.HardPinned)
	}
}

// faultyStore is a real local store that records the calls made to it and
// fails or corrupts the puts a test names: a fault-injecting wrapper, not a
// mock.
type faultyStore struct {
	*localdir.Store
	calls   []string
	failPut map[string]error
	flip    map[string]bool
}

func (f *faultyStore) record(op, key string) { f.calls = append(f.calls, op+" "+filepath.Base(key)) }

func (f *faultyStore) PutIfAbsent(ctx context.Context, key string, src io.ReaderAt, size int64, crc uint32) error {
	f.record("put", key)
	if err := f.failPut[filepath.Base(key)]; err != nil {
		return err
	}
	if f.flip[filepath.Base(key)] {
		data := make([]byte, size)
		src.ReadAt(data, 0)
		data[0] ^= 1
		return f.Store.PutIfAbsent(ctx, key, bytes.NewReader(data), size, crc)
	}
	return f.Store.PutIfAbsent(ctx, key, src, size, crc)
}

func (f *faultyStore) Delete(ctx context.Context, keys []string) error {
	sorted := append([]string(nil), keys...)
	sort.Strings(sorted)
	for _, k := range sorted {
		f.record("delete", k)
	}
	return f.Store.Delete(ctx, keys)
}

func (f *faultyStore) keys(t *testing.T) []string {
	list, err := f.Store.List(context.Background(), "")
	require.NoError(t, err)
	var out []string
	for _, o := range list {
		out = append(out, o.Key)
	}
	return out
}

// TestWriterCases runs the cases of upstream's writer-cases.jsonl against
// this writer: what upstream writes, refuses and leaves behind, in order.
// The calls differ where the stores differ (create-only puts verified one
// by one here; upstream uploads all, then inspects all), not in what
// reaches the store or in what a failure leaves.
func TestWriterCases(t *testing.T) {
	s := testState(t, 6) // 7 objects with the empty-payload one, as upstream's cases
	newFaulty := func(t *testing.T) *faultyStore {
		return &faultyStore{Store: localStore(t), failPut: map[string]error{}, flip: map[string]bool{}}
	}
	all := []string{"snapshots/batch-oplog/1-7/descriptor.json", "snapshots/batch-oplog/1-7/manifest.json",
		"snapshots/batch-oplog/1-7/objects/0.bin", "snapshots/batch-oplog/1-7/objects/1.bin", "snapshots/batch-oplog/1-7/segments.bin"}

	// Every case holds for Write after Prepare and for the pipeline that
	// uploads each part as soon as it is checked.
	for mode, write := range map[string]func(t *testing.T, st objstore.Store, opts WriteOptions) (*Written, error){
		"Write": func(t *testing.T, st objstore.Store, opts WriteOptions) (*Written, error) {
			return Write(context.Background(), st, objstore.Trust{}, prepare(t, s, "snapshots", 7, 4), opts)
		},
		"PrepareAndWrite": func(t *testing.T, st objstore.Store, opts WriteOptions) (*Written, error) {
			p, w, err := PrepareAndWrite(context.Background(), st, objstore.Trust{}, s.Capture(), PrepareSpec{Root: "snapshots", ID: NewID(1, 7),
				View: 3, WorkDir: t.TempDir(), ChunkObjects: 4, CreatedAt: time.UnixMilli(1767225600000)}, opts, nil)
			t.Cleanup(p.Close)
			return w, err
		},
	} {
		t.Run(mode+"/backend_without_crc32c", func(t *testing.T) {
			f := newFaulty(t)
			w, err := write(t, f, WriteOptions{Parallel: 1})
			require.NoError(t, err)
			require.Equal(t, all, f.keys(t))
			require.Equal(t, []string{"put segments.bin", "put 0.bin", "put 1.bin", "put manifest.json", "put descriptor.json"}, f.calls)
			require.Equal(t, objstore.ProofReadback, w.Proofs["descriptor.json"])
			_, got, _, err := OpenState(context.Background(), f, w.Pointer)
			require.NoError(t, err)
			require.Equal(t, s.Digest(), got.Digest())
		})
		t.Run(mode+"/candidate_prefix_exists", func(t *testing.T) {
			f := newFaulty(t)
			require.NoError(t, f.Store.PutIfAbsent(context.Background(), "snapshots/batch-oplog/1-7/segments.bin", strings.NewReader("x"), 1, 0))
			_, err := write(t, f, WriteOptions{})
			require.ErrorIs(t, err, ErrPrefixTaken)
			require.ErrorContains(t, err, "snapshots/batch-oplog/1-7/")
			require.Empty(t, f.calls, "nothing written, nothing deleted")
			require.Equal(t, []string{"snapshots/batch-oplog/1-7/segments.bin"}, f.keys(t))
		})
		t.Run(mode+"/upload_failure", func(t *testing.T) {
			f := newFaulty(t)
			f.failPut["0.bin"] = errors.New("injected upload failure")
			_, err := write(t, f, WriteOptions{Parallel: 1})
			require.ErrorContains(t, err, "injected upload failure")
			require.Empty(t, f.keys(t), "the candidate's objects are deleted")
			require.Contains(t, f.calls, "delete segments.bin")
		})
		t.Run(mode+"/readback_mismatch", func(t *testing.T) {
			f := newFaulty(t)
			f.flip["segments.bin"] = true
			_, err := write(t, f, WriteOptions{})
			require.ErrorIs(t, err, objstore.ErrCorrupt)
			require.ErrorContains(t, err, "segments.bin")
			require.Empty(t, f.keys(t), "the candidate's objects are deleted")
		})
	}
	t.Run("PrepareAndWrite/encoder_fails_after_an_upload", func(t *testing.T) {
		// segments.bin is checked and goes up before the encoder finds that
		// the capture yielded fewer objects than it said: what went up is
		// deleted again, and the failure is the encoder's.
		f := newFaulty(t)
		p, _, err := PrepareAndWrite(context.Background(), f, objstore.Trust{}, lyingSource{s.Capture()},
			PrepareSpec{Root: "snapshots", ID: NewID(1, 7), WorkDir: t.TempDir(), ChunkObjects: 4}, WriteOptions{}, nil)
		p.Close()
		var se *StageError
		require.ErrorAs(t, err, &se)
		require.Equal(t, "encode", se.Stage)
		require.ErrorIs(t, err, ErrCount)
		require.Empty(t, f.keys(t), "nothing is left")
		require.NotContains(t, f.calls, "put 0.bin", "no chunk goes up unchecked")
	})
	t.Run("empty_cluster", func(t *testing.T) {
		f := newFaulty(t)
		empty := state.New()
		p, err := Prepare(empty.Capture(), PrepareSpec{Root: "snapshots", ID: NewID(0, 7), WorkDir: t.TempDir(), ChunkObjects: 4})
		require.NoError(t, err)
		defer p.Close()
		_, err = Write(context.Background(), f, objstore.Trust{}, p, WriteOptions{})
		require.NoError(t, err)
		require.Equal(t, []string{"snapshots/batch-oplog/0-7/descriptor.json", "snapshots/batch-oplog/0-7/manifest.json",
			"snapshots/batch-oplog/0-7/segments.bin"}, f.keys(t))
	})
	for _, c := range []struct {
		name string
		spec PrepareSpec
	}{
		{"id_batch_mismatch", PrepareSpec{Root: "snapshots", ID: NewID(2, 7), ChunkObjects: 4}},
		{"id_invalid", PrepareSpec{Root: "snapshots", ID: NewID(1, 0), ChunkObjects: 4}},
		{"root_empty", PrepareSpec{Root: "/", ID: NewID(1, 7), ChunkObjects: 4}},
		{"chunk_object_count_zero", PrepareSpec{Root: "snapshots", ID: NewID(1, 7)}},
		{"created_at_ms_negative", PrepareSpec{Root: "snapshots", ID: NewID(1, 7), ChunkObjects: 4, CreatedAt: time.UnixMilli(-1)}},
		{"view_negative", PrepareSpec{Root: "snapshots", ID: NewID(1, 7), ChunkObjects: 4, View: -1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			c.spec.WorkDir = dir
			_, err := Prepare(s.Capture(), c.spec)
			require.ErrorIs(t, err, ErrWriterArguments)
			left, _ := os.ReadDir(dir)
			require.Empty(t, left, "nothing touched")
		})
	}
}

// lyingSource says it holds one object more than it yields.
type lyingSource struct{ Source }

func (l lyingSource) Len() (int, int) {
	o, sg := l.Source.Len()
	return o + 1, sg
}

// TestSecondAttemptUnderOneLease: an id names a lease and a batch, not an
// attempt; a second attempt at the same batch under the same lease meets
// the first one's objects and fails cleanly, deleting nothing.
func TestSecondAttemptUnderOneLease(t *testing.T) {
	s := testState(t, 5)
	st := localStore(t)
	first, err := Write(context.Background(), st, objstore.Trust{}, prepare(t, s, "r", 9, 4), WriteOptions{})
	require.NoError(t, err)
	_, err = Write(context.Background(), st, objstore.Trust{}, prepare(t, s, "r", 9, 4), WriteOptions{})
	require.ErrorIs(t, err, ErrPrefixTaken)
	_, got, _, err := OpenState(context.Background(), st, first.Pointer)
	require.NoError(t, err, "the first attempt's snapshot is whole")
	require.Equal(t, s.Digest(), got.Digest())
}

func TestBudgetsAreTypedSkipReasons(t *testing.T) {
	require.Equal(t, "memory_budget", SkipReason(fmt.Errorf("x: %w", ErrCaptureTooLarge)))
	require.Equal(t, "disk_budget", SkipReason(ErrDiskBudget))
	require.Equal(t, "", SkipReason(errors.New("other")))
	err := Budget{MaxCaptureBytes: 10}.Check(EstimateFor(testState(t, 1000).Footprint(), DefaultChunkObjects))
	require.ErrorIs(t, err, ErrCaptureTooLarge)
}
