package state

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// walkedFootprint is the footprint of r's content counted by walking it:
// what the incrementally kept one must equal.
func walkedFootprint(r Reader) Footprint {
	var fp Footprint
	r.Objects(func(k ObjectKey, o Object) bool { fp.addObject(k, &o, +1); return true })
	r.Segments(func(s Segment) bool { fp.addSegment(&s, +1); return true })
	return fp
}

// TestFootprintFollowsTheState: puts, replacements, removes, revokes,
// mounts, updates and unmounts keep the footprint equal to a walk of the
// content, in a State, a Tx, a Capture and a Builder's state; a rejected
// batch leaves it as it was.
func TestFootprintFollowsTheState(t *testing.T) {
	s := New()
	var b batcher
	big := obj("s1", 1)
	big.GroupID = "a-group"
	big.Replicas = append(big.Replicas, Replica{ID: 9, Kind: ReplicaDisk, FilePath: "/mnt/a/long/path", Length: 4096, Status: ReplicaComplete})
	steps := [][]Entry{
		{MountSegment(memSeg("s1")), MountSegment(memSeg("s2")), PutEnd("t", "a", obj("s1", 1)), PutEnd("t", "b", obj("s2", 2))},
		{PutEnd("t", "a", big), PutEnd("u", "a", obj("s1", 3))}, // a replacement by a bigger object
		{Remove("t", "b"), PutRevoke("u", "a")},                 // a remove and a revoke
		{Remove("t", "never-there"), UnmountSegment("s2")},      // a remove of nothing, an unmount
		{UpdateSegment(Segment{Endpoint: "s1", Name: "renamed-segment", Capacity: 1 << 41, Kind: ReplicaMemory})},
		{{Op: OpPutEnd, Tenant: "", Key: "empty-payload"}}, // upstream's empty metadata
	}
	for i, entries := range steps {
		require.NoError(t, s.Apply(b.next(entries...)), "step %d", i)
		require.Equal(t, walkedFootprint(s), s.Footprint(), "step %d", i)
	}
	require.Equal(t, 2, s.Footprint().Objects)
	require.Equal(t, 1, s.Footprint().Segments)

	c := s.Capture()
	before := s.Footprint()
	bad := b.next(PutEnd("t", "x", obj("s1", 5)), Entry{Op: OpType(250), Tenant: "t", Key: "y"})
	require.Error(t, s.Apply(bad))
	require.Equal(t, before, s.Footprint(), "a rejected batch changes nothing")
	b.id, b.seq = s.Cursor().BatchID, s.Cursor().Seq

	tx := s.Begin()
	require.NoError(t, tx.Stage(PutEnd("t", "staged", big)))
	require.Equal(t, walkedFootprint(tx.Reader()), tx.Reader().Footprint())
	require.Equal(t, before, s.Footprint(), "a staged entry is not the state's until committed")
	require.NoError(t, s.Commit(tx, b.next(PutEnd("t", "staged", big))))
	require.Equal(t, walkedFootprint(s), s.Footprint())
	require.Equal(t, before, c.Footprint(), "a capture keeps the footprint it was taken at")

	bl := NewBuilder()
	s.Segments(func(g Segment) bool { require.NoError(t, bl.AddSegment(g)); return true })
	s.Objects(func(k ObjectKey, o Object) bool { require.NoError(t, bl.AddObject(k, o)); return true })
	built, err := bl.Finish(s.Cursor())
	require.NoError(t, err)
	require.Equal(t, s.Footprint(), built.Footprint(), "a state built from a snapshot costs what the one it was taken from did")
}
