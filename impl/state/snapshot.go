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
	o := newObject(len(e.Metadata.Replicas))
	if err := objectFromSnapshotInto(e, o); err != nil {
		return k, nil, err
	}
	return k, o, nil
}

// objectFromSnapshotInto fills o (its Replicas of the entry's length
// already) from e and validates it.
func objectFromSnapshotInto(e *batchsnap.ObjectEntry, o *Object) error {
	m := &e.Metadata
	if err := fillReplicas(o, m.Replicas); err != nil {
		return err
	}
	o.ClientID, o.Size = UUID{First: m.ClientID.First, Second: m.ClientID.Second}, m.Size
	o.GroupID, o.DataType = m.GroupID, uint32(m.DataType)
	o.HardPinned, o.HardPinnedUnset = false, false
	switch m.HardPinned {
	case batchsnap.PinnedTrue:
		o.HardPinned = true
	case batchsnap.PinnedUnset:
		o.HardPinnedUnset = true
	case batchsnap.PinnedFalse:
	default:
		return fmt.Errorf("%w: hard_pinned %d", ErrMalformed, m.HardPinned)
	}
	return o.validate()
}

// SnapshotChecker validates snapshot entries as ObjectFromSnapshot does,
// into one scratch object: a decode-check that keeps nothing allocates
// nothing per object. Its zero value is ready.
type SnapshotChecker struct{ o Object }

// Check is ObjectFromSnapshot's verdict on e.
func (c *SnapshotChecker) Check(e *batchsnap.ObjectEntry) error {
	n := len(e.Metadata.Replicas)
	if cap(c.o.Replicas) < n {
		c.o.Replicas = make([]Replica, n)
	}
	c.o.Replicas = c.o.Replicas[:n]
	clear(c.o.Replicas)
	err := objectFromSnapshotInto(e, &c.o)
	// e's strings may be views of a buffer about to go: keep none.
	clear(c.o.Replicas)
	c.o = Object{Replicas: c.o.Replicas}
	return err
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
