package s3server_test

import (
	"fmt"
	"os"
	"path"
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

	f, err := os.Create(filepath.Join(t.TempDir(), "payload"))
	require.NoError(t, err)
	defer f.Close()
	const chunk = 120_000
	l, err := snapshot.Encode(s.Capture(), f, chunk)
	require.NoError(t, err)
	require.Greater(t, l.Parts[1].Size, int64(5<<20), "chunk 0 goes up as multipart")
	id := snapshot.NewID(40, 0x77)
	prefix := path.Join("snapshots-prefix", "c1", id.String())
	m := snapshot.NewManifest(id.String(), 2, chunk, l)
	d := snapshot.Descriptor{SnapshotID: id.String(), SchemaVersion: 1, LastIncludedSeq: 900, LastIncludedBatchID: 40, ProducerViewVersion: 2,
		PayloadChecksum: l.Checksum(), PayloadSize: uint64(l.Size), ManifestKey: path.Join(prefix, snapshot.ManifestObject), ObjectPrefix: prefix, CreatedAtMS: 1}
	w, err := snapshot.Write(ctx(t), st, trust, prefix, f, l, m, d, snapshot.WriteOptions{Parallel: 2})
	require.NoError(t, err)
	for k, p := range w.Proofs {
		require.Equal(t, objstore.ProofChecksum, p, "%s verified by HEAD, not by download", k)
	}
	// Another snapshot under the same id collides: its descriptor differs
	// (its payload objects, byte for byte the same, are the same write).
	other := d
	other.CreatedAtMS++
	_, err = snapshot.Write(ctx(t), st, trust, prefix, f, l, m, other, snapshot.WriteOptions{})
	require.ErrorIs(t, err, objstore.ErrExists, "a second snapshot under the same id collides")

	rb := state.NewBuilder()
	_, _, h, err := snapshot.Open(ctx(t), st, prefix, snapshot.Visitor{Segment: rb.AddSegment, Object: rb.AddObject})
	require.NoError(t, err)
	back, err := rb.Finish(h.Cursor)
	require.NoError(t, err)
	require.Equal(t, s.Digest(), back.Digest())

	file := filepath.Join(srv.Dir, "root", "snapshots", filepath.FromSlash(path.Join(prefix, snapshot.ChunkObject(1))))
	raw, err := os.ReadFile(file)
	require.NoError(t, err)
	raw[len(raw)-100] ^= 0x01
	require.NoError(t, os.WriteFile(file, raw, 0o644))
	_, _, _, err = snapshot.Open(ctx(t), st, prefix, snapshot.Visitor{})
	require.ErrorIs(t, err, snapshot.ErrChecksum)
	require.ErrorContains(t, err, snapshot.ChunkObject(1))
}
