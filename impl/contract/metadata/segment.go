package metadata

import "github.com/oplogha/oplogha/impl/contract/structpack"

// The segment payloads: upstream's SegmentMountOp, SegmentUnmountOp and
// SegmentUpdateOp (include/ha/oplog/oplog_types.h), struct_pack-encoded.
// MasterService::MountSegment writes a SEGMENT_MOUNT keyed by the transport
// endpoint (ReMountSegment keys it by the segment name), UnmountSegment a
// SEGMENT_UNMOUNT; no upstream writer emits SEGMENT_UPDATE, but
// OpLogApplier reads it.
//
// SegmentMountOp and SegmentUpdateOp have the same fields, so the same type
// literal and hash: their bytes are identical and only the entry's op type
// tells them apart.

// SegmentMountOp is the SEGMENT_MOUNT payload.
type SegmentMountOp struct {
	SegmentName       string
	TransportEndpoint string
	Capacity          uint64
	IsMemorySegment   bool
	FilePath          string
}

// SegmentUpdateOp is the SEGMENT_UPDATE payload.
type SegmentUpdateOp SegmentMountOp

// SegmentUnmountOp is the SEGMENT_UNMOUNT payload.
type SegmentUnmountOp struct {
	TransportEndpoint string
}

var (
	segmentMountType = structpack.NewType("SegmentMountOp", false,
		structpack.LitStruct(structpack.LitString, structpack.LitString, structpack.LitUint64, structpack.LitBool, structpack.LitString))
	segmentUpdateType = structpack.NewType("SegmentUpdateOp", false,
		structpack.LitStruct(structpack.LitString, structpack.LitString, structpack.LitUint64, structpack.LitBool, structpack.LitString))
	segmentUnmountType = structpack.NewType("SegmentUnmountOp", false, structpack.LitStruct(structpack.LitString))
)

func (op *SegmentMountOp) marshal(t *structpack.Type, withLiteral bool) []byte {
	var z structpack.Size
	z.Str(op.SegmentName)
	z.Str(op.TransportEndpoint)
	z.Fixed(8 + 1)
	z.Str(op.FilePath)
	return structpack.Marshal(t, withLiteral, z, func(w *structpack.Writer) {
		w.Str(op.SegmentName)
		w.Str(op.TransportEndpoint)
		w.U64(op.Capacity)
		w.Bool(op.IsMemorySegment)
		w.Str(op.FilePath)
	})
}

func decodeSegmentMount(t *structpack.Type, data []byte) (SegmentMountOp, error) {
	r, err := structpack.Open(t, data)
	if err != nil {
		return SegmentMountOp{}, err
	}
	var op SegmentMountOp
	op.SegmentName = r.Str()
	op.TransportEndpoint = r.Str()
	op.Capacity = r.U64()
	op.IsMemorySegment = r.Bool()
	op.FilePath = r.Str()
	if err := r.Finish(); err != nil {
		return SegmentMountOp{}, err
	}
	return op, nil
}

// EncodeSegmentMountOp returns the bytes upstream's default (NDEBUG) build writes.
func EncodeSegmentMountOp(op SegmentMountOp) []byte { return op.marshal(segmentMountType, false) }

// EncodeSegmentMountOpTypeLiteral returns the bytes a build without NDEBUG writes.
func EncodeSegmentMountOpTypeLiteral(op SegmentMountOp) []byte {
	return op.marshal(segmentMountType, true)
}

// DecodeSegmentMountOp decodes a SEGMENT_MOUNT payload of either build.
func DecodeSegmentMountOp(data []byte) (SegmentMountOp, error) {
	return decodeSegmentMount(segmentMountType, data)
}

// EncodeSegmentUpdateOp returns the bytes upstream's default (NDEBUG) build writes.
func EncodeSegmentUpdateOp(op SegmentUpdateOp) []byte {
	return (*SegmentMountOp)(&op).marshal(segmentUpdateType, false)
}

// EncodeSegmentUpdateOpTypeLiteral returns the bytes a build without NDEBUG writes.
func EncodeSegmentUpdateOpTypeLiteral(op SegmentUpdateOp) []byte {
	return (*SegmentMountOp)(&op).marshal(segmentUpdateType, true)
}

// DecodeSegmentUpdateOp decodes a SEGMENT_UPDATE payload of either build.
func DecodeSegmentUpdateOp(data []byte) (SegmentUpdateOp, error) {
	op, err := decodeSegmentMount(segmentUpdateType, data)
	return SegmentUpdateOp(op), err
}

func (op *SegmentUnmountOp) marshal(withLiteral bool) []byte {
	var z structpack.Size
	z.Str(op.TransportEndpoint)
	return structpack.Marshal(segmentUnmountType, withLiteral, z, func(w *structpack.Writer) {
		w.Str(op.TransportEndpoint)
	})
}

// EncodeSegmentUnmountOp returns the bytes upstream's default (NDEBUG) build writes.
func EncodeSegmentUnmountOp(op SegmentUnmountOp) []byte { return op.marshal(false) }

// EncodeSegmentUnmountOpTypeLiteral returns the bytes a build without NDEBUG writes.
func EncodeSegmentUnmountOpTypeLiteral(op SegmentUnmountOp) []byte { return op.marshal(true) }

// DecodeSegmentUnmountOp decodes a SEGMENT_UNMOUNT payload of either build.
func DecodeSegmentUnmountOp(data []byte) (SegmentUnmountOp, error) {
	r, err := structpack.Open(segmentUnmountType, data)
	if err != nil {
		return SegmentUnmountOp{}, err
	}
	op := SegmentUnmountOp{TransportEndpoint: r.Str()}
	if err := r.Finish(); err != nil {
		return SegmentUnmountOp{}, err
	}
	return op, nil
}
