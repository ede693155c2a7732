package model

import (
	"testing"

	"github.com/oplogha/oplogha/impl/contract/metadata"

	"github.com/oplogha/oplogha/impl/contract/batchlog"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/impl/contract"
)

func memPut(key, endpoint string, offset, length uint64) batchlog.Entry {
	p, err := metadata.EncodeMetadataPayload(metadata.MetadataPayload{Size: length, Replicas: []metadata.ReplicaDescriptor{{ID: 1,
		Variant: metadata.MemoryDescriptor{Buffer: metadata.BufferDescriptor{Size: length, BufferAddress: offset, TransportEndpoint: endpoint}},
		Status:  metadata.ReplicaComplete}}})
	if err != nil {
		panic(err)
	}
	return batchlog.Entry{Op: batchlog.OpPutEnd, Tenant: "t", Key: key, Payload: p}
}

func TestOverlaps(t *testing.T) {
	s := New()
	idx := NewBuffers(s)
	step := func(e batchlog.Entry) []Overlap {
		require.NoError(t, s.Apply(one(s.Cursor(), e)))
		return idx.Update(s, []ObjectKey{Key(e.Tenant, e.Key)})
	}
	require.Empty(t, step(memPut("a", "seg-1", 0, 100)))
	require.Empty(t, step(memPut("b", "seg-1", 100, 100)), "adjacent: no overlap")
	require.Empty(t, step(memPut("c", "seg-2", 50, 100)), "another segment")
	got := step(memPut("d", "seg-1", 150, 10))
	require.Len(t, got, 1)
	require.Equal(t, "t/d [150, 160) and t/b [100, 200) on segment seg-1", got[0].String())
	require.Len(t, s.Overlaps(), 1, "each pair once")
	all := idx.Overlaps()
	require.Len(t, all, 1)
	require.ElementsMatch(t, []ObjectKey{Key("t", "b"), Key("t", "d")}, []ObjectKey{all[0].A, all[0].B})

	// Removing b frees its range; d alone holds it.
	require.Empty(t, step(remove("b")))
	require.Empty(t, s.Overlaps())
	// A replaced object keeps only its new replicas.
	require.Len(t, step(memPut("a", "seg-1", 155, 1)), 1)
	require.Empty(t, step(memPut("a", "seg-1", 0, 100)))
	require.Empty(t, s.Overlaps())
	// A long span found from far behind, and one inside another.
	require.Len(t, step(memPut("big", "seg-2", 0, 1<<40)), 1)
	require.Len(t, step(memPut("e", "seg-2", 1<<39, 1)), 1)
	require.Len(t, s.Overlaps(), 2)
	// A zero-length replica holds nothing.
	require.Empty(t, step(memPut("z", "seg-1", 0, 0)))
}

// Apply's rules beyond the vectors: continuity, atomic refusal, an
// undecodable payload stores empty metadata, segments by endpoint.
func TestApplyRules(t *testing.T) {
	s := New()
	err := s.Apply(batchlog.Batch{ID: 2, FirstSeq: 1, LastSeq: 1, Entries: []batchlog.Entry{remove("x")}})
	require.ErrorIs(t, err, ErrDiscontinuous)
	err = s.Apply(batchlog.Batch{ID: 1, FirstSeq: 1, LastSeq: 2, Entries: []batchlog.Entry{remove("x")}})
	require.ErrorIs(t, err, ErrDiscontinuous)

	err = s.Apply(batchlog.Batch{ID: 1, FirstSeq: 1, LastSeq: 2, Entries: []batchlog.Entry{put("a", 1), {Op: 9, Key: "z"}}})
	require.ErrorIs(t, err, ErrRejected)
	require.Contains(t, err.Error(), "unsupported op_type=9")
	n, _ := s.Len()
	require.Zero(t, n, "nothing of a refused batch applies")
	long := make([]byte, batchlog.MaxObjectKeySize+1)
	err = s.Apply(one(s.Cursor(), batchlog.Entry{Op: batchlog.OpRemove, Key: string(long)}))
	require.ErrorIs(t, err, ErrRejected)
	require.Contains(t, err.Error(), "object_key too large")

	require.NoError(t, s.Apply(one(s.Cursor(), batchlog.Entry{Op: batchlog.OpPutEnd, Tenant: "default", Key: "junk", Payload: []byte{1, 2, 3}})))
	o, ok := s.Object("", "junk")
	require.True(t, ok)
	require.True(t, o.Equal(Object{}))
	require.Equal(t, PinUnset, o.HardPinned)

	mount := metadata.EncodeSegmentMountOp(metadata.SegmentMountOp{SegmentName: "n", TransportEndpoint: "ep", Capacity: 10, IsMemorySegment: true})
	require.NoError(t, s.Apply(one(s.Cursor(), batchlog.Entry{Op: batchlog.OpSegmentMount, Key: "by-name", Payload: mount})))
	seg, ok := s.Segment("ep")
	require.True(t, ok)
	require.Equal(t, "memory", seg.Kind())
	require.NoError(t, s.Apply(one(s.Cursor(), batchlog.Entry{Op: batchlog.OpSegmentMount, Key: "x", Payload: []byte("not a payload")})))
	_, nSeg := s.Len()
	require.Equal(t, 1, nSeg, "an undecodable segment payload changes nothing")
	require.Equal(t, contract.Cursor{BatchID: 3, Seq: 3}, s.Cursor())

	c := s.Clone()
	require.NoError(t, c.Apply(one(c.Cursor(), remove("junk"))))
	_, ok = s.Object("", "junk")
	require.True(t, ok, "a clone is independent")

	_, err = FromSnapshot(contract.Cursor{BatchID: 1}, nil, nil)
	require.ErrorIs(t, err, ErrCursor)
	_, err = FromSnapshot(contract.Cursor{}, nil, map[ObjectKey]Object{{Tenant: "", Key: "k"}: {}, {Tenant: "default", Key: "k"}: {}})
	require.ErrorIs(t, err, ErrSnapshot)
}
