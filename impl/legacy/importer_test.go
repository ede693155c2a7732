package legacy_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oplogha/oplogha/impl/contract/batchlog"
	"github.com/oplogha/oplogha/impl/contract/batchsnap"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/oplogha/oplogha/fixtures/legacy/legacyfixture"
	"github.com/oplogha/oplogha/impl/contract/keyspace"
	"github.com/oplogha/oplogha/impl/contract/legacysnap"
	"github.com/oplogha/oplogha/impl/internal/etcdtest"
	"github.com/oplogha/oplogha/impl/legacy"
	"github.com/oplogha/oplogha/impl/objstore"
	"github.com/oplogha/oplogha/impl/objstore/localdir"
	"github.com/oplogha/oplogha/impl/oplog"
	"github.com/oplogha/oplogha/impl/publish"
	"github.com/oplogha/oplogha/impl/retention"
	"github.com/oplogha/oplogha/impl/snapshot"
	"github.com/oplogha/oplogha/impl/state"
)

type importWorld struct {
	srv   *etcdtest.Server
	ks    keyspace.Keyspace
	store *localdir.Store
	view  uint64
}

func newImportWorld(t *testing.T) *importWorld {
	srv := etcdtest.Start(t)
	ks := keyspace.Must("imported")
	st, err := localdir.New(t.TempDir())
	require.NoError(t, err)
	view, err := oplog.ClaimProducerView(context.Background(), srv.Client, ks)
	require.NoError(t, err)
	return &importWorld{srv: srv, ks: ks, store: st, view: view}
}

func (w *importWorld) importer(t *testing.T) legacy.Importer {
	return legacy.Importer{Client: w.srv.Client, Keyspace: w.ks, Store: w.store, Prefix: "snapshots/imported", WorkDir: t.TempDir(), Node: "n1", View: w.view}
}

func openFixture(t *testing.T, name string) *legacy.Snapshot {
	t.Helper()
	src := source(filepath.Join(fixtures, name))
	id, err := src.Latest(context.Background(), "mooncake_cluster")
	require.NoError(t, err)
	snap, err := src.Open(context.Background(), "mooncake_cluster", id)
	require.NoError(t, err)
	return snap
}

func (w *importWorld) get(t *testing.T, key string) []byte {
	resp, err := w.srv.Client.Get(context.Background(), key)
	require.NoError(t, err)
	if len(resp.Kvs) == 0 {
		return nil
	}
	return resp.Kvs[0].Value
}

