package state

import (
	"fmt"

	"github.com/oplogha/oplogha/impl/contract"
)

// ReplicaKind says where a replica's bytes live: the alternative of
// upstream's Replica::Descriptor variant (replica.h), or, for a segment,
// whether it is a memory segment (SegmentMountOp.is_memory_segment).
type ReplicaKind string

// Replica kinds, in upstream's variant order (MemoryDescriptor,
// NoFDescriptor, DiskDescriptor, LocalDiskDescriptor,
// DistributedFSDescriptor). A segment is ReplicaMemory or ReplicaDisk.
const (
	ReplicaMemory    ReplicaKind = "memory"
	ReplicaNoF       ReplicaKind = "nof"
	ReplicaDisk      ReplicaKind = "disk"
	ReplicaLocalDisk ReplicaKind = "local_disk"
	ReplicaDFS       ReplicaKind = "dfs"
)

// ReplicaStatus is the persisted lifecycle status of a replica.
type ReplicaStatus string

// Replica statuses: upstream's ReplicaStatus enum (replica.h), values 0..5.
const (
	ReplicaUndefined   ReplicaStatus = "undefined"
	ReplicaInitialized ReplicaStatus = "initialized"
	ReplicaProcessing  ReplicaStatus = "processing"
	ReplicaComplete    ReplicaStatus = "complete"
	ReplicaRemoved     ReplicaStatus = "removed"
	ReplicaFailed      ReplicaStatus = "failed"
)

func (k ReplicaKind) valid() bool {
	switch k {
	case ReplicaMemory, ReplicaNoF, ReplicaDisk, ReplicaLocalDisk, ReplicaDFS:
		return true
	}
	return false
}

func (k ReplicaKind) validSegment() bool { return k == ReplicaMemory || k == ReplicaDisk }

// buffered reports whether the kind's descriptor is a buffer on a segment
// (upstream's AllocatedBuffer::Descriptor).
func (k ReplicaKind) buffered() bool { return k == ReplicaMemory || k == ReplicaNoF }

func (s ReplicaStatus) valid() bool {
	switch s {
	case ReplicaUndefined, ReplicaInitialized, ReplicaProcessing, ReplicaComplete, ReplicaRemoved, ReplicaFailed:
		return true
	}
	return false
}

// Replica is one placement of an object's bytes: upstream's
// Replica::Descriptor, flattened. Which fields a kind uses is fixed (the
// others must be zero, so that a replica and its PUT_END payload map one to
// one):
//
//	memory, nof: Segment (buffer's transport endpoint), Offset (buffer
//	             address), Length (buffer size), Protocol
//	disk:        FilePath, Length (object size)
//	local_disk:  ClientID, Length (object size), Segment (transport endpoint)
//	dfs:         FilePath, Offset, Length (object size), AlignedSize, ShardIdx
type Replica struct {
	ID          uint64        `json:"id"`
	Kind        ReplicaKind   `json:"kind"`
	Segment     string        `json:"segment,omitempty"`
	Offset      uint64        `json:"offset,omitempty"`
	Length      uint64        `json:"length"`
	Status      ReplicaStatus `json:"status"`
	Protocol    string        `json:"protocol,omitempty"`
	FilePath    string        `json:"file_path,omitempty"`
	ClientID    UUID          `json:"client_id,omitzero"`
	AlignedSize uint64        `json:"aligned_size,omitempty"`
	ShardIdx    int32         `json:"shard_idx,omitempty"`
}

// Object is the metadata of one stored object: what upstream's PUT_END
// payload (MetadataPayload) carries, as upstream's standby keeps it
// (StandbyObjectMetadata: the compatible fields with their defaults).
// Values are immutable once they are in a State: an update replaces the
// whole value.
type Object struct {
	ClientID   UUID      `json:"client_id"`
	Size       uint64    `json:"size"`
	Replicas   []Replica `json:"replicas"`
	GroupID    string    `json:"group_id,omitempty"`
	DataType   uint32    `json:"data_type,omitempty"` // upstream's ObjectDataType, a uint8
	HardPinned bool      `json:"hard_pinned,omitempty"`
	// HardPinnedUnset: hard_pinned has no value (upstream's std::nullopt;
	// HardPinned is then false). Upstream's applier stores such an object
	// for a PUT_END without a payload or with one it cannot decode
	// (oplog_applier.cpp:128-156), and a snapshot chunk written before
	// upstream had hard_pinned holds them; the snapshot keeps the difference.
	HardPinnedUnset bool `json:"hard_pinned_unset,omitempty"`
}

// Segment is one entry of the segment registry, keyed by its transport
// endpoint: what SegmentMountOp carries (Kind memory is is_memory_segment).
type Segment struct {
	Endpoint string      `json:"endpoint"`
	Name     string      `json:"name"`
	Capacity uint64      `json:"capacity"`
	Kind     ReplicaKind `json:"kind"`
	FilePath string      `json:"file_path,omitempty"`
}

// ObjectKey identifies an object.
type ObjectKey struct {
	Tenant string `json:"tenant"`
	Key    string `json:"key"`
}

func (k ObjectKey) String() string { return fmt.Sprintf("%q/%q", k.Tenant, k.Key) }

// Cursor is the last complete batch applied and the last sequence id it held.
// The zero Cursor is the empty state before batch 1. It is the contract's
// type: pointers and import records carry it, and the harness reads them
// through impl/contract.
type Cursor = contract.Cursor

// MaxKeyBytes bounds tenant and key lengths (Mooncake's limit on object keys).
const MaxKeyBytes = 4096

