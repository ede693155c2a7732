package snapshot

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/impl/objstore"
	"github.com/oplogha/oplogha/impl/objstore/localdir"
	"github.com/oplogha/oplogha/impl/state"
)

func TestWriteThenOpenByExactKeys(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	root := t.TempDir()
	st, err := localdir.New(root)
	require.NoError(t, err)
	s := buildState(t, 100)
	f, l := encodeToFile(t, s, 16)
	d, m := descriptorFor(t, l, 3)
	w, err := Write(ctx, st, objstore.Trust{}, d.ObjectPrefix, f, l, m, d, WriteOptions{Parallel: 3})
	require.NoError(t, err)
	require.Len(t, w.Proofs, len(l.Parts)+2)
	for k, p := range w.Proofs {
		require.Equal(t, objstore.ProofReadback, p, k)
	}

	b := state.NewBuilder()
	d2, m2, h, err := Open(ctx, st, d.ObjectPrefix, Visitor{Segment: b.AddSegment, Object: b.AddObject})
	require.NoError(t, err)
	require.Equal(t, d, d2)
	require.Equal(t, m, m2)
	back, err := b.Finish(h.Cursor)
	require.NoError(t, err)
	require.Equal(t, s.Digest(), back.Digest())

	// Writing the same snapshot again collides: the candidate fails.
	_, err = Write(ctx, st, objstore.Trust{}, d.ObjectPrefix, f, l, m, d, WriteOptions{})
	require.ErrorIs(t, err, objstore.ErrExists)

	// A byte flipped in a stored chunk is caught on read, and so is a missing one.
	chunk := filepath.Join(root, filepath.FromSlash(path.Join(d.ObjectPrefix, ChunkObject(2))))
	raw, err := os.ReadFile(chunk)
	require.NoError(t, err)
	raw[len(raw)/2] ^= 0x10
	require.NoError(t, os.WriteFile(chunk, raw, 0o644))
	_, _, _, err = Open(ctx, st, d.ObjectPrefix, Visitor{})
	require.ErrorIs(t, err, ErrChecksum)
	require.NoError(t, os.Remove(chunk))
	_, _, _, err = Open(ctx, st, d.ObjectPrefix, Visitor{})
	require.ErrorIs(t, err, objstore.ErrNotFound)
}

func TestWriteRefusesDisagreeingIdentity(t *testing.T) {
	st, err := localdir.New(t.TempDir())
	require.NoError(t, err)
	s := buildState(t, 5)
	f, l := encodeToFile(t, s, 16)
	d, m := descriptorFor(t, l, 3)
	d.LastIncludedSeq++
	_, err = Write(context.Background(), st, objstore.Trust{}, d.ObjectPrefix, f, l, m, d, WriteOptions{})
	require.ErrorIs(t, err, ErrIdentity)
	entries, _ := st.List(context.Background(), "")
	require.Empty(t, entries, "nothing is written for a candidate whose identity fields disagree")
}
