package legacy_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/impl/internal/etcdtest"
	"github.com/oplogha/oplogha/impl/keyspace"
	"github.com/oplogha/oplogha/impl/legacy"
	"github.com/oplogha/oplogha/impl/objstore"
	"github.com/oplogha/oplogha/impl/objstore/localdir"
	"github.com/oplogha/oplogha/impl/oplog"
	"github.com/oplogha/oplogha/impl/publish"
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
// batch 1 with the floor at 1: recovery from that pointer restores the exact
// digest, the complete OpLog cannot (batch 1 was never written, and is not
// read as empty), and the next append continues the legacy sequence.
func TestImportValidFixtures(t *testing.T) {
	for _, name := range []string{"small", "empty", "zero-cursor"} {
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

			// etcd: prefix, floor, latest, record; no fallback, no batch, lease released.
			p, err := oplog.DecodeDurablePrefix(w.get(t, w.ks.DurablePrefix()))
			require.NoError(t, err)
			require.Equal(t, legacy.ImportCursor(exp.Seq), p.Cursor())
			f, err := oplog.DecodeFloor(w.get(t, w.ks.CompactionFloor()))
			require.NoError(t, err)
			require.Equal(t, uint64(1), f.BatchID)
			require.Nil(t, w.get(t, w.ks.SnapshotFallback()))
			require.Nil(t, w.get(t, w.ks.SnapshotWriter()), "the maintenance lease is released")
			m, err := legacy.DecodeMarker(w.get(t, w.ks.LegacyImport()))
			require.NoError(t, err)
			require.Equal(t, res.Marker, m)

			// Recovery by the pointer, exact keys only: the same digest.
			o, err := publish.Observe(ctx, w.srv.Client, w.ks)
			require.NoError(t, err)
			require.True(t, o.Latest.Valid())
			b := state.NewBuilder()
			d, _, h, err := snapshot.Open(ctx, w.store, o.Latest.Pointer.ObjectPrefix, snapshot.Visitor{Segment: b.AddSegment, Object: b.AddObject})
			require.NoError(t, err)
			require.NoError(t, publish.Agree(*o.Latest.Pointer, d))
			got, err := b.Finish(h.Cursor)
			require.NoError(t, err)
			require.Equal(t, exp.Digest, string(got.Digest()))

			// The complete OpLog is not a recovery source after an import.
			r := &oplog.Reader{KV: w.srv.Client, Keyspace: w.ks}
			_, err = r.ReadAll(ctx, state.New().Apply)
			require.ErrorIs(t, err, oplog.ErrGap)

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

// The converted snapshot is an ordinary schema-v1 snapshot: its payload
// decodes on its own to the imported content.
func TestImportedSnapshotIsSchemaV1(t *testing.T) {
	ctx := context.Background()
	w := newImportWorld(t)
	res, err := w.importer(t).Import(ctx, "mooncake_cluster", openFixture(t, "small"))
	require.NoError(t, err)
	d, _, _, err := snapshot.Open(ctx, w.store, res.Pointer.ObjectPrefix, snapshot.Visitor{})
	require.NoError(t, err)
	require.False(t, d.Legacy())
	require.Equal(t, snapshot.DescriptorSchemaVersion, d.SchemaVersion)
	require.Equal(t, uint64(1), d.LastIncludedBatchID)
	require.Equal(t, res.Marker.SnapshotID, d.SnapshotID)
	require.Empty(t, d.PreviousSnapshotID)
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
		ids[strings.SplitN(strings.TrimPrefix(o.Key, "snapshots/imported/"), "/", 2)[0]] = true
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
	b := state.NewBuilder()
	_, _, h, err := snapshot.Open(ctx, w.store, o.Latest.Pointer.ObjectPrefix, snapshot.Visitor{Segment: b.AddSegment, Object: b.AddObject})
	require.NoError(t, err)
	got, err := b.Finish(h.Cursor)
	require.NoError(t, err)
	require.Equal(t, snap.State.Digest(), got.Digest())
}
