package legacysnap

import "fmt"

// Decoded is a legacy snapshot as upstream's decoder (MasterSnapshotCodec::
// Decode) recovers it: every field the three payload files carry, and the
// objects upstream writes but its decoder drops (Skipped). It is read whole
// before anything is converted; impl/legacy's Convert maps it into the
// state model.
type Decoded struct {
	// ReplicaNextID is the next replica id upstream's master would have given.
	ReplicaNextID uint64
	// AllocatorNames is the allocator manager's order of segment names ("an").
	AllocatorNames []string
	// Segments are the mounted segments ("ms"), in file order.
	Segments []Segment
	// LocalSSD is the local-disk offload state of each client ("ld").
	LocalSSD []LocalSSDClient
	// Tasks are the task manager's copy and move tasks.
	Tasks []Task
	// Discarded are replicas removed from their objects and kept until a TTL
	// (metadata "discarded_replicas").
	Discarded []DiscardedGroup
	// Objects are the objects upstream's decoder recovers, in (tenant, key)
	// order.
	Objects []Object
	// Skipped are the objects written but dropped by upstream's decoder, in
	// (tenant, key) order.
	Skipped []Skipped
	// SoftPinned counts objects whose legacy soft-pin slot is set (upstream
	// parses and discards it).
	SoftPinned int

	byID map[UUID]int // Segments by id
}

// SegmentStatus is upstream's SegmentStatus (segment.h).
type SegmentStatus int16

// Segment statuses.
const (
	SegmentUndefined SegmentStatus = iota
	SegmentOK
	SegmentDraining
	SegmentDrained
	SegmentGracefullyUnmounting
	SegmentUnmounting
)

func (s SegmentStatus) String() string {
	names := []string{"UNDEFINED", "OK", "DRAINING", "DRAINED", "GRACEFULLY_UNMOUNTING", "UNMOUNTING"}
	if s >= 0 && int(s) < len(names) {
		return names[s]
	}
	return fmt.Sprintf("STATUS_%d", int16(s))
}

// Segment is one mounted segment (serializer.cpp MountedSegment).
type Segment struct {
	ID       UUID
	Name     string
	Base     uint64
	Size     uint64
	Endpoint string // te_endpoint
	Status   SegmentStatus
	HostID   string
	// Allocator is the segment's offset allocator state; nil when the
	// segment has none.
	Allocator *Allocator
	// Client is the client whose segment list ("cs") holds it; zero when
	// none does.
	Client UUID
}

// Allocator is the part of an OffsetBufferAllocator's state this reader
// keeps: its header and the counters. The allocator's internals (bins,
// nodes, free list) are checked for shape, as upstream's decoder does, and
// not kept.
type Allocator struct {
	Name     string
	Base     uint64
	Total    uint64
	CurSize  uint64 // bytes allocated
	Endpoint string
	// The inner OffsetAllocator.
	OffsetBase     uint64
	MultiplierBits uint64
	Capacity       uint64
	AllocatedSize  uint64
	AllocatedNum   uint64
	NodeCapacity   uint32 // current node capacity (nodes serialized)
	MaxNodes       uint32
}

// ReplicaType is upstream's ReplicaType (allocator.h).
type ReplicaType int8

// Replica types a snapshot holds.
const (
	ReplicaMemory    ReplicaType = 0
	ReplicaDisk      ReplicaType = 1
	ReplicaLocalDisk ReplicaType = 2
	ReplicaDFS       ReplicaType = 100
)

func (t ReplicaType) String() string {
	switch t {
	case ReplicaMemory:
		return "MEMORY"
	case ReplicaDisk:
		return "DISK"
	case ReplicaLocalDisk:
		return "LOCAL_DISK"
	case ReplicaDFS:
		return "DFS"
	}
	return fmt.Sprintf("TYPE_%d", int8(t))
}

// ReplicaStatus is upstream's ReplicaStatus (types.h).
type ReplicaStatus int16

// Replica statuses.
const (
	ReplicaUndefined ReplicaStatus = iota
	ReplicaInitialized
	ReplicaProcessing
	ReplicaComplete
	ReplicaRemoved
	ReplicaFailed
)

func (s ReplicaStatus) String() string {
	names := []string{"UNDEFINED", "INITIALIZED", "PROCESSING", "COMPLETE", "REMOVED", "FAILED"}
	if s >= 0 && int(s) < len(names) {
		return names[s]
	}
	return fmt.Sprintf("STATUS_%d", int16(s))
}

