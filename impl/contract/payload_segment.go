package contract

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
	segmentMountType = newSPType("SegmentMountOp", false,
		litStruct(litString, litString, litUint64, litBool, litString))
	segmentUpdateType = newSPType("SegmentUpdateOp", false,
		litStruct(litString, litString, litUint64, litBool, litString))
	segmentUnmountType = newSPType("SegmentUnmountOp", false, litStruct(litString))
)

func (op *SegmentMountOp) marshal(t *spType, withLiteral bool) []byte {
	var z spSize
	z.str(op.SegmentName)
	z.str(op.TransportEndpoint)
	z.fixed(8 + 1)
	z.str(op.FilePath)
	return spMarshal(t, withLiteral, z, func(w *spWriter) {
		w.str(op.SegmentName)
		w.str(op.TransportEndpoint)
		w.u64(op.Capacity)
		w.boolean(op.IsMemorySegment)
		w.str(op.FilePath)
	})
}

func decodeSegmentMount(t *spType, data []byte) (SegmentMountOp, error) {
	r, err := spOpen(t, data)
	if err != nil {
		return SegmentMountOp{}, err
	}
	var op SegmentMountOp
	op.SegmentName = r.str()
	op.TransportEndpoint = r.str()
	op.Capacity = r.u64()
	op.IsMemorySegment = r.boolean()
	op.FilePath = r.str()
	if err := r.finish(); err != nil {
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
	var z spSize
	z.str(op.TransportEndpoint)
	return spMarshal(segmentUnmountType, withLiteral, z, func(w *spWriter) {
		w.str(op.TransportEndpoint)
	})
}

// EncodeSegmentUnmountOp returns the bytes upstream's default (NDEBUG) build writes.
func EncodeSegmentUnmountOp(op SegmentUnmountOp) []byte { return op.marshal(false) }

// EncodeSegmentUnmountOpTypeLiteral returns the bytes a build without NDEBUG writes.
func EncodeSegmentUnmountOpTypeLiteral(op SegmentUnmountOp) []byte { return op.marshal(true) }

// DecodeSegmentUnmountOp decodes a SEGMENT_UNMOUNT payload of either build.
func DecodeSegmentUnmountOp(data []byte) (SegmentUnmountOp, error) {
	r, err := spOpen(segmentUnmountType, data)
	if err != nil {
		return SegmentUnmountOp{}, err
	}
	op := SegmentUnmountOp{TransportEndpoint: r.str()}
	if err := r.finish(); err != nil {
		return SegmentUnmountOp{}, err
	}
	return op, nil
}