// Every valid fixture imports into a fresh namespace as the latest pointer at
// batch 1 with the floor at 1 and batch 1 the prefix's terminal batch:
// recovery from that pointer restores the exact digest, the complete OpLog
// cannot (batch 1 stands for the import and no applier takes it), and the
// next append continues the legacy sequence.
func TestImportValidFixtures(t *testing.T) {
	for _, name := range []string{"small", "empty", "zero-cursor", "offloaded"} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			w := newImportWorld(t)
			exp := readExpect(t, name)
			snap := openFixture(t, name)
			res, err := w.importer(t).Import(ctx, "mooncake_cluster", snap)
			require.NoError(t, err)
			require.Equal(t, exp.Digest, res.Marker.StateDigest)
			require.Equal(t, exp.SnapshotID, res.Marker.LegacySnapshotID)
			require.Equal(t, legacy.ImportCursor(exp.Seq), res.Pointer.Cursor())
			for _, proof := range res.Proofs {
				require.Equal(t, objstore.ProofReadback, proof, "a local store has no checksum: every object read back")
			}

			// etcd: prefix, batch 1, floor, latest, record; no fallback, lease released.
			p, err := oplog.DecodeDurablePrefix(w.get(t, w.ks.DurablePrefix()))
			require.NoError(t, err)
			require.Equal(t, legacy.ImportCursor(exp.Seq), p.Cursor())
			b1, err := batchlog.DecodeBatch(w.get(t, w.ks.Batch(1)))
			require.NoError(t, err)
			require.Equal(t, legacy.ImportBatch(p.Cursor()), b1)
			require.Equal(t, batchlog.Batch{ID: 1, FirstSeq: p.LastSeq, LastSeq: p.LastSeq, Entries: []batchlog.Entry{{Op: batchlog.OpLeaseRenew}}}, b1)
			f, err := oplog.DecodeFloor(w.get(t, w.ks.CompactionFloor()))
			require.NoError(t, err)
			require.Equal(t, uint64(1), f.BatchID)
			require.Nil(t, w.get(t, w.ks.SnapshotFallback()))
			require.Nil(t, w.get(t, w.ks.SnapshotMaintenance()), "the maintenance lease is released")
			m, err := legacy.DecodeMarker(w.get(t, w.ks.LegacyImport()))
			require.NoError(t, err)
			require.Equal(t, res.Marker, m)

			// Recovery by the pointer, exact keys only: the same digest.
			o, err := publish.Observe(ctx, w.srv.Client, w.ks)
			require.NoError(t, err)
			require.True(t, o.Latest.Valid())
			_, got, _, err := snapshot.OpenState(ctx, w.store, *o.Latest.Pointer)
			require.NoError(t, err)
			require.Equal(t, exp.Digest, string(got.Digest()))

			// The complete OpLog is not a recovery source after an import: a
			// replay from batch 0 fails closed at batch 1, on the sequence gap
			// before it or, at seq 1, on its entry no applier takes.
			r := &oplog.Reader{KV: w.srv.Client, Keyspace: w.ks}
			_, err = r.ReadAll(ctx, state.New().Apply)
			if p.LastSeq > 1 {
				require.ErrorIs(t, err, oplog.ErrGap)
			} else {
				require.ErrorIs(t, err, state.ErrUnknownOp)
			}
			// From the pointer's cursor there is nothing to replay.
			_, err = r.Scan(ctx, got.Cursor(), func(state.Batch) error { return errors.New("batch 1 replayed") })
			require.NoError(t, err)

			// The primary's writer continues at batch 2, the sequence after the import.
			wr, err := oplog.NewWriter(ctx, w.srv.Client, w.ks, w.view)
			require.NoError(t, err)
			seg := state.Segment{Endpoint: "10.1.1.1:1", Name: "new", Capacity: 1 << 20, Kind: state.ReplicaMemory}
			batch, err := wr.Append(ctx, []state.Entry{state.MountSegment(seg)})
			require.NoError(t, err)
			require.Equal(t, uint64(2), batch.ID)
			require.Equal(t, legacy.ImportCursor(exp.Seq).Seq+1, batch.FirstSeq)
			_, err = r.Scan(ctx, got.Cursor(), got.Apply)
			require.NoError(t, err, "latest + suffix replays")
		})
	}
}

// The offloaded fixture's disk, local-disk and DFS replicas arrive in the
// imported snapshot each with its fields, beside the memory replicas: the
// state recovered from the pointer holds, for every object, exactly the
// replicas the generator wrote (legacyfixture.Content, not the reader's
// view), mapped as upstream's PUT_END payload carries them.
func TestImportOffloadedFixture(t *testing.T) {
	ctx := context.Background()
	var spec legacyfixture.SnapshotSpec
	for _, f := range legacyfixture.Fixtures() {
		if f.Name == "offloaded" {
			spec = f.Snapshots[len(f.Snapshots)-1]
		}
	}
	require.True(t, spec.Offload)
	content := legacyfixture.Content(spec)

	w := newImportWorld(t)
	res, err := w.importer(t).Import(ctx, "mooncake_cluster", openFixture(t, "offloaded"))
	require.NoError(t, err)
	_, got, _, err := snapshot.OpenState(ctx, w.store, res.Pointer)
	require.NoError(t, err)

	endpoint := map[legacysnap.UUID]legacysnap.Segment{}
	for _, sg := range content.Segments {
		endpoint[sg.ID] = sg
	}
	status := map[legacysnap.ReplicaStatus]state.ReplicaStatus{legacysnap.ReplicaComplete: state.ReplicaComplete,
		legacysnap.ReplicaProcessing: state.ReplicaProcessing}
	kinds := map[state.ReplicaKind]int{}
	for _, o := range content.Objects {
		obj, ok := got.Object(o.Tenant, o.Key)
		require.True(t, ok, "%s/%s", o.Tenant, o.Key)
		require.Len(t, obj.Replicas, len(o.Replicas), "%s/%s", o.Tenant, o.Key)
		for i, r := range o.Replicas {
			want := state.Replica{ID: r.ID, Status: status[r.Status]}
			switch {
			case r.Memory != nil:
				sg := endpoint[r.Memory.Segment]
				want.Kind, want.Segment, want.Offset, want.Length = state.ReplicaMemory, sg.Endpoint, r.Memory.Address-sg.Base, r.Memory.Size
			case r.Disk != nil:
				want.Kind, want.FilePath, want.Length = state.ReplicaDisk, r.Disk.FilePath, o.Size
				require.NotEmpty(t, want.FilePath)
			case r.LocalDisk != nil:
				want.Kind, want.ClientID, want.Length, want.Segment = state.ReplicaLocalDisk,
					state.UUID{First: r.LocalDisk.Client.Hi, Second: r.LocalDisk.Client.Lo}, o.Size, r.LocalDisk.Endpoint
				require.False(t, want.ClientID.IsZero())
				require.NotEmpty(t, want.Segment)
			case r.DFS != nil:
				want.Kind, want.FilePath, want.Offset, want.Length, want.AlignedSize, want.ShardIdx = state.ReplicaDFS,
					r.DFS.FilePath, r.DFS.Offset, o.Size, r.DFS.AlignedSize, r.DFS.ShardIdx
			}
			require.Equal(t, want, obj.Replicas[i], "%s/%s replica %d", o.Tenant, o.Key, i)
			kinds[want.Kind]++
		}
	}
	require.NotZero(t, kinds[state.ReplicaMemory])
	require.Equal(t, 16, kinds[state.ReplicaDisk])
	require.Equal(t, 8, kinds[state.ReplicaLocalDisk])
	require.Equal(t, 3, kinds[state.ReplicaDFS])
	require.Equal(t, readExpect(t, "offloaded").Digest, string(got.Digest()))
}

