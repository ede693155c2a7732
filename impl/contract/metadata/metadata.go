package metadata

import (
	"fmt"

	"github.com/oplogha/oplogha/impl/contract"
	"github.com/oplogha/oplogha/impl/contract/structpack"
)

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
	measure(z *structpack.Size)
	write(w *structpack.Writer)
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

func (b *BufferDescriptor) measure(z *structpack.Size) {
	z.Fixed(16)
	z.Str(b.Protocol)
	z.Str(b.TransportEndpoint)
}

func (b *BufferDescriptor) write(w *structpack.Writer) {
	w.U64(b.Size)
	w.U64(b.BufferAddress)
	w.Str(b.Protocol)
	w.Str(b.TransportEndpoint)
}

func (b *BufferDescriptor) read(r *structpack.Reader) {
	b.Size = r.U64()
	b.BufferAddress = r.U64()
	b.Protocol = r.Str()
	b.TransportEndpoint = r.Str()
}

func (d MemoryDescriptor) measure(z *structpack.Size) { d.Buffer.measure(z) }
func (d MemoryDescriptor) write(w *structpack.Writer) { d.Buffer.write(w) }
func (d NoFDescriptor) measure(z *structpack.Size)    { d.Buffer.measure(z) }
func (d NoFDescriptor) write(w *structpack.Writer)    { d.Buffer.write(w) }

func (d DiskDescriptor) measure(z *structpack.Size) {
	z.Str(d.FilePath)
	z.Fixed(8)
}

func (d DiskDescriptor) write(w *structpack.Writer) {
	w.Str(d.FilePath)
	w.U64(d.ObjectSize)
}

func (d LocalDiskDescriptor) measure(z *structpack.Size) {
	z.Fixed(24)
	z.Str(d.TransportEndpoint)
}

func (d LocalDiskDescriptor) write(w *structpack.Writer) {
	w.U64(d.ClientID.First)
	w.U64(d.ClientID.Second)
	w.U64(d.ObjectSize)
	w.Str(d.TransportEndpoint)
}

func (d DistributedFSDescriptor) measure(z *structpack.Size) {
	z.Str(d.FilePath)
	z.Fixed(28)
}

func (d DistributedFSDescriptor) write(w *structpack.Writer) {
	w.Str(d.FilePath)
	w.U64(d.Offset)
	w.U64(d.ObjectSize)
	w.U64(d.AlignedSize)
	w.I32(d.ShardIdx)
}

// ReplicaFields is a replica descriptor as DecodeMetadataFields reads it:
// the variant in place rather than boxed. Index says which alternative it
// holds, and so which one field below is set: Buffer for a
// MemoryDescriptor (0) or an NoFDescriptor (1), Disk (2), LocalDisk (3),
// DistributedFS (4).
type ReplicaFields struct {
	ID            uint64
	Index         uint8
	Status        ReplicaStatus
	Buffer        BufferDescriptor
	Disk          DiskDescriptor
	LocalDisk     LocalDiskDescriptor
	DistributedFS DistributedFSDescriptor
}

// Variant is f's descriptor variant, boxed as ReplicaDescriptor holds it
// (nil for an Index outside 0..4).
func (f *ReplicaFields) Variant() ReplicaVariant {
	switch f.Index {
	case 0:
		return MemoryDescriptor{Buffer: f.Buffer}
	case 1:
		return NoFDescriptor{Buffer: f.Buffer}
	case 2:
		return f.Disk
	case 3:
		return f.LocalDisk
	case 4:
		return f.DistributedFS
	}
	return nil
}

// Measure adds f's wire size to z (an Index outside 0..4 is refused by
// Write's caller beforehand: Valid).
func (f *ReplicaFields) Measure(z *structpack.Size) {
	z.Fixed(8 + 1 + 4)
	switch f.Index { // in place: boxing the variant would allocate per replica
	case 0, 1:
		f.Buffer.measure(z)
	case 2:
		f.Disk.measure(z)
	case 3:
		f.LocalDisk.measure(z)
	case 4:
		f.DistributedFS.measure(z)
	}
}

// Valid reports whether f's Index names an alternative.
func (f *ReplicaFields) Valid() bool { return f.Index <= 4 }

// Write writes f as upstream's Replica::Descriptor: id, the variant's
// index and alternative, status.
func (f *ReplicaFields) Write(w *structpack.Writer) {
	w.U64(f.ID)
	w.U8(f.Index)
	switch f.Index {
	case 0, 1:
		f.Buffer.write(w)
	case 2:
		f.Disk.write(w)
	case 3:
		f.LocalDisk.write(w)
	case 4:
		f.DistributedFS.write(w)
	}
	w.I32(int32(f.Status))
}

