package master

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/impl/internal/etcdtest"
	"github.com/oplogha/oplogha/impl/objstore"
	"github.com/oplogha/oplogha/impl/objstore/localdir"
	"github.com/oplogha/oplogha/impl/oplog"
	"github.com/oplogha/oplogha/impl/publish"
	"github.com/oplogha/oplogha/impl/snapshot"
	"github.com/oplogha/oplogha/impl/state"
)

// noListing is the real store with List forbidden: recovery reads snapshots
// by the exact keys a pointer names and must never list (RFC "Pointers, not
// listing, select recovery state").
type noListing struct {
	objstore.Store
	t *testing.T
}

func (n noListing) List(ctx context.Context, prefix string) ([]objstore.Info, error) {
	n.t.Errorf("recovery listed the store under %q", prefix)
	return n.Store.List(ctx, prefix)
}

// writeSnapshot writes c as a complete, verified snapshot under the cluster's
// store prefix and returns its descriptor; it publishes nothing.
func writeSnapshot(t *testing.T, st objstore.Store, storePrefix string, c *state.Capture, view uint64, lease int64) publish.Pointer {
	t.Helper()
	prep, err := snapshot.Prepare(c, snapshot.PrepareSpec{Root: storePrefix, ID: snapshot.NewID(c.Cursor().BatchID, lease), View: int64(view),
		WorkDir: t.TempDir(), ChunkObjects: snapshot.DefaultChunkObjects})
	require.NoError(t, err)
	defer prep.Close()
	w, err := snapshot.Write(context.Background(), st, objstore.Trust{}, prep, snapshot.WriteOptions{})
	require.NoError(t, err)
	return w.Pointer
}

// An orphan whose every checksum is valid, newer than the latest pointer and
// holding an object the OpLog never had, is never a recovery source: not
// while latest is valid, not when latest is garbage (the complete OpLog is
// used), and not when the OpLog has a gap too (recovery fails closed).
func TestRecoveryIgnoresAValidOrphan(t *testing.T) {
	ctx := context.Background()
	srv := etcdtest.Start(t)
	cfg := DefaultConfig()
	cfg.ClusterID, cfg.Listen, cfg.EtcdEndpoints = "orphan", "127.0.0.1:0", []string{srv.Endpoint}
	cfg.Environment, cfg.ObjectStore, cfg.LocalStoreDir = "development", "local", t.TempDir()
	m, err := New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	store, err := localdir.New(cfg.LocalStoreDir)
	require.NoError(t, err)
	m.cli, m.store = srv.Client, noListing{store, t}

	view, err := oplog.ClaimProducerView(ctx, srv.Client, m.ks)
	require.NoError(t, err)
	w, err := oplog.NewWriter(ctx, srv.Client, m.ks, view)
	require.NoError(t, err)
	live := state.New()
	seg := state.Segment{Endpoint: "10.0.0.1:1", Name: "s", Capacity: 1 << 30, Kind: state.ReplicaMemory}
	obj := func(size uint64) state.Object {
		return state.Object{ClientID: state.UUID{First: 1}, Size: size,
			Replicas: []state.Replica{{ID: 1, Kind: state.ReplicaMemory, Segment: seg.Endpoint, Offset: size,
				Length: size, Status: state.ReplicaComplete}}}
	}
	var published *state.Capture
	for i, e := range []state.Entry{state.MountSegment(seg), state.PutEnd("t", "a", obj(10)), state.PutEnd("t", "b", obj(20)), state.PutEnd("t", "c", obj(30))} {
		b, err := w.Append(ctx, []state.Entry{e})
		require.NoError(t, err)
		require.NoError(t, live.Apply(b))
		if i == 2 {
			published = live.Capture() // batch 3: a, b
		}
	}
	want := live.Digest() // batch 4: a, b, c

	lease, err := publish.AcquireLease(ctx, srv.Client, m.ks, "test", 30)
	require.NoError(t, err)
	d := writeSnapshot(t, store, m.storePrefix(), published, view, int64(lease.ID))
	o, err := publish.Observe(ctx, srv.Client, m.ks)
	require.NoError(t, err)
	plan, err := publish.PlanFor(o, d)
	require.NoError(t, err)
	_, err = publish.Publish(ctx, srv.Client, m.ks, lease.Token, o, plan)
	require.NoError(t, err)
	require.NoError(t, lease.Release(ctx))

	// The orphan: batch 4 plus an object no batch ever held, complete and verified.
	tx := live.Begin()
	require.NoError(t, tx.Stage(state.PutEnd("t", "invented", obj(40))))
	require.NoError(t, live.Commit(tx, state.Batch{ID: 5, FirstSeq: 5, LastSeq: 5, Entries: []state.Entry{state.PutEnd("t", "invented", obj(40))}}))
	orphan := writeSnapshot(t, store, m.storePrefix(), live.Capture(), view, 0x7e57)
	_, err = snapshot.Verify(ctx, store, orphan)
	require.NoError(t, err, "the orphan is a valid snapshot by every checksum")

	check := func(wantSource string) {
		t.Helper()
		info, err := m.bootstrap(ctx)
		require.NoError(t, err)
		require.Equal(t, wantSource, info.Source)
		require.Equal(t, want, m.st.Digest(), "exactly the OpLog's state")
		_, invented := m.st.Object("t", "invented")
		require.False(t, invented, "the orphan's object was never recovered")
		require.Equal(t, state.Cursor{BatchID: 4, Seq: 4}, m.st.Cursor())
	}
	check("latest")

	_, err = srv.Client.Put(ctx, m.ks.SnapshotLatest(), "garbage")
	require.NoError(t, err)
	check("oplog")

	_, err = srv.Client.Delete(ctx, m.ks.Batch(1))
	require.NoError(t, err)
	_, err = m.bootstrap(ctx)
	require.ErrorIs(t, err, oplog.ErrGap, "no pointer, no complete OpLog: fail closed, orphan or not")
}
