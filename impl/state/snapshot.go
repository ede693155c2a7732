package state

import (
	"fmt"

	"github.com/oplogha/oplogha/impl/contract/batchsnap"
	"github.com/oplogha/oplogha/impl/contract/metadata"
)

// A snapshot holds what upstream's standby keeps (StandbyObjectEntry,
// StandbySegmentInfo): these convert one object or segment between this
// model and upstream's snapshot records, losslessly both ways.

// SnapshotObject fills e with key and o as upstream's snapshot stores
// them, reusing e's replica slice. The data type must already be valid (a
// State holds only valid objects).
func SnapshotObject(k ObjectKey, o *Object, e *batchsnap.ObjectEntry) {
	reps := e.Metadata.Replicas[:0]
	for i := range o.Replicas {
		reps = append(reps, replicaFields(&o.Replicas[i]))
	}
	pinned := batchsnap.PinnedOf(o.HardPinned)
	if o.HardPinnedUnset {
		pinned = batchsnap.PinnedUnset
	}
	*e = batchsnap.ObjectEntry{TenantID: k.Tenant, Key: k.Key, Metadata: batchsnap.ObjectMetadata{
		ClientID: metadata.UUID{First: o.ClientID.First, Second: o.ClientID.Second}, Size: o.Size, Replicas: reps,
		GroupID: o.GroupID, DataType: metadata.ObjectDataType(o.DataType), HardPinned: pinned}}
}

// ObjectFromSnapshot is the object a snapshot entry holds, validated as
// Apply would validate it; its key is (TenantID, Key). Nothing of e is
// shared with the result.
func ObjectFromSnapshot(e *batchsnap.ObjectEntry) (ObjectKey, *Object, error) {
	k := ObjectKey{Tenant: e.TenantID, Key: e.Key}
	m := &e.Metadata
	o, err := objectFromReplicas(m.Replicas)
	if err != nil {
		return k, nil, err
	}
	o.ClientID, o.Size = UUID{First: m.ClientID.First, Second: m.ClientID.Second}, m.Size
	o.GroupID, o.DataType = m.GroupID, uint32(m.DataType)
	switch m.HardPinned {
	case batchsnap.PinnedTrue:
		o.HardPinned = true
	case batchsnap.PinnedUnset:
		o.HardPinnedUnset = true
	case batchsnap.PinnedFalse:
	default:
		return k, nil, fmt.Errorf("%w: hard_pinned %d", ErrMalformed, m.HardPinned)
	}
	if err := o.validate(); err != nil {
		return k, nil, err
	}
	return k, o, nil
}

// SnapshotSegment is s as upstream's snapshot stores it.
func SnapshotSegment(s *Segment) batchsnap.SegmentInfo {
	return batchsnap.SegmentInfo{SegmentName: s.Name, TransportEndpoint: s.Endpoint, Capacity: s.Capacity,
		IsMemorySegment: s.Kind == ReplicaMemory, FilePath: s.FilePath}
}

// SegmentFromSnapshot is the segment a snapshot entry holds, validated.
func SegmentFromSnapshot(si batchsnap.SegmentInfo) (Segment, error) {
	s := segmentFromOp(metadata.SegmentMountOp{SegmentName: si.SegmentName, TransportEndpoint: si.TransportEndpoint,
		Capacity: si.Capacity, IsMemorySegment: si.IsMemorySegment, FilePath: si.FilePath})
	return s, s.validate()
}
