package model

import (
	"fmt"
	"slices"

	"github.com/oplogha/oplogha/impl/contract/metadata"
)

// DefaultTenant is upstream's default tenant (tenant_id.h:14, kDefaultValue).
const DefaultTenant = "default"

// ObjectKey names an object: its tenant, normalised, and its key.
type ObjectKey struct {
	Tenant string
	Key    string
}

// Key is the key of (tenant, key): tenant "" is "default", as upstream's
// standby store normalises every tenant it stores or looks up
// (standby_metadata_store.cpp:9, :42 through NormalizeTenantId,
// metadata_store.h:16-18, and TenantId's constructor, tenant_id.h:18-19).
func Key(tenant, key string) ObjectKey {
	if tenant == "" {
		tenant = DefaultTenant
	}
	return ObjectKey{Tenant: tenant, Key: key}
}

func (k ObjectKey) String() string { return k.Tenant + "/" + k.Key }

// Pin is StandbyObjectMetadata's hard_pinned, a struct_pack
// compatible<bool, 1> (metadata_store.h:39): an optional, so it has three
// states. A default-constructed StandbyObjectMetadata, which the applier
// stores for an empty or undecodable PUT_END payload
// (oplog_applier.cpp:133, :152), leaves it unset; ToStandbyMetadata sets it
// from the payload, absent as false (metadata_store.h:117).
type Pin uint8

// The states of Pin.
const (
	PinUnset Pin = iota
	PinFalse
	PinTrue
)

// Pinned is what a reader that cannot tell unset from false sees.
func (p Pin) Pinned() bool { return p == PinTrue }

func (p Pin) String() string {
	switch p {
	case PinUnset:
		return "unset"
	case PinFalse:
		return "false"
	case PinTrue:
		return "true"
	}
	return fmt.Sprintf("Pin(%d)", uint8(p))
}

// ReplicaKind is the alternative Replica::Descriptor's descriptor_variant
// holds (replica.h), numbered by its index in the variant.
type ReplicaKind uint8

// Replica kinds, in variant order.
const (
	KindMemory    ReplicaKind = 0 // MemoryDescriptor
	KindNoF       ReplicaKind = 1 // NoFDescriptor
	KindDisk      ReplicaKind = 2 // DiskDescriptor
	KindLocalDisk ReplicaKind = 3 // LocalDiskDescriptor
	KindDFS       ReplicaKind = 4 // DistributedFSDescriptor
)

