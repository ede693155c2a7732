package batchsnap

import (
	"github.com/oplogha/oplogha/impl/contract/jsoncpp"
)

// ObjectRef names one stored object with its exact size and CRC32C
// (metadata.h BatchOpLogSnapshotObjectDescriptor): the manifest's segments.
type ObjectRef struct {
	Key        string
	StoredSize uint64
	CRC32C     uint32
}

// ChunkRef is one object chunk of the manifest (metadata.h
// BatchOpLogSnapshotChunkDescriptor): its index (its position), key, how
// many objects it holds, and its exact size and CRC32C.
type ChunkRef struct {
	ChunkIndex  uint64
	Key         string
	ObjectCount uint64
	StoredSize  uint64
	CRC32C      uint32
}

// Manifest is manifest.json (metadata.h BatchOpLogSnapshotManifest): the
// identity again, the segments object and the object chunks in order. The
// same writer as the descriptor; "object_chunks":[] is an empty cluster.
// Upstream checks neither the keys against the id, root or index, nor the
// sum of object counts; Check (used by Open) does.
type Manifest struct {
	Identity
	Segments     ObjectRef
	ObjectChunks []ChunkRef
}

// Objects is the number of objects the chunks hold.
func (m Manifest) Objects() uint64 {
	var n uint64
	for _, c := range m.ObjectChunks {
		n += c.ObjectCount
	}
	return n
}

// StoredSize is the bytes of segments and chunks together.
func (m Manifest) StoredSize() uint64 {
	n := m.Segments.StoredSize
	for _, c := range m.ObjectChunks {
		n += c.StoredSize
	}
	return n
}

// Validate applies upstream's decoder's checks to m.
func (m Manifest) Validate() error {
	if err := m.Identity.validate(); err != nil {
		return err
	}
	if m.Segments.Key == "" || m.Segments.StoredSize == 0 {
		return fail(ErrMalformed, "segments key and stored_size must be non-zero")
	}
	for i, c := range m.ObjectChunks {
		if c.ChunkIndex != uint64(i) {
			return fail(ErrMalformed, "object chunk indices must be contiguous from zero")
		}
		if c.Key == "" || c.ObjectCount == 0 || c.StoredSize == 0 {
			return fail(ErrMalformed, "object chunk key, object_count, and stored_size must be non-zero")
		}
	}
	return nil
}

// Encode writes m as upstream's EncodeBatchOpLogSnapshotManifest does,
// refusing what upstream's decoder would refuse.
func (m Manifest) Encode() ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return m.encode(), nil
}

func (m Manifest) encode() []byte {
	root := jsoncpp.Value{Kind: jsoncpp.Object}
	m.Identity.encode(&root)
	seg := jsoncpp.Value{Kind: jsoncpp.Object}
	seg.Set("key", str(m.Segments.Key))
	seg.Set("stored_size", u64(m.Segments.StoredSize))
	seg.Set("crc32c", u64(uint64(m.Segments.CRC32C)))
	root.Set("segments", seg)
	chunks := jsoncpp.Value{Kind: jsoncpp.Array, Arr: make([]jsoncpp.Value, 0, len(m.ObjectChunks))}
	for _, c := range m.ObjectChunks {
		v := jsoncpp.Value{Kind: jsoncpp.Object}
		v.Set("chunk_index", u64(c.ChunkIndex))
		v.Set("key", str(c.Key))
		v.Set("object_count", u64(c.ObjectCount))
		v.Set("stored_size", u64(c.StoredSize))
		v.Set("crc32c", u64(uint64(c.CRC32C)))
		chunks.Arr = append(chunks.Arr, v)
	}
	root.Set("object_chunks", chunks)
	return jsoncpp.Append(nil, &root)
}

// DecodeManifest is upstream's DecodeBatchOpLogSnapshotManifest: the same
// acceptance and reasons, in upstream's order. Failures are ErrMalformed
// or ErrVersion.
func DecodeManifest(data []byte) (Manifest, error) {
	root, err := parseObject(data)
	if err != nil {
		return Manifest{}, err
	}
	f := &fields{obj: &root}
	id, err := decodeIdentity(f)
	if err != nil {
		return Manifest{}, err
	}
	m := Manifest{Identity: id}
	segv, ok := root.Get("segments")
	if !ok {
		return Manifest{}, fail(ErrMalformed, "missing field: segments")
	}
	if segv.Kind != jsoncpp.Object {
		return Manifest{}, fail(ErrMalformed, "segments must be a JSON object")
	}
	sf := &fields{obj: segv}
	m.Segments = ObjectRef{Key: sf.str("key"), StoredSize: sf.u64("stored_size"), CRC32C: sf.u32("crc32c")}
	if sf.reason != "" {
		return Manifest{}, fail(ErrMalformed, sf.reason)
	}
	if m.Segments.Key == "" || m.Segments.StoredSize == 0 {
		return Manifest{}, fail(ErrMalformed, "segments key and stored_size must be non-zero")
	}
	chunks, ok := root.Get("object_chunks")
	if !ok || chunks.Kind != jsoncpp.Array {
		return Manifest{}, fail(ErrMalformed, "object_chunks must be a JSON array")
	}
	m.ObjectChunks = make([]ChunkRef, 0, len(chunks.Arr))
	for i := range chunks.Arr {
		cv := &chunks.Arr[i]
		if cv.Kind != jsoncpp.Object {
			return Manifest{}, fail(ErrMalformed, "object chunk must be a JSON object")
		}
		cf := &fields{obj: cv}
		c := ChunkRef{ChunkIndex: cf.u64("chunk_index"), Key: cf.str("key"), ObjectCount: cf.u64("object_count"),
			StoredSize: cf.u64("stored_size"), CRC32C: cf.u32("crc32c")}
		if cf.reason != "" {
			return Manifest{}, fail(ErrMalformed, cf.reason)
		}
		if c.ChunkIndex != uint64(i) {
			return Manifest{}, fail(ErrMalformed, "object chunk indices must be contiguous from zero")
		}
		if c.Key == "" || c.ObjectCount == 0 || c.StoredSize == 0 {
			return Manifest{}, fail(ErrMalformed, "object chunk key, object_count, and stored_size must be non-zero")
		}
		m.ObjectChunks = append(m.ObjectChunks, c)
	}
	return m, nil
}
