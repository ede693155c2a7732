package s3server_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/harness/s3server"
	"github.com/oplogha/oplogha/impl/objstore"
	"github.com/oplogha/oplogha/impl/snapshot"
	"github.com/oplogha/oplogha/impl/state"
)

// A whole snapshot through versitygw: multipart chunks verified by the
// server's checksum, read back by exact keys, and a byte flipped behind the
// server's back named at recovery read.
func TestSnapshotThroughVersity(t *testing.T) {
	srv, st, trust := startServer(t, s3server.Versity)
	b := state.NewBuilder()
	require.NoError(t, b.AddSegment(state.Segment{Endpoint: "10.0.0.1:7000", Name: "a", Capacity: 1 << 50, Kind: state.ReplicaMemory}))
	const n = 250_000
	for i := 0; i < n; i++ {
		require.NoError(t, b.AddObject(state.ObjectKey{Tenant: "t", Key: fmt.Sprintf("k%09d", i)}, state.Object{ClientID: state.UUID{First: 1}, Size: 4096,
			Replicas: []state.Replica{{ID: 1, Kind: state.ReplicaMemory, Segment: "10.0.0.1:7000", Offset: uint64(i) * 4096,
				Length: 4096, Status: state.ReplicaComplete}}}))
	}
	s, err := b.Finish(state.Cursor{BatchID: 40, Seq: 900})
	require.NoError(t, err)

	const chunk = 120_000
	prep, err := snapshot.Prepare(s.Capture(), snapshot.PrepareSpec{Root: "snapshots-prefix/c1", ID: snapshot.NewID(40, 0x77), View: 2,
		WorkDir: t.TempDir(), ChunkObjects: chunk})
	require.NoError(t, err)
	defer prep.Close()
	require.Greater(t, prep.Layout.Chunks[0].Size, int64(5<<20), "chunk 0 goes up as multipart")
	w, err := snapshot.Write(ctx(t), st, trust, prep, snapshot.WriteOptions{Parallel: 2})
	require.NoError(t, err)
	for k, p := range w.Proofs {
		require.Equal(t, objstore.ProofChecksum, p, "%s verified by HEAD's full-object CRC32C, not by download", k)
	}
	// A second attempt under the same id (lease and batch) meets the first
	// one's objects: refused before anything is written.
	_, err = snapshot.Write(ctx(t), st, trust, prep, snapshot.WriteOptions{})
	require.ErrorIs(t, err, snapshot.ErrPrefixTaken, "a second snapshot under the same id is refused")

	_, back, _, err := snapshot.OpenState(ctx(t), st, w.Pointer)
	require.NoError(t, err)
	require.Equal(t, s.Digest(), back.Digest())

	chunk1 := prep.Keys.ObjectChunk(1)
	file := filepath.Join(srv.Dir, "root", "snapshots", filepath.FromSlash(chunk1))
	raw, err := os.ReadFile(file)
	require.NoError(t, err)
	raw[len(raw)-100] ^= 0x01
	require.NoError(t, os.WriteFile(file, raw, 0o644))
	_, err = snapshot.Verify(ctx(t), st, w.Pointer)
	require.ErrorIs(t, err, snapshot.ErrChecksum)
	require.ErrorContains(t, err, chunk1)
}