// String is the kind's name in the master's contract (CONTRACT.md, the
// state dump's "kind"), which the state digest hashes.
func (k ReplicaKind) String() string {
	switch k {
	case KindMemory:
		return "memory"
	case KindNoF:
		return "nof"
	case KindDisk:
		return "disk"
	case KindLocalDisk:
		return "local_disk"
	case KindDFS:
		return "dfs"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Buffered reports whether the kind's descriptor is a buffer in a segment
// (an AllocatedBuffer::Descriptor: memory and NVMe-oF).
func (k ReplicaKind) Buffered() bool { return k == KindMemory || k == KindNoF }

// Replica is one replica descriptor, flattened the way the master's
// contract flattens it (its state dump, its digest): which fields a kind
// uses is fixed, the others stay zero.
//
//	memory, nof: Endpoint (the buffer's transport endpoint), Offset (buffer
//	             address), Length (buffer size), Protocol
//	disk:        FilePath, Length (object size)
//	local_disk:  ClientID, Length (object size), Endpoint (transport endpoint)
//	dfs:         FilePath, Offset, Length (object size), AlignedSize, ShardIdx
type Replica struct {
	ID          uint64
	Kind        ReplicaKind
	Status      metadata.ReplicaStatus // kept as decoded: struct_pack does not check an enum's range
	Endpoint    string
	Offset      uint64
	Length      uint64
	Protocol    string
	FilePath    string
	ClientID    metadata.UUID
	AlignedSize uint64
	ShardIdx    int32
}

// Object is what upstream's standby stores for one key: a
// StandbyObjectMetadata (metadata_store.h:26-48). Lease and soft pin are
// not in it (:30-35).
type Object struct {
	ClientID   metadata.UUID
	Size       uint64
	Replicas   []Replica
	GroupID    string
	DataType   uint8 // ObjectDataType, a uint8
	HardPinned Pin
}

// Equal reports whether o and p are the same metadata.
func (o Object) Equal(p Object) bool {
	return o.ClientID == p.ClientID && o.Size == p.Size && o.GroupID == p.GroupID && o.DataType == p.DataType &&
		o.HardPinned == p.HardPinned && slices.Equal(o.Replicas, p.Replicas)
}

// Segment is one entry of upstream's StandbySegmentRegistry, a
// StandbySegmentInfo (metadata_store.h:54-63), keyed by its transport
// endpoint.
type Segment struct {
	Name     string
	Endpoint string
	Capacity uint64
	Memory   bool // is_memory_segment
	FilePath string
}

// Kind is the segment's kind in the master's contract: "memory" or "disk".
func (s Segment) Kind() string {
	if s.Memory {
		return "memory"
	}
	return "disk"
}

// objectFromPayload is MetadataPayload::ToStandbyMetadata
// (metadata_store.h:110-119): the fields as they are, an empty compatible
// field as "", UNKNOWN (0) and false.
func objectFromPayload(p metadata.MetadataPayload) (Object, error) {
	o := Object{ClientID: p.ClientID, Size: p.Size, HardPinned: PinFalse}
	if p.GroupID != nil {
		o.GroupID = *p.GroupID
	}
	if p.DataType != nil {
		o.DataType = uint8(*p.DataType)
	}
	if p.HardPinned != nil && *p.HardPinned {
		o.HardPinned = PinTrue
	}
	for i, rd := range p.Replicas {
		r := Replica{ID: rd.ID, Status: rd.Status}
		switch v := rd.Variant.(type) {
		case metadata.MemoryDescriptor:
			r.Kind, r.Endpoint, r.Offset, r.Length, r.Protocol = KindMemory, v.Buffer.TransportEndpoint, v.Buffer.BufferAddress, v.Buffer.Size, v.Buffer.Protocol
		case metadata.NoFDescriptor:
			r.Kind, r.Endpoint, r.Offset, r.Length, r.Protocol = KindNoF, v.Buffer.TransportEndpoint, v.Buffer.BufferAddress, v.Buffer.Size, v.Buffer.Protocol
		case metadata.DiskDescriptor:
			r.Kind, r.FilePath, r.Length = KindDisk, v.FilePath, v.ObjectSize
		case metadata.LocalDiskDescriptor:
			r.Kind, r.ClientID, r.Length, r.Endpoint = KindLocalDisk, v.ClientID, v.ObjectSize, v.TransportEndpoint
		case metadata.DistributedFSDescriptor:
			r.Kind, r.FilePath, r.Offset, r.Length, r.AlignedSize, r.ShardIdx = KindDFS, v.FilePath, v.Offset, v.ObjectSize, v.AlignedSize, v.ShardIdx
		default:
			// The decoder refuses a variant index outside 0..4; this is a
			// payload built by hand.
			return Object{}, fmt.Errorf("replica %d: no descriptor variant (%T)", i, rd.Variant)
		}
		o.Replicas = append(o.Replicas, r)
	}
	return o, nil
}

// segmentFromOp is what ApplySegmentMount and ApplySegmentUpdate register
// (oplog_applier.cpp:221-227, :251-257): the payload's five fields.
func segmentFromOp(op metadata.SegmentMountOp) Segment {
	return Segment{Name: op.SegmentName, Endpoint: op.TransportEndpoint, Capacity: op.Capacity, Memory: op.IsMemorySegment, FilePath: op.FilePath}
}