// An import goes only into a fresh namespace, once; a stale producer view
// loses the transaction and leaves etcd as it was.
func TestImportRefusals(t *testing.T) {
	ctx := context.Background()
	snap := openFixture(t, "small")

	t.Run("twice", func(t *testing.T) {
		w := newImportWorld(t)
		_, err := w.importer(t).Import(ctx, "mooncake_cluster", snap)
		require.NoError(t, err)
		_, err = w.importer(t).Import(ctx, "mooncake_cluster", openFixture(t, "zero-cursor"))
		require.ErrorIs(t, err, legacy.ErrOtherImport)
	})
	t.Run("namespace with batches", func(t *testing.T) {
		w := newImportWorld(t)
		wr, err := oplog.NewWriter(ctx, w.srv.Client, w.ks, w.view)
		require.NoError(t, err)
		_, err = wr.Append(ctx, []state.Entry{state.MountSegment(state.Segment{Endpoint: "e", Name: "n", Capacity: 1, Kind: state.ReplicaMemory})})
		require.NoError(t, err)
		_, err = w.importer(t).Import(ctx, "mooncake_cluster", snap)
		require.ErrorIs(t, err, legacy.ErrNamespaceNotEmpty)
		require.ErrorContains(t, err, "durable prefix at batch 1")
		require.Nil(t, w.get(t, w.ks.SnapshotLatest()))
	})
	t.Run("stale producer view", func(t *testing.T) {
		w := newImportWorld(t)
		_, err := oplog.ClaimProducerView(ctx, w.srv.Client, w.ks) // another node promoted since
		require.NoError(t, err)
		_, err = w.importer(t).Import(ctx, "mooncake_cluster", snap)
		require.ErrorIs(t, err, legacy.ErrImportRace)
		for _, k := range []string{w.ks.SnapshotLatest(), w.ks.CompactionFloor(), w.ks.LegacyImport()} {
			require.Nil(t, w.get(t, k), k)
		}
		p, err := oplog.DecodeDurablePrefix(w.get(t, w.ks.DurablePrefix()))
		require.NoError(t, err)
		require.Zero(t, p.BatchID)
		ns, err := legacy.ReadNamespace(ctx, w.srv.Client, w.ks)
		require.NoError(t, err)
		require.True(t, ns.Fresh, "still importable by the new primary: %v", ns.Residue)
	})
}

