package model

import (
	"context"
	"fmt"

	"github.com/oplogha/oplogha/impl/contract"
	"github.com/oplogha/oplogha/impl/contract/batchsnap"
)

// The snapshot half: a batch-OpLog snapshot (upstream's format, decoded
// through impl/contract/batchsnap) holds StandbyObjectEntry and
// StandbySegmentInfo records, which are what upstream's standby stores:
// the model takes them as they are.

// ObjectFromSnapshot is the object a snapshot entry holds, under its
// tenant and key (StandbyMetadataStore::RestoreMetadata stores the entry's
// metadata as it is: standby_metadata_store.cpp:13-18).
func ObjectFromSnapshot(e *batchsnap.ObjectEntry) (ObjectKey, Object, error) {
	m := &e.Metadata
	o := Object{ClientID: m.ClientID, Size: m.Size, GroupID: m.GroupID, DataType: uint8(m.DataType)}
	switch m.HardPinned {
	case batchsnap.PinnedTrue:
		o.HardPinned = PinTrue
	case batchsnap.PinnedFalse:
		o.HardPinned = PinFalse
	default:
		o.HardPinned = PinUnset
	}
	for i := range m.Replicas {
		f := &m.Replicas[i]
		r := Replica{ID: f.ID, Status: f.Status}
		switch f.Index {
		case 0, 1:
			r.Kind, r.Endpoint, r.Offset, r.Length, r.Protocol = ReplicaKind(f.Index), f.Buffer.TransportEndpoint, f.Buffer.BufferAddress,
				f.Buffer.Size, f.Buffer.Protocol
		case 2:
			r.Kind, r.FilePath, r.Length = KindDisk, f.Disk.FilePath, f.Disk.ObjectSize
		case 3:
			r.Kind, r.ClientID, r.Length, r.Endpoint = KindLocalDisk, f.LocalDisk.ClientID, f.LocalDisk.ObjectSize, f.LocalDisk.TransportEndpoint
		case 4:
			d := f.DistributedFS
			r.Kind, r.FilePath, r.Offset, r.Length, r.AlignedSize, r.ShardIdx = KindDFS, d.FilePath, d.Offset, d.ObjectSize, d.AlignedSize, d.ShardIdx
		default:
			return ObjectKey{}, Object{}, fmt.Errorf("%w: object %q: replica %d has variant index %d", ErrSnapshot, e.Key, i, f.Index)
		}
		o.Replicas = append(o.Replicas, r)
	}
	return ObjectKey{Tenant: e.TenantID, Key: e.Key}, o, nil
}

// SegmentFromSnapshot is the segment a snapshot entry holds.
func SegmentFromSnapshot(s batchsnap.SegmentInfo) Segment {
	return Segment{Name: s.SegmentName, Endpoint: s.TransportEndpoint, Capacity: s.Capacity, Memory: s.IsMemorySegment, FilePath: s.FilePath}
}

// ReadSnapshot reads the snapshot p names through g as a recovering node
// reads it (batchsnap: exact keys, every object held to its size and CRC32C
// before it is decoded) and returns the state it holds at its cursor.
func ReadSnapshot(ctx context.Context, g contract.ObjectGetter, p batchsnap.Pointer) (*State, error) {
	h, err := batchsnap.OpenHead(ctx, g, p)
	if err != nil {
		return nil, err
	}
	var segs []Segment
	objects := map[ObjectKey]Object{}
	err = h.ReadContent(ctx, g, batchsnap.Visitor{
		Segments: func(ss []batchsnap.SegmentInfo) error {
			for _, s := range ss {
				segs = append(segs, SegmentFromSnapshot(s))
			}
			return nil
		},
		Chunk: func(c *batchsnap.ObjectChunk) error {
			for i := range c.Objects {
				k, o, err := ObjectFromSnapshot(&c.Objects[i])
				if err != nil {
					return err
				}
				if _, dup := objects[k]; dup {
					return fmt.Errorf("%w: object %s given twice", ErrSnapshot, k)
				}
				objects[k] = o
			}
			return nil
		},
	})
	if err != nil {
		return nil, err
	}
	return FromSnapshot(h.Descriptor.Cursor(), segs, objects)
}