// Replica is one replica (serializer.cpp Serializer<Replica>): exactly one
// of the bodies is set, the one its Type names.
type Replica struct {
	ID        uint64
	Status    ReplicaStatus
	Type      ReplicaType
	Memory    *MemoryReplica
	Disk      *DiskReplica
	LocalDisk *LocalDiskReplica
	DFS       *DFSReplica
}

// MemoryReplica is an allocated buffer on a mounted segment.
type MemoryReplica struct {
	Size    uint64
	Address uint64
	Segment UUID
	// Handle is the offset allocator's handle; nil when the buffer has none.
	Handle *AllocationHandle
}

// AllocationHandle is an OffsetAllocationHandle.
type AllocationHandle struct {
	RealBase      uint64
	RequestedSize uint64
	Offset        uint32
	Metadata      uint32
}

// DiskReplica is a file on a shared disk.
type DiskReplica struct {
	FilePath   string
	ObjectSize uint64
}

// LocalDiskReplica is an object offloaded to a client's local SSD.
type LocalDiskReplica struct {
	Client     UUID
	ObjectSize uint64
	Endpoint   string
}

// DFSReplica is a page range of a file on a distributed filesystem.
type DFSReplica struct {
	FilePath    string
	Offset      uint64
	ObjectSize  uint64
	AlignedSize uint64
	ShardIdx    int32
}

// Object is one object's metadata (master_service.cpp SerializeMetadata).
type Object struct {
	Shard          int
	Tenant         string // "default" for upstream's default tenant (written "" or omitted)
	Key            string
	ClientID       UUID
	PutStartMS     uint64
	Size           uint64
	LeaseTimeoutMS uint64
	DataType       uint8
	Replicas       []Replica
	HardPinned     bool
	GroupID        string
	Checksum       *uint64
}

// Skipped is an object upstream writes and its decoder drops: a memory
// replica whose segment is not mounted, not OK, or has no allocator
// (serializer.cpp AllocatedBuffer deserialize). Replicas before the failing
// one were decoded, and upstream frees their buffers; the ones after it stay
// allocated in the restored allocator.
type Skipped struct {
	Shard   int
	Tenant  string
	Key     string
	Reason  string
	Segment string // the failing replica's segment: its name, or its id when it is not mounted
	// Freed are the memory replicas decoded before the failing one.
	Freed []Replica
}

// Reasons upstream's decoder drops an object for.
const (
	SkipSegmentNotMounted = "memory replica on a segment that is not mounted"
	SkipSegmentNotOK      = "memory replica on a segment whose status is not OK"
	SkipNoAllocator       = "memory replica on a segment without an allocator"
)

// LocalSSDClient is one client's local-disk offload state (local_ssd_codec.cpp).
type LocalSSDClient struct {
	Client           UUID
	EnableOffloading bool
	Pending          []PendingOffload
	// TotalCapacityBytes is nil when the entry has none (older writers).
	TotalCapacityBytes *int64
}

// PendingOffload is an object queued for offload to a client's local SSD.
type PendingOffload struct {
	EncodedKey string
	Tenant     string
	Key        string
	Size       int64
}

// Task is a task manager task (task_manager.cpp).
type Task struct {
	ID             UUID
	Type           int32 // 0 REPLICA_COPY, 1 REPLICA_MOVE
	Status         int32 // 0 PENDING, 1 PROCESSING, 2 FAILED, 3 SUCCESS
	Payload        string
	CreatedMS      int64
	UpdatedMS      int64
	Message        string
	AssignedClient UUID
}

// DiscardedGroup is one entry of discarded_replicas.
type DiscardedGroup struct {
	TTLMS    uint64
	MemSize  uint64
	Replicas []Replica
}

// Used is what segment s's restored allocator counts as allocated after
// upstream's decode: the file's count, less the buffers upstream frees when
// it drops an object whose earlier replicas it had already decoded. It is
// reported only for a segment upstream can allocate on (status OK, with an
// allocator).
func (d *Decoded) Used(s Segment) (uint64, bool) {
	if s.Status != SegmentOK || s.Allocator == nil {
		return 0, false
	}
	used := s.Allocator.CurSize
	for _, sk := range d.Skipped {
		for _, r := range sk.Freed {
			if r.Memory != nil && r.Memory.Segment == s.ID && r.Memory.Size <= used {
				used -= r.Memory.Size
			}
		}
	}
	return used, true
}

// SegmentByID finds a mounted segment.
func (d *Decoded) SegmentByID(id UUID) (Segment, bool) {
	i, ok := d.byID[id]
	if !ok {
		return Segment{}, false
	}
	return d.Segments[i], true
}