// Read reads a replica descriptor into f.
func (f *ReplicaFields) Read(r *structpack.Reader) { f.read(r) }

// FieldsOf is the ReplicaFields form of rd.
func FieldsOf(rd ReplicaDescriptor) ReplicaFields {
	f := ReplicaFields{ID: rd.ID, Status: rd.Status, Index: 255}
	switch v := rd.Variant.(type) {
	case MemoryDescriptor:
		f.Index, f.Buffer = 0, v.Buffer
	case NoFDescriptor:
		f.Index, f.Buffer = 1, v.Buffer
	case DiskDescriptor:
		f.Index, f.Disk = 2, v
	case LocalDiskDescriptor:
		f.Index, f.LocalDisk = 3, v
	case DistributedFSDescriptor:
		f.Index, f.DistributedFS = 4, v
	}
	return f
}

// MinReplicaBytes is the fewest bytes a replica descriptor takes on the
// wire: a reader bounds a replica count by it.
const MinReplicaBytes = minReplicaBytes

// LitReplicaDescriptor is the type literal of upstream's Replica::Descriptor.
var LitReplicaDescriptor = structpack.LitStruct(
	structpack.LitUint64, // id
	structpack.LitVariant(
		structpack.LitStruct(structpack.LitStruct(structpack.LitUint64, structpack.LitUint64, structpack.LitString, structpack.LitString)), // MemoryDescriptor
		structpack.LitStruct(structpack.LitStruct(structpack.LitUint64, structpack.LitUint64, structpack.LitString, structpack.LitString)), // NoFDescriptor
		structpack.LitStruct(structpack.LitString, structpack.LitUint64),                                                                   // DiskDescriptor
		structpack.LitStruct(structpack.LitPair64, structpack.LitUint64, structpack.LitString),                                             // LocalDiskDescriptor
		structpack.LitStruct(structpack.LitString, structpack.LitUint64, structpack.LitUint64, structpack.LitUint64, structpack.LitInt32),  // DistributedFSDescriptor
	),
	structpack.LitInt32, // status
)