// The converted snapshot is an ordinary batch-OpLog snapshot in
// upstream's format: it verifies and decodes on its own to the imported
// content.
func TestImportedSnapshotIsUpstreamsFormat(t *testing.T) {
	ctx := context.Background()
	w := newImportWorld(t)
	res, err := w.importer(t).Import(ctx, "mooncake_cluster", openFixture(t, "small"))
	require.NoError(t, err)
	h, err := snapshot.Verify(ctx, w.store, res.Pointer)
	require.NoError(t, err)
	d := h.Descriptor
	require.Equal(t, uint32(batchsnap.SchemaVersion), d.SchemaVersion)
	require.Equal(t, batchsnap.Format, d.SnapshotFormat)
	require.Equal(t, uint64(1), d.LastIncludedBatchID)
	require.Equal(t, res.Marker.SnapshotID, d.SnapshotID)
}

// A crash after the converted snapshot is written and before the import
// transaction leaves an orphan and a namespace still fresh: the next primary
// imports again, and the pointer names its snapshot, not the orphan.
func TestCrashBeforeTheImportTransaction(t *testing.T) {
	ctx := context.Background()
	w := newImportWorld(t)
	snap := openFixture(t, "small")
	crashed := w.importer(t)
	crashed.AfterWrite = func() { panic("crash") }
	require.Panics(t, func() { _, _ = crashed.Import(ctx, "mooncake_cluster", snap) })

	ns, err := legacy.ReadNamespace(ctx, w.srv.Client, w.ks)
	require.NoError(t, err)
	require.True(t, ns.Fresh, "nothing committed: %v", ns.Residue)
	groups, err := w.store.List(ctx, "snapshots/imported/")
	require.NoError(t, err)
	require.NotEmpty(t, groups, "the crashed importer's objects are there, as an orphan")

	view, err := oplog.ClaimProducerView(ctx, w.srv.Client, w.ks) // the next primary
	require.NoError(t, err)
	w.view = view
	res, err := w.importer(t).Import(ctx, "mooncake_cluster", snap)
	require.NoError(t, err)
	all, err := w.store.List(ctx, "snapshots/imported/")
	require.NoError(t, err)
	ids := map[string]bool{}
	for _, o := range all {
		ids[strings.SplitN(strings.TrimPrefix(o.Key, "snapshots/imported/batch-oplog/"), "/", 2)[0]] = true
	}
	require.Len(t, ids, 2, "the orphan and the imported snapshot: %v", ids)
	o, err := publish.Observe(ctx, w.srv.Client, w.ks)
	require.NoError(t, err)
	require.Equal(t, res.Marker.SnapshotID, o.Latest.Pointer.SnapshotID)
	require.Equal(t, uint64(view), res.Marker.ProducerView)
}

// A snapshot upstream's own code wrote imports like a fixture: recovery by
// the resulting pointer restores exactly the state Open built from it.
func TestImportUpstreamVector(t *testing.T) {
	ctx := context.Background()
	w := newImportWorld(t)
	snap, err := source(filepath.Join(vectors, "small")).Open(ctx, "mooncake_cluster", "20260101_000000_002")
	require.NoError(t, err)
	res, err := w.importer(t).Import(ctx, "mooncake_cluster", snap)
	require.NoError(t, err)
	require.Equal(t, 11, res.Marker.Objects)
	require.Equal(t, 2, res.Marker.Segments)
	require.Equal(t, "20260101_000000_002", res.Marker.LegacySnapshotID)
	o, err := publish.Observe(ctx, w.srv.Client, w.ks)
	require.NoError(t, err)
	_, got, _, err := snapshot.OpenState(ctx, w.store, *o.Latest.Pointer)
	require.NoError(t, err)
	require.Equal(t, snap.State.Digest(), got.Digest())
}

