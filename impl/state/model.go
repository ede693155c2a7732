package state

import "fmt"

// ReplicaKind says where a replica's bytes live.
type ReplicaKind string

// Replica kinds, as in Mooncake's replica descriptors.
const (
	ReplicaMemory ReplicaKind = "memory"
	ReplicaDisk   ReplicaKind = "disk"
)

// ReplicaStatus is the persisted lifecycle status of a replica.
type ReplicaStatus string

// Replica statuses that are persisted (Mooncake's ReplicaStatus without UNDEFINED).
const (
	ReplicaInitialized ReplicaStatus = "initialized"
	ReplicaProcessing  ReplicaStatus = "processing"
	ReplicaComplete    ReplicaStatus = "complete"
	ReplicaRemoved     ReplicaStatus = "removed"
	ReplicaFailed      ReplicaStatus = "failed"
)

func (k ReplicaKind) valid() bool { return k == ReplicaMemory || k == ReplicaDisk }

func (s ReplicaStatus) valid() bool {
	switch s {
	case ReplicaInitialized, ReplicaProcessing, ReplicaComplete, ReplicaRemoved, ReplicaFailed:
		return true
	}
	return false
}

// Replica is one placement of an object's bytes on a mounted segment.
type Replica struct {
	ID      uint64        `json:"id"`
	Kind    ReplicaKind   `json:"kind"`
	Segment string        `json:"segment"` // transport endpoint of the segment holding it
	Offset  uint64        `json:"offset"`
	Length  uint64        `json:"length"`
	Status  ReplicaStatus `json:"status"`
}

// Object is the metadata of one stored object. Values are immutable once they
// are in a State: an update replaces the whole value.
type Object struct {
	ClientID   string    `json:"client_id"`
	Size       uint64    `json:"size"`
	Replicas   []Replica `json:"replicas"`
	GroupID    string    `json:"group_id,omitempty"`
	DataType   uint32    `json:"data_type,omitempty"`
	HardPinned bool      `json:"hard_pinned,omitempty"`
}

// Segment is one entry of the segment registry, keyed by its transport endpoint.
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
// The zero Cursor is the empty state before batch 1.
type Cursor struct {
	BatchID uint64 `json:"batch_id"`
	Seq     uint64 `json:"seq"`
}

// Consistent reports whether the cursor obeys (BatchID == 0) == (Seq == 0).
func (c Cursor) Consistent() bool { return (c.BatchID == 0) == (c.Seq == 0) }

func (c Cursor) String() string { return fmt.Sprintf("batch %d seq %d", c.BatchID, c.Seq) }

// MaxKeyBytes bounds tenant and key lengths (Mooncake's limit on object keys).
const MaxKeyBytes = 4096

func (o *Object) validate() error {
	if o.Size == 0 {
		return fmt.Errorf("%w: object size is 0", ErrMalformed)
	}
	if len(o.Replicas) == 0 {
		return fmt.Errorf("%w: object has no replicas", ErrMalformed)
	}
	for i := range o.Replicas {
		r := &o.Replicas[i]
		switch {
		case !r.Kind.valid():
			return fmt.Errorf("%w: replica %d: kind %q", ErrMalformed, i, r.Kind)
		case !r.Status.valid():
			return fmt.Errorf("%w: replica %d: status %q", ErrMalformed, i, r.Status)
		case r.Segment == "":
			return fmt.Errorf("%w: replica %d: no segment", ErrMalformed, i)
		case r.Length == 0:
			return fmt.Errorf("%w: replica %d: length 0", ErrMalformed, i)
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

func (s *Segment) validate() error {
	switch {
	case s.Endpoint == "":
		return fmt.Errorf("%w: segment has no endpoint", ErrMalformed)
	case len(s.Endpoint) > MaxKeyBytes:
		return fmt.Errorf("%w: segment endpoint longer than %d bytes", ErrMalformed, MaxKeyBytes)
	case s.Name == "":
		return fmt.Errorf("%w: segment has no name", ErrMalformed)
	case s.Capacity == 0:
		return fmt.Errorf("%w: segment capacity is 0", ErrMalformed)
	case !s.Kind.valid():
		return fmt.Errorf("%w: segment kind %q", ErrMalformed, s.Kind)
	case s.Kind == ReplicaDisk && s.FilePath == "":
		return fmt.Errorf("%w: disk segment has no file path", ErrMalformed)
	}
	return nil
}
