package contract

import "fmt"

// The PUT_END payload: upstream's MetadataPayload (include/metadata_store.h)
// and the replica descriptor it carries (include/replica.h,
// include/allocator.h), struct_pack-encoded. Upstream writes it in
// MasterService's SerializeMetadataForOpLog* and reads it in OpLogApplier.

// UUID is upstream's UUID, a std::pair<uint64_t, uint64_t> (First is
// .first); on the wire its 16 raw bytes.
type UUID struct {
	First, Second uint64
}

// ReplicaStatus is upstream's ReplicaStatus enum (a C++ int).
type ReplicaStatus int32

// Replica statuses.
const (
	ReplicaUndefined   ReplicaStatus = 0
	ReplicaInitialized ReplicaStatus = 1
	ReplicaProcessing  ReplicaStatus = 2
	ReplicaComplete    ReplicaStatus = 3
	ReplicaRemoved     ReplicaStatus = 4
	ReplicaFailed      ReplicaStatus = 5
)

// ObjectDataType is upstream's ObjectDataType (uint8; 10-255 reserved).
type ObjectDataType uint8

// Object data types.
const (
	DataUnknown        ObjectDataType = 0
	DataKVCache        ObjectDataType = 1
	DataTensor         ObjectDataType = 2
	DataWeight         ObjectDataType = 3
	DataSample         ObjectDataType = 4
	DataActivation     ObjectDataType = 5
	DataGradient       ObjectDataType = 6
	DataOptimizerState ObjectDataType = 7
	DataMetadata       ObjectDataType = 8
	DataGeneral        ObjectDataType = 9
)

// BufferDescriptor is upstream's AllocatedBuffer::Descriptor.
type BufferDescriptor struct {
	Size              uint64
	BufferAddress     uint64
	Protocol          string
	TransportEndpoint string
}

// ReplicaVariant is Replica::Descriptor's descriptor_variant, a
// std::variant of the five types below, in this index order:
// MemoryDescriptor (0), NoFDescriptor (1), DiskDescriptor (2),
// LocalDiskDescriptor (3), DistributedFSDescriptor (4).
type ReplicaVariant interface {
	variantIndex() uint8
	measure(z *spSize)
	write(w *spWriter)
}

// MemoryDescriptor is a replica in a memory segment.
type MemoryDescriptor struct{ Buffer BufferDescriptor }

// NoFDescriptor is a replica on an NVMe-oF SSD segment.
type NoFDescriptor struct{ Buffer BufferDescriptor }

// DiskDescriptor is a replica in a file.
type DiskDescriptor struct {
	FilePath   string
	ObjectSize uint64
}

// LocalDiskDescriptor is a replica on a client's local disk.
type LocalDiskDescriptor struct {
	ClientID          UUID
	ObjectSize        uint64
	TransportEndpoint string
}

// DistributedFSDescriptor is a replica in a distributed file system.
type DistributedFSDescriptor struct {
	FilePath    string
	Offset      uint64
	ObjectSize  uint64
	AlignedSize uint64
	ShardIdx    int32
}

func (MemoryDescriptor) variantIndex() uint8        { return 0 }
func (NoFDescriptor) variantIndex() uint8           { return 1 }
func (DiskDescriptor) variantIndex() uint8          { return 2 }
func (LocalDiskDescriptor) variantIndex() uint8     { return 3 }
func (DistributedFSDescriptor) variantIndex() uint8 { return 4 }

func (b *BufferDescriptor) measure(z *spSize) {
	z.fixed(16)
	z.str(b.Protocol)
	z.str(b.TransportEndpoint)
}

func (b *BufferDescriptor) write(w *spWriter) {
	w.u64(b.Size)
	w.u64(b.BufferAddress)
	w.str(b.Protocol)
	w.str(b.TransportEndpoint)
}

func (b *BufferDescriptor) read(r *spReader) {
	b.Size = r.u64()
	b.BufferAddress = r.u64()
	b.Protocol = r.str()
	b.TransportEndpoint = r.str()
}

func (d MemoryDescriptor) measure(z *spSize) { d.Buffer.measure(z) }
func (d MemoryDescriptor) write(w *spWriter) { d.Buffer.write(w) }
func (d NoFDescriptor) measure(z *spSize)    { d.Buffer.measure(z) }
func (d NoFDescriptor) write(w *spWriter)    { d.Buffer.write(w) }

func (d DiskDescriptor) measure(z *spSize) {
	z.str(d.FilePath)
	z.fixed(8)
}

func (d DiskDescriptor) write(w *spWriter) {
	w.str(d.FilePath)
	w.u64(d.ObjectSize)
}

func (d LocalDiskDescriptor) measure(z *spSize) {
	z.fixed(24)
	z.str(d.TransportEndpoint)
}

func (d LocalDiskDescriptor) write(w *spWriter) {
	w.u64(d.ClientID.First)
	w.u64(d.ClientID.Second)
	w.u64(d.ObjectSize)
	w.str(d.TransportEndpoint)
}

func (d DistributedFSDescriptor) measure(z *spSize) {
	z.str(d.FilePath)
	z.fixed(28)
}

func (d DistributedFSDescriptor) write(w *spWriter) {
	w.str(d.FilePath)
	w.u64(d.Offset)
	w.u64(d.ObjectSize)
	w.u64(d.AlignedSize)
	w.i32(d.ShardIdx)
}

