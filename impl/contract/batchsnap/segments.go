package batchsnap

import (
	"github.com/oplogha/oplogha/impl/contract/structpack"
)

// SegmentInfo is one entry of the segment registry as the snapshot stores
// it (metadata_store.h StandbySegmentInfo), in field order.
type SegmentInfo struct {
	SegmentName       string
	TransportEndpoint string
	Capacity          uint64
	IsMemorySegment   bool
	FilePath          string
}

// segmentsType is std::vector<StandbySegmentInfo> (hash 0x6a242baa).
var segmentsType = structpack.NewType("std::vector<StandbySegmentInfo>", false, structpack.LitVector(structpack.LitStruct(
	structpack.LitString, structpack.LitString, structpack.LitUint64, structpack.LitBool, structpack.LitString)))

// minSegmentBytes is the fewest bytes a segment takes (three empty
// strings with one-byte lengths, capacity, flag).
const minSegmentBytes = 3 + 8 + 1

// EncodeSegments is segments.bin as upstream's default (NDEBUG) build
// writes it (codec.cpp EncodeBatchOpLogSnapshotSegments).
func EncodeSegments(segs []SegmentInfo) []byte { return encodeSegments(segs, false) }

// EncodeSegmentsTypeLiteral is segments.bin as a build without NDEBUG
// (upstream's Release) writes it: the type literal in the header.
func EncodeSegmentsTypeLiteral(segs []SegmentInfo) []byte { return encodeSegments(segs, true) }

func encodeSegments(segs []SegmentInfo, literal bool) []byte {
	var z structpack.Size
	z.Container(len(segs))
	for i := range segs {
		s := &segs[i]
		z.Str(s.SegmentName)
		z.Str(s.TransportEndpoint)
		z.Fixed(8 + 1)
		z.Str(s.FilePath)
	}
	return structpack.Marshal(segmentsType, literal, z, func(w *structpack.Writer) {
		w.Length(len(segs))
		for i := range segs {
			s := &segs[i]
			w.Str(s.SegmentName)
			w.Str(s.TransportEndpoint)
			w.U64(s.Capacity)
			w.Bool(s.IsMemorySegment)
			w.Str(s.FilePath)
		}
	})
}

// DecodeSegments reads segments.bin written by either build. Upstream's
// decoder ("Invalid snapshot segments") accepts bytes after the value;
// this one refuses them (a reader holds the object to its manifest size
// and CRC32C first, so they never reach it from a valid snapshot).
func DecodeSegments(data []byte) ([]SegmentInfo, error) {
	var r structpack.Reader
	if err := r.Open(segmentsType, data, nil); err != nil {
		return nil, failf(ErrMalformed, "Invalid snapshot segments: %v", err)
	}
	n := r.Length(minSegmentBytes)
	segs := make([]SegmentInfo, n)
	for i := range segs {
		segs[i] = SegmentInfo{SegmentName: r.Str(), TransportEndpoint: r.Str(), Capacity: r.U64(), IsMemorySegment: r.Bool(), FilePath: r.Str()}
	}
	if err := r.Finish(); err != nil {
		return nil, failf(ErrMalformed, "Invalid snapshot segments: %v", err)
	}
	return segs, nil
}
