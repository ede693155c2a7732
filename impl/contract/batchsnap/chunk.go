package batchsnap

import (
	"io"

	"github.com/oplogha/oplogha/impl/contract/metadata"
	"github.com/oplogha/oplogha/impl/contract/structpack"
)

// Pinned is an object's hard_pinned: a struct_pack compatible<bool>, so
// absent, false or true. Upstream's OpLog applier stores false or true for
// a PUT_END whose payload it decodes, and leaves it absent for one without
// a payload or with one it cannot parse (oplog_applier.cpp:128-156); a
// chunk written before upstream PR #3447 has none.
type Pinned uint8

// Pinned values.
const (
	PinnedUnset Pinned = iota
	PinnedFalse
	PinnedTrue
)

// PinnedOf is the Pinned of a bool.
func PinnedOf(b bool) Pinned {
	if b {
		return PinnedTrue
	}
	return PinnedFalse
}

// ObjectMetadata is upstream's StandbyObjectMetadata: what a standby keeps
// of one object. Replicas hold the descriptor variants in place
// (metadata.ReplicaFields), so a writer and a reader of millions of objects
// box nothing.
type ObjectMetadata struct {
	ClientID   metadata.UUID
	Size       uint64
	Replicas   []metadata.ReplicaFields
	GroupID    string
	DataType   metadata.ObjectDataType
	HardPinned Pinned
}

// ObjectEntry is upstream's StandbyObjectEntry: an object's tenant, key
// and metadata.
type ObjectEntry struct {
	TenantID string
	Key      string
	Metadata ObjectMetadata
}

// ObjectChunk is one objects/<n>.bin (codec.h BatchOpLogSnapshotObjectChunk).
type ObjectChunk struct {
	ChunkIndex uint64
	Objects    []ObjectEntry
}

// chunkType is BatchOpLogSnapshotObjectChunk (hash 0x6009c4b6): it has a
// compatible field (each object's hard_pinned), so its buffers carry their
// total length.
var chunkType = structpack.NewType("BatchOpLogSnapshotObjectChunk", true, structpack.LitStruct(
	structpack.LitUint64, // chunk_index
	structpack.LitVector(structpack.LitStruct( // StandbyObjectEntry
		structpack.LitString, // tenant_id
		structpack.LitString, // key
		structpack.LitStruct( // StandbyObjectMetadata
			structpack.LitPair64, // client_id
			structpack.LitUint64, // size
			structpack.LitVector(metadata.LitReplicaDescriptor), // replicas
			structpack.LitString, // group_id
			structpack.LitUint8,  // data_type
			// hard_pinned: compatible<bool>, not in the literal
		),
	)),
))

// minObjectBytes is the fewest bytes an object takes in a chunk: two empty
// strings, client id, size, an empty replica list, an empty group id, the
// data type, and its hard_pinned has-value byte.
const minObjectBytes = 1 + 1 + 16 + 8 + 1 + 1 + 1 + 1

// ChunkSize measures a chunk before it is written: its objects are added
// one by one (Add), then EncodeObjectChunkTo writes them, in the same order,
// with the header the measure gives.
type ChunkSize struct {
	z       structpack.Size
	objects int
}

// NewChunkSize starts measuring a chunk.
func NewChunkSize() ChunkSize {
	var s ChunkSize
	s.z.Fixed(8) // chunk_index
	return s
}

// Add measures one object.
func (s *ChunkSize) Add(e *ObjectEntry) {
	s.objects++
	s.z.Str(e.TenantID)
	s.z.Str(e.Key)
	m := &e.Metadata
	s.z.Fixed(16 + 8)
	s.z.Container(len(m.Replicas))
	for i := range m.Replicas {
		m.Replicas[i].Measure(&s.z)
	}
	s.z.Str(m.GroupID)
	s.z.Fixed(1) // data_type
	s.z.Fixed(1) // hard_pinned's has-value byte
	if m.HardPinned != PinnedUnset {
		s.z.Fixed(1)
	}
}

// Objects is the number of objects added.
func (s *ChunkSize) Objects() int { return s.objects }

// EncodeObjectChunk is objects/<n>.bin as upstream's default (NDEBUG) build
// writes it (codec.cpp EncodeBatchOpLogSnapshotObjectChunk).
func EncodeObjectChunk(c ObjectChunk) ([]byte, error) { return encodeChunk(c, false) }