// MaxDataType is the largest ObjectDataType (a uint8 upstream).
const MaxDataType = 255

// validate checks what every stored object obeys, whatever wrote it:
// strings within MaxKeyBytes, a known kind and status, and only the fields
// of its kind set. Upstream's applier stores any payload it can decode, so
// this is all a replayed PUT_END must pass; admit adds what a client's put
// must.
func (o *Object) validate() error {
	if o.HardPinned && o.HardPinnedUnset {
		return fmt.Errorf("%w: hard_pinned both true and unset", ErrMalformed)
	}
	if len(o.GroupID) > MaxKeyBytes {
		return fmt.Errorf("%w: group id longer than %d bytes", ErrMalformed, MaxKeyBytes)
	}
	if o.DataType > MaxDataType {
		return fmt.Errorf("%w: data type %d above %d", ErrMalformed, o.DataType, MaxDataType)
	}
	for i := range o.Replicas {
		if err := o.Replicas[i].validate(); err != nil {
			return fmt.Errorf("replica %d: %w", i, err)
		}
	}
	return nil
}

func (r *Replica) validate() error {
	switch {
	case !r.Kind.valid():
		return fmt.Errorf("%w: kind %q", ErrMalformed, r.Kind)
	case !r.Status.valid():
		return fmt.Errorf("%w: status %q", ErrMalformed, r.Status)
	case len(r.Segment) > MaxKeyBytes || len(r.Protocol) > MaxKeyBytes || len(r.FilePath) > MaxKeyBytes:
		return fmt.Errorf("%w: a string longer than %d bytes", ErrMalformed, MaxKeyBytes)
	}
	var extra bool
	switch r.Kind {
	case ReplicaMemory, ReplicaNoF:
		extra = r.FilePath != "" || !r.ClientID.IsZero() || r.AlignedSize != 0 || r.ShardIdx != 0
	case ReplicaDisk:
		extra = r.Segment != "" || r.Offset != 0 || r.Protocol != "" || !r.ClientID.IsZero() || r.AlignedSize != 0 || r.ShardIdx != 0
	case ReplicaLocalDisk:
		extra = r.Offset != 0 || r.Protocol != "" || r.FilePath != "" || r.AlignedSize != 0 || r.ShardIdx != 0
	case ReplicaDFS:
		extra = r.Segment != "" || r.Protocol != "" || !r.ClientID.IsZero()
	}
	if extra {
		return fmt.Errorf("%w: a field that a %s replica does not have is set", ErrMalformed, r.Kind)
	}
	return nil
}

// admit checks what this project's primary requires of a client's put on
// top of validate: a size, at least one replica, distinct replica ids, and
// a length and a segment for every buffer replica.
func (o *Object) admit() error {
	if o.Size == 0 {
		return fmt.Errorf("%w: object size is 0", ErrMalformed)
	}
	if len(o.Replicas) == 0 {
		return fmt.Errorf("%w: object has no replicas", ErrMalformed)
	}
	for i := range o.Replicas {
		r := &o.Replicas[i]
		switch {
		case r.Length == 0:
			return fmt.Errorf("%w: replica %d: length 0", ErrMalformed, i)
		case r.Kind.buffered() && r.Segment == "":
			return fmt.Errorf("%w: replica %d: no segment", ErrMalformed, i)
		case r.Offset+r.Length < r.Offset:
			return fmt.Errorf("%w: replica %d: offset+length overflows", ErrMalformed, i)
		}
	}
	if i, id, dup := duplicateReplicaID(o.Replicas); dup {
		return fmt.Errorf("%w: replica %d: duplicate id %d", ErrMalformed, i, id)
	}
	return nil
}

// duplicateReplicaID finds the first replica whose id an earlier one has:
// pairwise for the few replicas an object usually has (no allocation),
// through a map for many.
func duplicateReplicaID(reps []Replica) (int, uint64, bool) {
	if len(reps) <= 16 {
		for i := 1; i < len(reps); i++ {
			for j := 0; j < i; j++ {
				if reps[j].ID == reps[i].ID {
					return i, reps[i].ID, true
				}
			}
		}
		return 0, 0, false
	}
	seen := make(map[uint64]bool, len(reps))
	for i, r := range reps {
		if seen[r.ID] {
			return i, r.ID, true
		}
		seen[r.ID] = true
	}
	return 0, 0, false
}

// validate checks what every registered segment obeys: upstream's
// registry keeps any SegmentMountOp it decodes, so only the bounds of this
// project's codecs and a kind apply.
func (s *Segment) validate() error {
	switch {
	case len(s.Endpoint) > MaxKeyBytes || len(s.Name) > MaxKeyBytes || len(s.FilePath) > MaxKeyBytes:
		return fmt.Errorf("%w: segment string longer than %d bytes", ErrMalformed, MaxKeyBytes)
	case !s.Kind.validSegment():
		return fmt.Errorf("%w: segment kind %q", ErrMalformed, s.Kind)
	}
	return nil
}

// admit checks what this project's primary requires of a client's mount
// or update on top of validate.
func (s *Segment) admit() error {
	switch {
	case s.Endpoint == "":
		return fmt.Errorf("%w: segment has no endpoint", ErrMalformed)
	case s.Name == "":
		return fmt.Errorf("%w: segment has no name", ErrMalformed)
	case s.Capacity == 0:
		return fmt.Errorf("%w: segment capacity is 0", ErrMalformed)
	case s.Kind == ReplicaDisk && s.FilePath == "":
		return fmt.Errorf("%w: disk segment has no file path", ErrMalformed)
	}
	return nil
}