// upstreamStartupCheck is upstream's OpLogBatchStorage::
// ValidateDurablePrefixAtStartup (kvcache-ai/Mooncake @3b5a594,
// oplog_batch_storage.cpp:261-304, with ReadBatch :420-442), written here
// against impl/contract alone so that it judges the namespace as an
// upstream master does, not as impl/oplog's reader does: the prefix's zero
// fields agree; a zero prefix stands only with no batch key; any other
// prefix's terminal batch is present, decodes (DecodeOpLogBatchRecord), is
// that batch and ends at the prefix's last_seq.
func upstreamStartupCheck(ctx context.Context, kv clientv3.KV, ks keyspace.Keyspace) error {
	resp, err := kv.Get(ctx, ks.DurablePrefix())
	if err != nil {
		return err
	}
	if len(resp.Kvs) == 0 {
		return fmt.Errorf("no durable prefix")
	}
	p, err := batchlog.DecodeDurablePrefix(resp.Kvs[0].Value)
	if err != nil {
		return fmt.Errorf("durable prefix: %w", err)
	}
	if (p.BatchID == 0) != (p.LastSeq == 0) {
		return fmt.Errorf("durable prefix has inconsistent zero fields: batch_id=%d last_seq=%d", p.BatchID, p.LastSeq)
	}
	if p.BatchID == 0 {
		n, err := kv.Get(ctx, ks.BatchPrefix(), clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err != nil {
			return err
		}
		if n.Count > 0 {
			return fmt.Errorf("zero durable prefix has batch records")
		}
		return nil
	}
	resp, err = kv.Get(ctx, ks.Batch(p.BatchID))
	if err != nil {
		return err
	}
	if len(resp.Kvs) == 0 {
		return fmt.Errorf("durable prefix terminal batch is missing: batch_id=%d", p.BatchID)
	}
	b, err := batchlog.DecodeBatch(resp.Kvs[0].Value)
	if err != nil {
		return fmt.Errorf("failed to decode OpLog batch record: %w", err)
	}
	if b.ID != p.BatchID {
		return fmt.Errorf("OpLog batch id does not match key: requested=%d, payload=%d", p.BatchID, b.ID)
	}
	if b.LastSeq != p.LastSeq {
		return fmt.Errorf("durable prefix last sequence does not match batch: prefix_last_seq=%d, batch_last_seq=%d", p.LastSeq, b.LastSeq)
	}
	return nil
}

// An import leaves a namespace an upstream master accepts at startup: the
// durable prefix at the import cursor and its terminal batch, batch 1,
// present and ending at the cursor's sequence (upstream refuses a prefix
// whose terminal batch is missing).
func TestImportLeavesAPrefixUpstreamAccepts(t *testing.T) {
	for _, name := range []string{"small", "empty", "zero-cursor"} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			w := newImportWorld(t)
			_, err := w.importer(t).Import(ctx, "mooncake_cluster", openFixture(t, name))
			require.NoError(t, err)
			require.NoError(t, upstreamStartupCheck(ctx, w.srv.Client, w.ks))
		})
	}
}

// Batch 1 is at the floor the import publishes: retention cannot delete it
// while it is the prefix's batch, and deletes it like any batch under the
// floor once the prefix has moved past it; recovery from the pointer never
// needed it.
func TestPruneAfterImport(t *testing.T) {
	ctx := context.Background()
	w := newImportWorld(t)
	res, err := w.importer(t).Import(ctx, "mooncake_cluster", openFixture(t, "small"))
	require.NoError(t, err)
	guard := retention.DeleteGuard{ProducerView: w.view, RequireFloor: true}
	_, err = retention.DeleteThrough(ctx, w.srv.Client, w.ks, 1, guard)
	require.ErrorIs(t, err, retention.ErrWouldDeletePrefix)

	wr, err := oplog.NewWriter(ctx, w.srv.Client, w.ks, w.view)
	require.NoError(t, err)
	seg := state.Segment{Endpoint: "10.1.1.1:1", Name: "new", Capacity: 1 << 20, Kind: state.ReplicaMemory}
	_, err = wr.Append(ctx, []state.Entry{state.MountSegment(seg)})
	require.NoError(t, err)
	del, err := retention.DeleteThrough(ctx, w.srv.Client, w.ks, 1, guard)
	require.NoError(t, err)
	require.Equal(t, int64(1), del.Deleted)
	require.Nil(t, w.get(t, w.ks.Batch(1)))

	_, st, _, err := snapshot.OpenState(ctx, w.store, res.Pointer)
	require.NoError(t, err)
	r := &oplog.Reader{KV: w.srv.Client, Keyspace: w.ks}
	head, err := r.Scan(ctx, st.Cursor(), st.Apply)
	require.NoError(t, err)
	require.Equal(t, uint64(2), head.Prefix.BatchID)
	require.NoError(t, upstreamStartupCheck(ctx, w.srv.Client, w.ks))
}