// read reads a replica descriptor: id, the variant's index and
// alternative, status.
func (f *ReplicaFields) read(r *structpack.Reader) {
	*f = ReplicaFields{ID: r.U64()}
	at := r.Pos()
	f.Index = r.U8()
	switch f.Index {
	case 0, 1:
		f.Buffer.read(r)
	case 2:
		f.Disk.FilePath = r.Str()
		f.Disk.ObjectSize = r.U64()
	case 3:
		f.LocalDisk.ClientID = UUID{r.U64(), r.U64()}
		f.LocalDisk.ObjectSize = r.U64()
		f.LocalDisk.TransportEndpoint = r.Str()
	case 4:
		f.DistributedFS.FilePath = r.Str()
		f.DistributedFS.Offset = r.U64()
		f.DistributedFS.ObjectSize = r.U64()
		f.DistributedFS.AlignedSize = r.U64()
		f.DistributedFS.ShardIdx = r.I32()
	default:
		if r.Err() == nil {
			r.Fail("replica descriptor variant index %d at byte %d is not 0..4", f.Index, at)
		}
	}
	f.Status = ReplicaStatus(r.I32())
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

var metadataPayloadType = structpack.NewType("MetadataPayload", true, structpack.LitStruct(
	structpack.LitPair64,                       // client_id
	structpack.LitUint64,                       // size
	structpack.LitVector(LitReplicaDescriptor), // replicas
	// group_id, data_type, hard_pinned: compatible<>, not in the literal
))

// EncodeMetadataPayload returns the struct_pack bytes upstream's default
// (NDEBUG) build writes for p. Every replica must have a Variant.
func EncodeMetadataPayload(p MetadataPayload) ([]byte, error) { return p.marshal(false) }

// EncodeMetadataPayloadTypeLiteral returns the bytes a build without NDEBUG
// writes: the same, with the type literal in the header.
func EncodeMetadataPayloadTypeLiteral(p MetadataPayload) ([]byte, error) { return p.marshal(true) }

func (p *MetadataPayload) marshal(withLiteral bool) ([]byte, error) {
	var z structpack.Size
	z.Fixed(16 + 8)
	z.Container(len(p.Replicas))
	for i := range p.Replicas {
		rd := &p.Replicas[i]
		if rd.Variant == nil {
			return nil, contract.NewError(contract.ErrMalformed, fmt.Sprintf("replica %d has no descriptor variant", i))
		}
		z.Fixed(8 + 1 + 4)
		rd.Variant.measure(&z)
	}
	z.Fixed(3) // the has-value bytes of the three compatible fields
	if p.GroupID != nil {
		z.Str(*p.GroupID)
	}
	if p.DataType != nil {
		z.Fixed(1)
	}
	if p.HardPinned != nil {
		z.Fixed(1)
	}
	return structpack.Marshal(metadataPayloadType, withLiteral, z, func(w *structpack.Writer) {
		w.U64(p.ClientID.First)
		w.U64(p.ClientID.Second)
		w.U64(p.Size)
		w.Length(len(p.Replicas))
		for i := range p.Replicas {
			rd := &p.Replicas[i]
			w.U64(rd.ID)
			w.U8(rd.Variant.variantIndex())
			rd.Variant.write(w)
			w.I32(int32(rd.Status))
		}
		w.Bool(p.GroupID != nil)
		if p.GroupID != nil {
			w.Str(*p.GroupID)
		}
		w.Bool(p.DataType != nil)
		if p.DataType != nil {
			w.U8(uint8(*p.DataType))
		}
		w.Bool(p.HardPinned != nil)
		if p.HardPinned != nil {
			w.Bool(*p.HardPinned)
		}
	}), nil
}

// DecodeMetadataPayload decodes a PUT_END payload written by either build
// of upstream, or by an older upstream whose MetadataPayload lacked some or
// all of the compatible fields (they decode as nil).
func DecodeMetadataPayload(data []byte) (MetadataPayload, error) {
	var f MetadataFields
	if err := DecodeMetadataFields(data, &f, nil); err != nil {
		return MetadataPayload{}, err
	}
	return f.Payload(), nil
}

// MetadataFields is a MetadataPayload as DecodeMetadataFields reads it, for
// a caller that decodes many and converts each to its own type: replica
// variants in place (ReplicaFields), the compatible fields as a value and
// whether it is present.
type MetadataFields struct {
	ClientID      UUID
	Size          uint64
	Replicas      []ReplicaFields
	GroupID       string
	HasGroupID    bool
	DataType      ObjectDataType
	HasDataType   bool
	HardPinned    bool
	HasHardPinned bool
}

// Payload is f as a MetadataPayload (sharing nothing with f).
func (f *MetadataFields) Payload() MetadataPayload {
	p := MetadataPayload{ClientID: f.ClientID, Size: f.Size}
	if len(f.Replicas) > 0 {
		p.Replicas = make([]ReplicaDescriptor, len(f.Replicas))
		for i := range f.Replicas {
			rf := &f.Replicas[i]
			p.Replicas[i] = ReplicaDescriptor{ID: rf.ID, Variant: rf.Variant(), Status: rf.Status}
		}
	}
	if f.HasGroupID {
		g := f.GroupID
		p.GroupID = &g
	}
	if f.HasDataType {
		t := f.DataType
		p.DataType = &t
	}
	if f.HasHardPinned {
		b := f.HardPinned
		p.HardPinned = &b
	}
	return p
}

// DecodeMetadataFields is DecodeMetadataPayload into f, for a caller that
// decodes payload after payload: it reuses f's Replicas, reads strings
// through strs (nil: each its own), and allocates nothing when f has room
// and strs has the strings. It accepts and refuses exactly what
// DecodeMetadataPayload does (which is it, converted); on error f holds
// anything.
func DecodeMetadataFields(data []byte, f *MetadataFields, strs *structpack.Strings) error {
	var r structpack.Reader
	if err := r.Open(metadataPayloadType, data, strs); err != nil {
		return err
	}
	reps := f.Replicas[:0]
	*f = MetadataFields{ClientID: UUID{r.U64(), r.U64()}, Size: r.U64()}
	if n := r.Length(minReplicaBytes); n > 0 {
		reps = slicesGrow(reps, n)
		for i := range reps {
			reps[i].read(&r)
		}
	}
	f.Replicas = reps
	if f.HasGroupID = r.Compatible(); f.HasGroupID {
		f.GroupID = r.Str()
	}
	if f.HasDataType = r.Compatible(); f.HasDataType {
		f.DataType = ObjectDataType(r.U8())
	}
	if f.HasHardPinned = r.Compatible(); f.HasHardPinned {
		f.HardPinned = r.Bool()
	}
	return r.Finish()
}

// slicesGrow returns s resized to n, reusing its array when it has room.
func slicesGrow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