// EncodeObjectChunkTypeLiteral is the same as a build without NDEBUG writes it.
func EncodeObjectChunkTypeLiteral(c ObjectChunk) ([]byte, error) { return encodeChunk(c, true) }

func encodeChunk(c ObjectChunk, literal bool) ([]byte, error) {
	s := NewChunkSize()
	for i := range c.Objects {
		s.Add(&c.Objects[i])
	}
	var b sliceWriter
	_, err := EncodeObjectChunkTo(&b, c.ChunkIndex, s, literal, func(yield func(*ObjectEntry) bool) {
		for i := range c.Objects {
			if !yield(&c.Objects[i]) {
				return
			}
		}
	})
	return b, err
}

type sliceWriter []byte

func (b *sliceWriter) Write(p []byte) (int, error) {
	*b = append(*b, p...)
	return len(p), nil
}

// EncodeObjectChunkTo writes chunk index to w, its objects yielded by
// objects in the order they were measured into s, holding at most one block
// of it in memory (and one byte per object for the compatible section). It
// returns the bytes written. Objects that differ from what s measured, in
// number or size, are an error after the fact: the header would lie.
func EncodeObjectChunkTo(w io.Writer, index uint64, s ChunkSize, literal bool, objects func(yield func(*ObjectEntry) bool)) (int64, error) {
	s.z.Container(s.objects)
	pinned := make([]Pinned, 0, s.objects)
	var bad error
	n, err := structpack.MarshalTo(w, chunkType, literal, s.z, func(sw *structpack.Writer) {
		sw.U64(index)
		sw.Length(s.objects)
		objects(func(e *ObjectEntry) bool {
			if len(pinned) == s.objects {
				bad = failf(ErrCount, "chunk %d yielded more than the %d objects measured", index, s.objects)
				return false
			}
			writeObject(sw, e)
			pinned = append(pinned, e.Metadata.HardPinned)
			sw.Flush()
			return true
		})
		// The compatible section: each object's hard_pinned, in order.
		for _, p := range pinned {
			switch p {
			case PinnedUnset:
				sw.U8(0)
			default:
				sw.U8(1)
				sw.Bool(p == PinnedTrue)
			}
		}
	})
	if bad != nil {
		return n, bad
	}
	if len(pinned) != s.objects {
		return n, failf(ErrCount, "chunk %d yielded %d objects, %d measured", index, len(pinned), s.objects)
	}
	return n, err
}

func writeObject(w *structpack.Writer, e *ObjectEntry) {
	w.Str(e.TenantID)
	w.Str(e.Key)
	m := &e.Metadata
	w.U64(m.ClientID.First)
	w.U64(m.ClientID.Second)
	w.U64(m.Size)
	w.Length(len(m.Replicas))
	for i := range m.Replicas {
		m.Replicas[i].Write(w)
	}
	w.Str(m.GroupID)
	w.U8(uint8(m.DataType))
}

// DecodeObjectChunk reads objects/<n>.bin written by either build, and
// checks it is chunk expectIndex holding expectCount objects (codec.cpp
// DecodeBatchOpLogSnapshotObjectChunk: "Invalid snapshot object chunk",
// "Snapshot object chunk index mismatch", "Snapshot object chunk count
// mismatch"). A chunk written before hard_pinned existed decodes with every
// HardPinned unset. Upstream's decoder also accepts bytes after the value
// and a chunk cut inside its last hard_pinned value; this one refuses both
// (they cannot come from a valid snapshot: a reader holds each object to its
// manifest size and CRC32C before decoding it).
func DecodeObjectChunk(data []byte, expectIndex, expectCount uint64) (ObjectChunk, error) {
	var c ObjectChunk
	err := DecodeObjectChunkInto(data, expectIndex, expectCount, &c, nil)
	return c, err
}

