package state

import (
	"fmt"

	"github.com/oplogha/oplogha/impl/contract/structpack"

	"github.com/oplogha/oplogha/impl/contract/metadata"
)

// The entry payloads are upstream's struct_pack records, through
// impl/contract: PUT_END carries a MetadataPayload, SEGMENT_MOUNT a
// SegmentMountOp, SEGMENT_UPDATE a SegmentUpdateOp, SEGMENT_UNMOUNT a
// SegmentUnmountOp. Writers emit upstream's default (NDEBUG) variant;
// readers take both variants and older MetadataPayload writers.

var statusCodes = [...]ReplicaStatus{ReplicaUndefined, ReplicaInitialized, ReplicaProcessing, ReplicaComplete, ReplicaRemoved, ReplicaFailed}

func statusToContract(s ReplicaStatus) metadata.ReplicaStatus {
	for i, x := range statusCodes {
		if x == s {
			return metadata.ReplicaStatus(i)
		}
	}
	return -1 // unreachable for a validated replica
}

func statusFromContract(c metadata.ReplicaStatus) (ReplicaStatus, error) {
	if c < 0 || int(c) >= len(statusCodes) {
		return "", fmt.Errorf("%w: replica status %d is not 0..5", ErrMalformed, c)
	}
	return statusCodes[c], nil
}

// objectPayload is the MetadataPayload upstream's master writes for o
// (SerializeMetadataForOpLog sets all three compatible fields).
func objectPayload(o *Object) metadata.MetadataPayload {
	group, dt, pinned := o.GroupID, metadata.ObjectDataType(o.DataType), o.HardPinned
	p := metadata.MetadataPayload{
		ClientID:   metadata.UUID{First: o.ClientID.First, Second: o.ClientID.Second},
		Size:       o.Size,
		Replicas:   make([]metadata.ReplicaDescriptor, len(o.Replicas)),
		GroupID:    &group,
		DataType:   &dt,
		HardPinned: &pinned,
	}
	for i := range o.Replicas {
		r := &o.Replicas[i]
		rd := &p.Replicas[i]
		rd.ID, rd.Status = r.ID, statusToContract(r.Status)
		buf := metadata.BufferDescriptor{Size: r.Length, BufferAddress: r.Offset, Protocol: r.Protocol, TransportEndpoint: r.Segment}
		switch r.Kind {
		case ReplicaMemory:
			rd.Variant = metadata.MemoryDescriptor{Buffer: buf}
		case ReplicaNoF:
			rd.Variant = metadata.NoFDescriptor{Buffer: buf}
		case ReplicaDisk:
			rd.Variant = metadata.DiskDescriptor{FilePath: r.FilePath, ObjectSize: r.Length}
		case ReplicaLocalDisk:
			rd.Variant = metadata.LocalDiskDescriptor{ClientID: metadata.UUID{First: r.ClientID.First,
				Second: r.ClientID.Second}, ObjectSize: r.Length, TransportEndpoint: r.Segment}
		case ReplicaDFS:
			rd.Variant = metadata.DistributedFSDescriptor{FilePath: r.FilePath, Offset: r.Offset, ObjectSize: r.Length, AlignedSize: r.AlignedSize, ShardIdx: r.ShardIdx}
		}
	}
	return p
}