// readReplicaVariant reads the variant's index and alternative.
func readReplicaVariant(r *spReader) ReplicaVariant {
	at := r.pos
	switch idx := r.u8(); idx {
	case 0:
		var d MemoryDescriptor
		d.Buffer.read(r)
		return d
	case 1:
		var d NoFDescriptor
		d.Buffer.read(r)
		return d
	case 2:
		var d DiskDescriptor
		d.FilePath = r.str()
		d.ObjectSize = r.u64()
		return d
	case 3:
		var d LocalDiskDescriptor
		d.ClientID = UUID{r.u64(), r.u64()}
		d.ObjectSize = r.u64()
		d.TransportEndpoint = r.str()
		return d
	case 4:
		var d DistributedFSDescriptor
		d.FilePath = r.str()
		d.Offset = r.u64()
		d.ObjectSize = r.u64()
		d.AlignedSize = r.u64()
		d.ShardIdx = r.i32()
		return d
	default:
		if r.err == nil {
			r.fail("replica descriptor variant index %d at byte %d is not 0..4", idx, at)
		}
		return nil
	}
}

// ReplicaDescriptor is upstream's Replica::Descriptor.
type ReplicaDescriptor struct {
	ID      uint64
	Variant ReplicaVariant // never nil in a valid payload
	Status  ReplicaStatus
}

// minReplicaBytes is the fewest bytes a replica descriptor takes (id,
// index, a DiskDescriptor with an empty path and one-byte length, status).
const minReplicaBytes = 8 + 1 + 1 + 8 + 4

// MetadataPayload is upstream's MetadataPayload, the PUT_END payload.
// GroupID, DataType and HardPinned are struct_pack compatible<> fields: nil
// is an empty one (std::nullopt), which older writers leave so and which
// upstream's reader takes as "", UNKNOWN and false.
type MetadataPayload struct {
	ClientID   UUID
	Size       uint64
	Replicas   []ReplicaDescriptor
	GroupID    *string
	DataType   *ObjectDataType
	HardPinned *bool
}

var metadataPayloadType = newSPType("MetadataPayload", true, litStruct(
	litPair64, // client_id
	litUint64, // size
	litVector(litStruct( // replicas: Replica::Descriptor
		litUint64, // id
		litVariant(
			litStruct(litStruct(litUint64, litUint64, litString, litString)), // MemoryDescriptor
			litStruct(litStruct(litUint64, litUint64, litString, litString)), // NoFDescriptor
			litStruct(litString, litUint64),                                  // DiskDescriptor
			litStruct(litPair64, litUint64, litString),                       // LocalDiskDescriptor
			litStruct(litString, litUint64, litUint64, litUint64, litInt32),  // DistributedFSDescriptor
		),
		litInt32, // status
	)),
	// group_id, data_type, hard_pinned: compatible<>, not in the literal
))

// EncodeMetadataPayload returns the struct_pack bytes upstream's default
// (NDEBUG) build writes for p. Every replica must have a Variant.
func EncodeMetadataPayload(p MetadataPayload) ([]byte, error) { return p.marshal(false) }

// EncodeMetadataPayloadTypeLiteral returns the bytes a build without NDEBUG
// writes: the same, with the type literal in the header.
func EncodeMetadataPayloadTypeLiteral(p MetadataPayload) ([]byte, error) { return p.marshal(true) }

func (p *MetadataPayload) marshal(withLiteral bool) ([]byte, error) {
	var z spSize
	z.fixed(16 + 8)
	z.container(len(p.Replicas))
	for i := range p.Replicas {
		rd := &p.Replicas[i]
		if rd.Variant == nil {
			return nil, newError(ErrMalformed, fmt.Sprintf("replica %d has no descriptor variant", i))
		}
		z.fixed(8 + 1 + 4)
		rd.Variant.measure(&z)
	}
	z.fixed(3) // the has-value bytes of the three compatible fields
	if p.GroupID != nil {
		z.str(*p.GroupID)
	}
	if p.DataType != nil {
		z.fixed(1)
	}
	if p.HardPinned != nil {
		z.fixed(1)
	}
	return spMarshal(metadataPayloadType, withLiteral, z, func(w *spWriter) {
		w.u64(p.ClientID.First)
		w.u64(p.ClientID.Second)
		w.u64(p.Size)
		w.length(len(p.Replicas))
		for i := range p.Replicas {
			rd := &p.Replicas[i]
			w.u64(rd.ID)
			w.u8(rd.Variant.variantIndex())
			rd.Variant.write(w)
			w.i32(int32(rd.Status))
		}
		w.boolean(p.GroupID != nil)
		if p.GroupID != nil {
			w.str(*p.GroupID)
		}
		w.boolean(p.DataType != nil)
		if p.DataType != nil {
			w.u8(uint8(*p.DataType))
		}
		w.boolean(p.HardPinned != nil)
		if p.HardPinned != nil {
			w.boolean(*p.HardPinned)
		}
	}), nil
}

// DecodeMetadataPayload decodes a PUT_END payload written by either build
// of upstream, or by an older upstream whose MetadataPayload lacked some or
// all of the compatible fields (they decode as nil).
func DecodeMetadataPayload(data []byte) (MetadataPayload, error) {
	r, err := spOpen(metadataPayloadType, data)
	if err != nil {
		return MetadataPayload{}, err
	}
	var p MetadataPayload
	p.ClientID = UUID{r.u64(), r.u64()}
	p.Size = r.u64()
	if n := r.length(minReplicaBytes); n > 0 {
		p.Replicas = make([]ReplicaDescriptor, n)
		for i := range p.Replicas {
			rd := &p.Replicas[i]
			rd.ID = r.u64()
			rd.Variant = readReplicaVariant(r)
			rd.Status = ReplicaStatus(r.i32())
		}
	}
	if r.compatible() {
		s := r.str()
		p.GroupID = &s
	}
	if r.compatible() {
		t := ObjectDataType(r.u8())
		p.DataType = &t
	}
	if r.compatible() {
		b := r.boolean()
		p.HardPinned = &b
	}
	if err := r.finish(); err != nil {
		return MetadataPayload{}, err
	}
	return p, nil
}
