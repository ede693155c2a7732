package state

import (
	"fmt"

	"github.com/oplogha/oplogha/impl/contract"
)

// The entry payloads are upstream's struct_pack records, through
// impl/contract: PUT_END carries a MetadataPayload, SEGMENT_MOUNT a
// SegmentMountOp, SEGMENT_UPDATE a SegmentUpdateOp, SEGMENT_UNMOUNT a
// SegmentUnmountOp. Writers emit upstream's default (NDEBUG) variant;
// readers take both variants and older MetadataPayload writers.

var statusCodes = [...]ReplicaStatus{ReplicaUndefined, ReplicaInitialized, ReplicaProcessing, ReplicaComplete, ReplicaRemoved, ReplicaFailed}

func statusToContract(s ReplicaStatus) contract.ReplicaStatus {
	for i, x := range statusCodes {
		if x == s {
			return contract.ReplicaStatus(i)
		}
	}
	return -1 // unreachable for a validated replica
}

func statusFromContract(c contract.ReplicaStatus) (ReplicaStatus, error) {
	if c < 0 || int(c) >= len(statusCodes) {
		return "", fmt.Errorf("%w: replica status %d is not 0..5", ErrMalformed, c)
	}
	return statusCodes[c], nil
}

// objectPayload is the MetadataPayload upstream's master writes for o
// (SerializeMetadataForOpLog sets all three compatible fields).
func objectPayload(o *Object) contract.MetadataPayload {
	group, dt, pinned := o.GroupID, contract.ObjectDataType(o.DataType), o.HardPinned
	p := contract.MetadataPayload{
		ClientID:   contract.UUID{First: o.ClientID.First, Second: o.ClientID.Second},
		Size:       o.Size,
		Replicas:   make([]contract.ReplicaDescriptor, len(o.Replicas)),
		GroupID:    &group,
		DataType:   &dt,
		HardPinned: &pinned,
	}
	for i := range o.Replicas {
		r := &o.Replicas[i]
		rd := &p.Replicas[i]
		rd.ID, rd.Status = r.ID, statusToContract(r.Status)
		buf := contract.BufferDescriptor{Size: r.Length, BufferAddress: r.Offset, Protocol: r.Protocol, TransportEndpoint: r.Segment}
		switch r.Kind {
		case ReplicaMemory:
			rd.Variant = contract.MemoryDescriptor{Buffer: buf}
		case ReplicaNoF:
			rd.Variant = contract.NoFDescriptor{Buffer: buf}
		case ReplicaDisk:
			rd.Variant = contract.DiskDescriptor{FilePath: r.FilePath, ObjectSize: r.Length}
		case ReplicaLocalDisk:
			rd.Variant = contract.LocalDiskDescriptor{ClientID: contract.UUID{First: r.ClientID.First, Second: r.ClientID.Second}, ObjectSize: r.Length, TransportEndpoint: r.Segment}
		case ReplicaDFS:
			rd.Variant = contract.DistributedFSDescriptor{FilePath: r.FilePath, Offset: r.Offset, ObjectSize: r.Length, AlignedSize: r.AlignedSize, ShardIdx: r.ShardIdx}
		}
	}
	return p
}

// objectFromPayload is the object upstream's standby stores for p
// (MetadataPayload::ToStandbyMetadata, metadata_store.h:110-119: an empty
// compatible field reads as "", UNKNOWN, false).
func objectFromPayload(p contract.MetadataPayload) (Object, error) {
	o := Object{ClientID: UUID{First: p.ClientID.First, Second: p.ClientID.Second}, Size: p.Size}
	if p.GroupID != nil {
		o.GroupID = *p.GroupID
	}
	if p.DataType != nil {
		o.DataType = uint32(*p.DataType)
	}
	if p.HardPinned != nil {
		o.HardPinned = *p.HardPinned
	}
	if len(p.Replicas) > 0 {
		o.Replicas = make([]Replica, len(p.Replicas))
	}
	for i, rd := range p.Replicas {
		st, err := statusFromContract(rd.Status)
		if err != nil {
			return Object{}, fmt.Errorf("replica %d: %w", i, err)
		}
		r := Replica{ID: rd.ID, Status: st}
		switch v := rd.Variant.(type) {
		case contract.MemoryDescriptor:
			r.Kind, r.Segment, r.Offset, r.Length, r.Protocol = ReplicaMemory, v.Buffer.TransportEndpoint, v.Buffer.BufferAddress, v.Buffer.Size, v.Buffer.Protocol
		case contract.NoFDescriptor:
			r.Kind, r.Segment, r.Offset, r.Length, r.Protocol = ReplicaNoF, v.Buffer.TransportEndpoint, v.Buffer.BufferAddress, v.Buffer.Size, v.Buffer.Protocol
		case contract.DiskDescriptor:
			r.Kind, r.FilePath, r.Length = ReplicaDisk, v.FilePath, v.ObjectSize
		case contract.LocalDiskDescriptor:
			r.Kind, r.ClientID, r.Length, r.Segment = ReplicaLocalDisk, UUID{First: v.ClientID.First, Second: v.ClientID.Second}, v.ObjectSize, v.TransportEndpoint
		case contract.DistributedFSDescriptor:
			r.Kind, r.FilePath, r.Offset, r.Length, r.AlignedSize, r.ShardIdx = ReplicaDFS, v.FilePath, v.Offset, v.ObjectSize, v.AlignedSize, v.ShardIdx
		default:
			return Object{}, fmt.Errorf("%w: replica %d has no descriptor", ErrMalformed, i)
		}
		o.Replicas[i] = r
	}
	return o, nil
}

func segmentOp(s *Segment) contract.SegmentMountOp {
	return contract.SegmentMountOp{SegmentName: s.Name, TransportEndpoint: s.Endpoint, Capacity: s.Capacity, IsMemorySegment: s.Kind == ReplicaMemory, FilePath: s.FilePath}
}

func segmentFromOp(op contract.SegmentMountOp) Segment {
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
	p, err := contract.DecodeMetadataPayload(payload)
	if err != nil {
		return Object{}, fmt.Errorf("%w: PUT_END payload: %w", ErrMalformed, err)
	}
	o, err := objectFromPayload(p)
	if err != nil {
		return Object{}, err
	}
	if err := o.validate(); err != nil {
		return Object{}, err
	}
	return o, nil
}

// DecodeSegment decodes and validates a SEGMENT_MOUNT (op 5) or
// SEGMENT_UPDATE (op 7) payload; the segment's identity is the payload's
// transport endpoint, never the entry key.
func DecodeSegment(op OpType, payload []byte) (Segment, error) {
	var (
		m   contract.SegmentMountOp
		err error
	)
	switch op {
	case OpSegmentMount:
		m, err = contract.DecodeSegmentMountOp(payload)
	case OpSegmentUpdate:
		var u contract.SegmentUpdateOp
		u, err = contract.DecodeSegmentUpdateOp(payload)
		m = contract.SegmentMountOp(u)
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
	op, err := contract.DecodeSegmentUnmountOp(payload)
	if err != nil {
		return "", fmt.Errorf("%w: SEGMENT_UNMOUNT payload: %w", ErrMalformed, err)
	}
	return op.TransportEndpoint, nil
}

// decodeContractOnly reports whether the payload is a MetadataPayload at
// all, whatever this model makes of it.
func decodeContractOnly(payload []byte) (contract.MetadataPayload, error) {
	return contract.DecodeMetadataPayload(payload)
}