// DecodeObjectChunkInto is DecodeObjectChunk into c, reusing its Objects
// (and their replica slices) and reading strings through strs (nil: each
// its own).
func DecodeObjectChunkInto(data []byte, expectIndex, expectCount uint64, c *ObjectChunk, strs *structpack.Strings) error {
	var r structpack.Reader
	if err := r.Open(chunkType, data, strs); err != nil {
		return failf(ErrMalformed, "Invalid snapshot object chunk: %v", err)
	}
	c.ChunkIndex = r.U64()
	n := r.Length(minObjectBytes - 1)
	objs := c.Objects[:0]
	if objs == nil || cap(objs) < n {
		objs = make([]ObjectEntry, 0, n)
	}
	for range n {
		objs = objs[:len(objs)+1]
		readEntry(&r, &objs[len(objs)-1])
		if r.Err() != nil {
			break
		}
	}
	for i := range objs {
		if r.Compatible() {
			objs[i].Metadata.HardPinned = PinnedOf(r.Bool())
		}
	}
	c.Objects = objs
	if err := r.Finish(); err != nil {
		return failf(ErrMalformed, "Invalid snapshot object chunk: %v", err)
	}
	if c.ChunkIndex != expectIndex {
		return fail(ErrCount, "Snapshot object chunk index mismatch")
	}
	if uint64(len(objs)) != expectCount {
		return fail(ErrCount, "Snapshot object chunk count mismatch")
	}
	return nil
}

// readEntry reads one StandbyObjectEntry's body (everything but its
// hard_pinned, which follows the whole body) into e, reusing its replica
// slice.
func readEntry(r *structpack.Reader, e *ObjectEntry) {
	reps := e.Metadata.Replicas[:0]
	e.TenantID, e.Key = r.Str(), r.Str()
	m := ObjectMetadata{ClientID: metadata.UUID{First: r.U64(), Second: r.U64()}, Size: r.U64()}
	if k := r.Length(metadata.MinReplicaBytes); k > 0 {
		if cap(reps) < k {
			reps = make([]metadata.ReplicaFields, k)
		}
		reps = reps[:k]
		for i := range reps {
			reps[i].Read(r)
		}
	}
	m.Replicas = reps
	m.GroupID = r.Str()
	m.DataType = metadata.ObjectDataType(r.U8())
	e.Metadata = m
}

// ScanObjectChunk is DecodeObjectChunk one object at a time: the same
// acceptance and the same reasons, in the same order (the whole chunk is
// checked before the first object is visited), but no chunk is built:
// visit is handed each object in order in one reused entry (its strings
// read through strs: structpack.Views for a caller that keeps nothing),
// so memory does not grow with the chunk. It reads the body twice: once to
// find where the objects' hard_pinned values start (they follow the whole
// body), then in step with them.
func ScanObjectChunk(data []byte, expectIndex, expectCount uint64, strs *structpack.Strings, visit func(e *ObjectEntry) error) error {
	var skip, body structpack.Reader
	var e ObjectEntry
	if err := skip.Open(chunkType, data, structpack.Views()); err != nil {
		return failf(ErrMalformed, "Invalid snapshot object chunk: %v", err)
	}
	index := skip.U64()
	n := skip.Length(minObjectBytes - 1)
	for range n {
		readEntry(&skip, &e)
		if skip.Err() != nil {
			break
		}
	}
	compatAt := skip.Pos()
	for range n {
		if skip.Compatible() {
			skip.Bool()
		}
	}
	if err := skip.Finish(); err != nil {
		return failf(ErrMalformed, "Invalid snapshot object chunk: %v", err)
	}
	if index != expectIndex {
		return fail(ErrCount, "Snapshot object chunk index mismatch")
	}
	if uint64(n) != expectCount {
		return fail(ErrCount, "Snapshot object chunk count mismatch")
	}
	// The whole chunk is sound: read it again, objects and hard_pinned in
	// step (the pinned reader starts where the skip found them).
	if err := body.Open(chunkType, data, strs); err != nil {
		return failf(ErrMalformed, "Invalid snapshot object chunk: %v", err)
	}
	pinned := body
	body.U64()
	body.Length(minObjectBytes - 1)
	pinned.Seek(compatAt)
	for range n {
		readEntry(&body, &e)
		e.Metadata.HardPinned = PinnedUnset
		if pinned.Compatible() {
			e.Metadata.HardPinned = PinnedOf(pinned.Bool())
		}
		if err := visit(&e); err != nil {
			return err
		}
	}
	return nil
}