// objectFromFields is the object upstream's standby stores for a decoded
// MetadataPayload (MetadataPayload::ToStandbyMetadata,
// metadata_store.h:110-119: an empty compatible field reads as "",
// UNKNOWN, false), validated.
func objectFromFields(f *metadata.MetadataFields) (*Object, error) {
	o, err := objectFromReplicas(f.Replicas)
	if err != nil {
		return nil, err
	}
	o.ClientID, o.Size = UUID{First: f.ClientID.First, Second: f.ClientID.Second}, f.Size
	if f.HasGroupID {
		o.GroupID = f.GroupID
	}
	if f.HasDataType {
		o.DataType = uint32(f.DataType)
	}
	if f.HasHardPinned {
		o.HardPinned = f.HardPinned
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	return o, nil
}

// objectFromReplicas is a new object holding reps in this model; the
// object and its replicas are one allocation. The caller fills the rest and
// validates.
func objectFromReplicas(reps []metadata.ReplicaFields) (*Object, error) {
	o := newObject(len(reps))
	if err := fillReplicas(o, reps); err != nil {
		return nil, err
	}
	return o, nil
}

// fillReplicas sets o.Replicas (of len(reps) already) from reps.
func fillReplicas(o *Object, reps []metadata.ReplicaFields) error {
	for i := range reps {
		rd := &reps[i]
		st, err := statusFromContract(rd.Status)
		if err != nil {
			return fmt.Errorf("replica %d: %w", i, err)
		}
		r := &o.Replicas[i]
		r.ID, r.Status = rd.ID, st
		switch rd.Index {
		case 0:
			r.Kind, r.Segment, r.Offset, r.Length, r.Protocol = ReplicaMemory, rd.Buffer.TransportEndpoint, rd.Buffer.BufferAddress, rd.Buffer.Size, rd.Buffer.Protocol
		case 1:
			r.Kind, r.Segment, r.Offset, r.Length, r.Protocol = ReplicaNoF, rd.Buffer.TransportEndpoint, rd.Buffer.BufferAddress, rd.Buffer.Size, rd.Buffer.Protocol
		case 2:
			v := &rd.Disk
			r.Kind, r.FilePath, r.Length = ReplicaDisk, v.FilePath, v.ObjectSize
		case 3:
			v := &rd.LocalDisk
			r.Kind, r.ClientID, r.Length, r.Segment = ReplicaLocalDisk, UUID{First: v.ClientID.First, Second: v.ClientID.Second}, v.ObjectSize, v.TransportEndpoint
		case 4:
			v := &rd.DistributedFS
			r.Kind, r.FilePath, r.Offset, r.Length, r.AlignedSize, r.ShardIdx = ReplicaDFS, v.FilePath, v.Offset, v.ObjectSize, v.AlignedSize, v.ShardIdx
		default:
			return fmt.Errorf("%w: replica %d has no descriptor", ErrMalformed, i)
		}
	}
	return nil
}

// replicaFields is r as upstream's Replica::Descriptor, its variant in place.
func replicaFields(r *Replica) metadata.ReplicaFields {
	f := metadata.ReplicaFields{ID: r.ID, Status: statusToContract(r.Status)}
	buf := metadata.BufferDescriptor{Size: r.Length, BufferAddress: r.Offset, Protocol: r.Protocol, TransportEndpoint: r.Segment}
	switch r.Kind {
	case ReplicaMemory:
		f.Index, f.Buffer = 0, buf
	case ReplicaNoF:
		f.Index, f.Buffer = 1, buf
	case ReplicaDisk:
		f.Index, f.Disk = 2, metadata.DiskDescriptor{FilePath: r.FilePath, ObjectSize: r.Length}
	case ReplicaLocalDisk:
		f.Index, f.LocalDisk = 3, metadata.LocalDiskDescriptor{ClientID: metadata.UUID{First: r.ClientID.First, Second: r.ClientID.Second},
			ObjectSize: r.Length, TransportEndpoint: r.Segment}
	case ReplicaDFS:
		f.Index, f.DistributedFS = 4, metadata.DistributedFSDescriptor{FilePath: r.FilePath, Offset: r.Offset, ObjectSize: r.Length,
			AlignedSize: r.AlignedSize, ShardIdx: r.ShardIdx}
	}
	return f
}

// newObject returns a zero object with n zero replicas; for the one or two
// replicas most objects have, the object and its replica list are one
// allocation (the list's capacity is n: an append copies it out).
func newObject(n int) *Object {
	switch n {
	case 0:
		return new(Object)
	case 1:
		h := new(struct {
			o Object
			r [1]Replica
		})
		h.o.Replicas = h.r[:]
		return &h.o
	case 2:
		h := new(struct {
			o Object
			r [2]Replica
		})
		h.o.Replicas = h.r[:]
		return &h.o
	}
	return &Object{Replicas: make([]Replica, n)}
}

// payloadDecoder is what decoding PUT_END payloads one after another
// shares: the decoded fields, and (when strs is set) the interned strings.
type payloadDecoder struct {
	fields metadata.MetadataFields
	strs   *structpack.Strings
}

// object decodes and validates a PUT_END payload. A payload that is not a
// MetadataPayload is decodeErr; one that is but this model cannot hold is
// the model's error.
func (d *payloadDecoder) object(payload []byte) (o *Object, decodeErr, err error) {
	if err := metadata.DecodeMetadataFields(payload, &d.fields, d.strs); err != nil {
		err = fmt.Errorf("%w: PUT_END payload: %w", ErrMalformed, err)
		return nil, err, err
	}
	o, err = objectFromFields(&d.fields)
	return o, nil, err
}

func segmentOp(s *Segment) metadata.SegmentMountOp {
	return metadata.SegmentMountOp{SegmentName: s.Name, TransportEndpoint: s.Endpoint, Capacity: s.Capacity,
		IsMemorySegment: s.Kind == ReplicaMemory, FilePath: s.FilePath}
}

func segmentFromOp(op metadata.SegmentMountOp) Segment {
	s := Segment{Endpoint: op.TransportEndpoint, Name: op.SegmentName, Capacity: op.Capacity, Kind: ReplicaDisk, FilePath: op.FilePath}
	if op.IsMemorySegment {
		s.Kind = ReplicaMemory
	}
	return s
}

// DecodeObject decodes and validates a PUT_END payload (either struct_pack
// variant, any MetadataPayload writer). It does not apply the primary's
// admission rules (see Tx.Stage).
func DecodeObject(payload []byte) (Object, error) {
	var d payloadDecoder
	o, _, err := d.object(payload)
	if err != nil {
		return Object{}, err
	}
	return *o, nil
}

// DecodeSegment decodes and validates a SEGMENT_MOUNT (op 5) or
// SEGMENT_UPDATE (op 7) payload; the segment's identity is the payload's
// transport endpoint, never the entry key.
func DecodeSegment(op OpType, payload []byte) (Segment, error) {
	var (
		m   metadata.SegmentMountOp
		err error
	)
	switch op {
	case OpSegmentMount:
		m, err = metadata.DecodeSegmentMountOp(payload)
	case OpSegmentUpdate:
		var u metadata.SegmentUpdateOp
		u, err = metadata.DecodeSegmentUpdateOp(payload)
		m = metadata.SegmentMountOp(u)
	default:
		return Segment{}, fmt.Errorf("%w: %s carries no segment", ErrMalformed, op)
	}
	if err != nil {
		return Segment{}, fmt.Errorf("%w: %s payload: %w", ErrMalformed, op, err)
	}
	s := segmentFromOp(m)
	if err := s.validate(); err != nil {
		return Segment{}, err
	}
	return s, nil
}

// DecodeUnmount decodes a SEGMENT_UNMOUNT payload: the endpoint it names.
func DecodeUnmount(payload []byte) (string, error) {
	op, err := metadata.DecodeSegmentUnmountOp(payload)
	if err != nil {
		return "", fmt.Errorf("%w: SEGMENT_UNMOUNT payload: %w", ErrMalformed, err)
	}
	return op.TransportEndpoint, nil
}
