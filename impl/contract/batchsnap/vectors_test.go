package batchsnap

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/oplogha/oplogha/impl/contract"
	"github.com/oplogha/oplogha/impl/contract/internal/vectortest"
	"github.com/oplogha/oplogha/impl/contract/metadata"
)

// The vectors in testdata/upstream/snapshot were written and judged by
// upstream's own code (its README gives provenance and every field).

func read[T any](t testing.TB, file string) []T { return vectortest.Read[T](t, "snapshot/"+file) }

func vb64(t testing.TB, s string) []byte { return vectortest.B64(t, s) }

func TestControlKeyVectors(t *testing.T) {
	type row struct {
		Kind                               string
		ClusterID                          string `json:"cluster_id"`
		Maintenance, Latest, Fallback      string
		CompactionFloor                    string `json:"compaction_floor"`
		Valid                              bool
		SnapshotRoot                       string `json:"snapshot_root"`
		SnapshotID                         string `json:"snapshot_id"`
		Prefix, Descriptor, Manifest, Segs string
		Segments                           string
		ObjectChunks                       []struct {
			ChunkIndex uint64 `json:"chunk_index"`
			Key        string
		} `json:"object_chunks"`
	}
	n := 0
	for _, v := range read[row](t, "keys.jsonl") {
		switch v.Kind {
		case "control":
			got := [4]string{MaintenanceKey(v.ClusterID), LatestKey(v.ClusterID), FallbackKey(v.ClusterID), CompactionFloorKey(v.ClusterID)}
			want := [4]string{v.Maintenance, v.Latest, v.Fallback, v.CompactionFloor}
			if got != want {
				t.Errorf("control keys of %q: %q, want %q", v.ClusterID, got, want)
			}
		case "artifact":
			a := Artifacts(v.SnapshotRoot, v.SnapshotID)
			got := []string{ArtifactPrefix(v.SnapshotRoot, v.SnapshotID), a.Prefix(), a.Descriptor(), a.Manifest(), a.Segments()}
			want := []string{v.Prefix, v.Prefix, v.Descriptor, v.Manifest, v.Segments}
			for _, c := range v.ObjectChunks {
				got = append(got, a.ObjectChunk(c.ChunkIndex))
				want = append(want, c.Key)
			}
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("artifact keys of %q %q:\n got %q\nwant %q", v.SnapshotRoot, v.SnapshotID, got, want)
			}
			if v.Valid {
				root, id, ok := ParseDescriptorKey(v.Descriptor)
				if !ok || id.String() != v.SnapshotID || Artifacts(root, v.SnapshotID).Descriptor() != v.Descriptor {
					t.Errorf("ParseDescriptorKey(%q) = %q %v %v", v.Descriptor, root, id, ok)
				}
				// Every object of the snapshot parses back to its root and id.
				for _, key := range want[2:] {
					r, id, name, ok := ParseArtifactKey(key)
					if !ok || id.String() != v.SnapshotID || Artifacts(r, v.SnapshotID).Prefix()+name != key {
						t.Errorf("ParseArtifactKey(%q) = %q %v %q %v", key, r, id, name, ok)
					}
				}
			}
			for _, bad := range []string{v.Prefix, strings.TrimSuffix(v.Prefix, "/"), "other/" + v.SnapshotID + "/descriptor.json"} {
				if _, _, _, ok := ParseArtifactKey(bad); ok {
					t.Errorf("ParseArtifactKey(%q) parsed a key that names no object of a snapshot", bad)
				}
			}
		default:
			t.Fatalf("kind %q", v.Kind)
		}
		n++
	}
	t.Logf("%d key vectors", n)
}

func TestSnapshotIDVectors(t *testing.T) {
	type row struct {
		Op          string
		BatchID     uint64  `json:"batch_id"`
		Lease       int64   `json:"maintenance_lease_id"`
		SnapshotID  string  `json:"snapshot_id"`
		SnapshotB64 *string `json:"snapshot_id_b64"`
		Accepted    bool
	}
	for _, v := range read[row](t, "snapshot-ids.jsonl") {
		switch v.Op {
		case "build":
			if got := BuildID(v.BatchID, v.Lease); got != v.SnapshotID {
				t.Errorf("BuildID(%d, %d) = %q, want %q", v.BatchID, v.Lease, got, v.SnapshotID)
			}
		case "parse":
			s := vectortest.String(t, &v.SnapshotID, v.SnapshotB64)
			id, err := ParseID(s)
			if v.Accepted != (err == nil) {
				t.Errorf("ParseID(%q): %v, upstream accepted=%v", s, err, v.Accepted)
				continue
			}
			if err != nil {
				if !errors.Is(err, contract.ErrSnapshotID) {
					t.Errorf("ParseID(%q): %v is not ErrSnapshotID", s, err)
				}
				continue
			}
			if id.BatchID != v.BatchID || id.Lease != v.Lease || id.String() != s {
				t.Errorf("ParseID(%q) = %+v", s, id)
			}
		}
	}
}

func TestCRC32CVectors(t *testing.T) {
	type row struct {
		Name     string
		BytesB64 string `json:"bytes_b64"`
		CRC32C   uint32 `json:"crc32c"`
	}
	for _, v := range read[row](t, "crc32c.jsonl") {
		data := vb64(t, v.BytesB64)
		if got := CRC32C(data); got != v.CRC32C {
			t.Errorf("%s: CRC32C %08x, want %08x", v.Name, got, v.CRC32C)
		}
		h := NewCRC32C()
		for i := range data { // byte at a time: the running form agrees
			h.Write(data[i : i+1])
		}
		if h.Sum32() != v.CRC32C {
			t.Errorf("%s: running CRC32C %08x", v.Name, h.Sum32())
		}
	}
}

// descriptorJSON is a descriptor as the vectors write it.
type descriptorJSON struct {
	CreatedAtMS         int64  `json:"created_at_ms"`
	LastIncludedBatchID uint64 `json:"last_included_batch_id"`
	LastIncludedSeq     uint64 `json:"last_included_seq"`
	ManifestCRC32C      uint32 `json:"manifest_crc32c"`
	ManifestKey         string `json:"manifest_key"`
	ManifestSize        uint64 `json:"manifest_size"`
	ProducerViewVersion int64  `json:"producer_view_version"`
	SchemaVersion       uint32 `json:"schema_version"`
	SnapshotFormat      string `json:"snapshot_format"`
	SnapshotID          string `json:"snapshot_id"`
}

func (j descriptorJSON) descriptor() Descriptor {
	return Descriptor{Identity: Identity{SchemaVersion: j.SchemaVersion, SnapshotFormat: j.SnapshotFormat, SnapshotID: j.SnapshotID,
		LastIncludedSeq: j.LastIncludedSeq, LastIncludedBatchID: j.LastIncludedBatchID, ProducerViewVersion: j.ProducerViewVersion},
		ManifestKey: j.ManifestKey, ManifestSize: j.ManifestSize, ManifestCRC32C: j.ManifestCRC32C, CreatedAtMS: j.CreatedAtMS}
}

type objectRefJSON struct {
	CRC32C     uint32 `json:"crc32c"`
	Key        string `json:"key"`
	StoredSize uint64 `json:"stored_size"`
}

type manifestJSON struct {
	LastIncludedBatchID uint64        `json:"last_included_batch_id"`
	LastIncludedSeq     uint64        `json:"last_included_seq"`
	ProducerViewVersion int64         `json:"producer_view_version"`
	SchemaVersion       uint32        `json:"schema_version"`
	SnapshotFormat      string        `json:"snapshot_format"`
	SnapshotID          string        `json:"snapshot_id"`
	Segments            objectRefJSON `json:"segments"`
	ObjectChunks        []struct {
		ChunkIndex  uint64 `json:"chunk_index"`
		CRC32C      uint32 `json:"crc32c"`
		Key         string `json:"key"`
		ObjectCount uint64 `json:"object_count"`
		StoredSize  uint64 `json:"stored_size"`
	} `json:"object_chunks"`
}

func (j manifestJSON) manifest() Manifest {
	m := Manifest{Identity: Identity{SchemaVersion: j.SchemaVersion, SnapshotFormat: j.SnapshotFormat, SnapshotID: j.SnapshotID,
		LastIncludedSeq: j.LastIncludedSeq, LastIncludedBatchID: j.LastIncludedBatchID, ProducerViewVersion: j.ProducerViewVersion},
		Segments:     ObjectRef{Key: j.Segments.Key, StoredSize: j.Segments.StoredSize, CRC32C: j.Segments.CRC32C},
		ObjectChunks: []ChunkRef{}}
	for _, c := range j.ObjectChunks {
		m.ObjectChunks = append(m.ObjectChunks, ChunkRef{ChunkIndex: c.ChunkIndex, Key: c.Key, ObjectCount: c.ObjectCount, StoredSize: c.StoredSize, CRC32C: c.CRC32C})
	}
	return m
}

type metadataVector[T any] struct {
	Name     string
	Input    T
	ValueB64 string `json:"value_b64"`
	Size     int
	CRC32C   uint32 `json:"crc32c"`
}

func TestDescriptorVectors(t *testing.T) {
	for _, v := range read[metadataVector[descriptorJSON]](t, "descriptors.jsonl") {
		want := vb64(t, v.ValueB64)
		d := v.Input.descriptor()
		got, err := d.Encode()
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: encode %v\n got %s\nwant %s", v.Name, err, got, want)
		}
		if len(want) != v.Size || CRC32C(want) != v.CRC32C {
			t.Errorf("%s: size %d crc %08x, vector says %d %08x", v.Name, len(want), CRC32C(want), v.Size, v.CRC32C)
		}
		back, err := DecodeDescriptor(want)
		if err != nil || back != d {
			t.Errorf("%s: decode %+v %v", v.Name, back, err)
		}
	}
}

func TestManifestVectors(t *testing.T) {
	for _, v := range read[metadataVector[manifestJSON]](t, "manifests.jsonl") {
		want := vb64(t, v.ValueB64)
		m := v.Input.manifest()
		got, err := m.Encode()
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: encode %v\n got %s\nwant %s", v.Name, err, got, want)
		}
		if len(want) != v.Size || CRC32C(want) != v.CRC32C {
			t.Errorf("%s: size %d crc %08x, vector says %d %08x", v.Name, len(want), CRC32C(want), v.Size, v.CRC32C)
		}
		back, err := DecodeManifest(want)
		if err != nil || !sameManifest(back, m) {
			t.Errorf("%s: decode %+v %v", v.Name, back, err)
		}
	}
}

func sameManifest(a, b Manifest) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

type badMetadata struct {
	Name     string
	Value    *string
	ValueB64 *string `json:"value_b64"`
	Error    string
	Note     string
}

// TestBadMetadataVectors: every value upstream's decoders refuse is
// refused here with upstream's reason, jsoncpp's parse errors verbatim; an
// invalid value upstream's encoder writes is refused by Encode too.
func TestBadMetadataVectors(t *testing.T) {
	for _, c := range []struct {
		file   string
		decode func([]byte) error
	}{
		{"bad-descriptors.jsonl", func(b []byte) error { _, err := DecodeDescriptor(b); return err }},
		{"bad-manifests.jsonl", func(b []byte) error { _, err := DecodeManifest(b); return err }},
	} {
		n := 0
		for _, v := range read[badMetadata](t, c.file) {
			data := []byte(vectortest.String(t, v.Value, v.ValueB64))
			err := c.decode(data)
			var ce *contract.Error
			switch {
			case err == nil:
				t.Errorf("%s %s: accepted", c.file, v.Name)
			case !errors.As(err, &ce):
				t.Errorf("%s %s: %v is not a *contract.Error", c.file, v.Name, err)
			case ce.Reason != v.Error:
				t.Errorf("%s %s: reason\n%q\nupstream says\n%q", c.file, v.Name, ce.Reason, v.Error)
			case !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrVersion):
				t.Errorf("%s %s: %v is neither ErrMalformed nor ErrVersion", c.file, v.Name, err)
			}
			n++
		}
		t.Logf("%s: %d refused as upstream refuses them", c.file, n)
	}
}

// TestLenientMetadataVectors: what upstream's decoders accept beyond what
// its encoders write decodes here to the same values, and re-encodes to
// upstream's canonical bytes.
func TestLenientMetadataVectors(t *testing.T) {
	type row struct {
		Name              string
		Type              string
		Value             *string
		ValueB64          *string         `json:"value_b64"`
		Decoded           json.RawMessage `json:"decoded"`
		CanonicalValueB64 string          `json:"canonical_value_b64"`
	}
	for _, v := range read[row](t, "lenient-metadata.jsonl") {
		data := []byte(vectortest.String(t, v.Value, v.ValueB64))
		var got []byte
		switch v.Type {
		case "descriptor":
			d, err := DecodeDescriptor(data)
			if err != nil {
				t.Errorf("%s: %v", v.Name, err)
				continue
			}
			var want descriptorJSON
			json.Unmarshal(v.Decoded, &want)
			if d != want.descriptor() {
				t.Errorf("%s: decoded %+v, upstream %+v", v.Name, d, want.descriptor())
			}
			got = d.encode()
		case "manifest":
			m, err := DecodeManifest(data)
			if err != nil {
				t.Errorf("%s: %v", v.Name, err)
				continue
			}
			var want manifestJSON
			json.Unmarshal(v.Decoded, &want)
			if !sameManifest(m, want.manifest()) {
				t.Errorf("%s: decoded %+v, upstream %+v", v.Name, m, want.manifest())
			}
			got = m.encode()
		default:
			t.Fatalf("%s: type %q", v.Name, v.Type)
		}
		if want := vb64(t, v.CanonicalValueB64); !bytes.Equal(got, want) {
			t.Errorf("%s: re-encoded %s, upstream %s", v.Name, got, want)
		}
	}
}

// bufferJSON, variantJSON, objectJSON: an object chunk's objects as the
// vectors write them (strings also as *_b64, which is authoritative).
type bufferJSON struct {
	Size        uint64  `json:"size_"`
	Address     uint64  `json:"buffer_address_"`
	Protocol    string  `json:"protocol_"`
	ProtocolB64 *string `json:"protocol__b64"`
	Endpoint    string  `json:"transport_endpoint_"`
	EndpointB64 *string `json:"transport_endpoint__b64"`
}

type variantJSON struct {
	Index       uint8      `json:"index"`
	Buffer      bufferJSON `json:"buffer_descriptor"`
	FilePath    string     `json:"file_path"`
	FilePathB64 *string    `json:"file_path_b64"`
	ObjectSize  uint64     `json:"object_size"`
	ClientID    [2]uint64  `json:"client_id"`
	Endpoint    string     `json:"transport_endpoint"`
	EndpointB64 *string    `json:"transport_endpoint_b64"`
	Offset      uint64     `json:"offset"`
	AlignedSize uint64     `json:"aligned_size"`
	ShardIdx    int32      `json:"shard_idx"`
}

type objectJSON struct {
	TenantID    string  `json:"tenant_id"`
	TenantIDB64 *string `json:"tenant_id_b64"`
	Key         string  `json:"key"`
	KeyB64      *string `json:"key_b64"`
	Metadata    struct {
		ClientID   [2]uint64 `json:"client_id"`
		Size       uint64    `json:"size"`
		GroupID    string    `json:"group_id"`
		GroupIDB64 *string   `json:"group_id_b64"`
		DataType   uint8     `json:"data_type"`
		HardPinned *bool     `json:"hard_pinned"`
		Replicas   []struct {
			ID      uint64      `json:"id"`
			Status  int32       `json:"status"`
			Variant variantJSON `json:"descriptor_variant"`
		} `json:"replicas"`
	} `json:"metadata"`
}

func (j objectJSON) entry(t testing.TB) ObjectEntry {
	s := func(plain string, b *string) string { return vectortest.String(t, &plain, b) }
	e := ObjectEntry{TenantID: s(j.TenantID, j.TenantIDB64), Key: s(j.Key, j.KeyB64)}
	m := &e.Metadata
	m.ClientID = metadata.UUID{First: j.Metadata.ClientID[0], Second: j.Metadata.ClientID[1]}
	m.Size = j.Metadata.Size
	m.GroupID = s(j.Metadata.GroupID, j.Metadata.GroupIDB64)
	m.DataType = metadata.ObjectDataType(j.Metadata.DataType)
	if j.Metadata.HardPinned != nil {
		m.HardPinned = PinnedOf(*j.Metadata.HardPinned)
	}
	for _, r := range j.Metadata.Replicas {
		v := r.Variant
		f := metadata.ReplicaFields{ID: r.ID, Index: v.Index, Status: metadata.ReplicaStatus(r.Status)}
		switch v.Index {
		case 0, 1:
			f.Buffer = metadata.BufferDescriptor{Size: v.Buffer.Size, BufferAddress: v.Buffer.Address,
				Protocol: s(v.Buffer.Protocol, v.Buffer.ProtocolB64), TransportEndpoint: s(v.Buffer.Endpoint, v.Buffer.EndpointB64)}
		case 2:
			f.Disk = metadata.DiskDescriptor{FilePath: s(v.FilePath, v.FilePathB64), ObjectSize: v.ObjectSize}
		case 3:
			f.LocalDisk = metadata.LocalDiskDescriptor{ClientID: metadata.UUID{First: v.ClientID[0], Second: v.ClientID[1]},
				ObjectSize: v.ObjectSize, TransportEndpoint: s(v.Endpoint, v.EndpointB64)}
		case 4:
			f.DistributedFS = metadata.DistributedFSDescriptor{FilePath: s(v.FilePath, v.FilePathB64), Offset: v.Offset,
				ObjectSize: v.ObjectSize, AlignedSize: v.AlignedSize, ShardIdx: v.ShardIdx}
		}
		m.Replicas = append(m.Replicas, f)
	}
	return e
}

type binaryVector struct {
	Name                  string
	BytesB64              string `json:"bytes_b64"`
	BytesB64TypeLiteral   string `json:"bytes_b64_type_literal"`
	StoredSize            int    `json:"stored_size"`
	StoredSizeTypeLiteral int    `json:"stored_size_type_literal"`
	CRC32C                uint32 `json:"crc32c"`
	CRC32CTypeLiteral     uint32 `json:"crc32c_type_literal"`
	// segments.jsonl
	Segments []struct {
		SegmentName       string  `json:"segment_name"`
		SegmentNameB64    *string `json:"segment_name_b64"`
		TransportEndpoint string  `json:"transport_endpoint"`
		EndpointB64       *string `json:"transport_endpoint_b64"`
		Capacity          uint64  `json:"capacity"`
		IsMemorySegment   bool    `json:"is_memory_segment"`
		FilePath          string  `json:"file_path"`
		FilePathB64       *string `json:"file_path_b64"`
	} `json:"segments"`
	// object-chunks.jsonl
	ChunkIndex  uint64       `json:"chunk_index"`
	ObjectCount uint64       `json:"object_count"`
	Objects     []objectJSON `json:"objects"`
}

func (v *binaryVector) segments(t testing.TB) []SegmentInfo {
	out := []SegmentInfo{}
	for _, s := range v.Segments {
		out = append(out, SegmentInfo{SegmentName: vectortest.String(t, &s.SegmentName, s.SegmentNameB64),
			TransportEndpoint: vectortest.String(t, &s.TransportEndpoint, s.EndpointB64), Capacity: s.Capacity,
			IsMemorySegment: s.IsMemorySegment, FilePath: vectortest.String(t, &s.FilePath, s.FilePathB64)})
	}
	return out
}

func (v *binaryVector) chunk(t testing.TB) ObjectChunk {
	c := ObjectChunk{ChunkIndex: v.ChunkIndex, Objects: []ObjectEntry{}}
	for _, o := range v.Objects {
		c.Objects = append(c.Objects, o.entry(t))
	}
	return c
}

// variants runs f on the NDEBUG bytes and on the type-literal bytes.
func (v *binaryVector) variants(t *testing.T, f func(t *testing.T, literal bool, data []byte, size int, crc uint32)) {
	t.Run(v.Name+"/ndebug", func(t *testing.T) { f(t, false, vb64(t, v.BytesB64), v.StoredSize, v.CRC32C) })
	t.Run(v.Name+"/type_literal", func(t *testing.T) {
		f(t, true, vb64(t, v.BytesB64TypeLiteral), v.StoredSizeTypeLiteral, v.CRC32CTypeLiteral)
	})
}

func TestSegmentsVectors(t *testing.T) {
	for _, v := range read[binaryVector](t, "segments.jsonl") {
		want := v.segments(t)
		v.variants(t, func(t *testing.T, literal bool, data []byte, size int, crc uint32) {
			if len(data) != size || CRC32C(data) != crc {
				t.Fatalf("vector size %d crc %08x, says %d %08x", len(data), CRC32C(data), size, crc)
			}
			enc := EncodeSegments(want)
			if literal {
				enc = EncodeSegmentsTypeLiteral(want)
			}
			if !bytes.Equal(enc, data) {
				t.Errorf("encoded\n%x\nupstream\n%x", enc, data)
			}
			got, err := DecodeSegments(data)
			if err != nil || !equalJSON(got, want) {
				t.Errorf("decoded %+v %v, want %+v", got, err, want)
			}
		})
	}
}

func TestObjectChunkVectors(t *testing.T) {
	vs := append(read[binaryVector](t, "object-chunks.jsonl"), read[binaryVector](t, "object-chunks-large.jsonl")...)
	for _, v := range vs {
		want := v.chunk(t)
		if uint64(len(want.Objects)) != v.ObjectCount {
			t.Fatalf("%s: %d objects, vector says %d", v.Name, len(want.Objects), v.ObjectCount)
		}
		v.variants(t, func(t *testing.T, literal bool, data []byte, size int, crc uint32) {
			if len(data) != size || CRC32C(data) != crc {
				t.Fatalf("vector size %d crc %08x, says %d %08x", len(data), CRC32C(data), size, crc)
			}
			enc, err := EncodeObjectChunk(want)
			if literal {
				enc, err = EncodeObjectChunkTypeLiteral(want)
			}
			if err != nil || !bytes.Equal(enc, data) {
				t.Errorf("encoded %v\n%x\nupstream\n%x", err, enc, data)
			}
			got, err := DecodeObjectChunk(data, v.ChunkIndex, v.ObjectCount)
			if err != nil || !equalJSON(got, want) {
				t.Errorf("decoded %v\n%+v\nwant\n%+v", err, got, want)
			}
		})
	}
}

func equalJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

// refusedWhereUpstreamAccepts are the bad-chunks.jsonl cases upstream's
// decoders accept and this package refuses (README, deliberate
// differences): bytes after the value, and a chunk cut inside its last
// hard_pinned value. A reader that holds each object to its manifest size
// and CRC32C first never meets them.
var refusedWhereUpstreamAccepts = map[string]bool{
	"trailing_byte": true, "seg_trailing_byte": true, "truncated_1_hard_pinned_true": true,
}

func TestBadChunkVectors(t *testing.T) {
	type row struct {
		Name                string
		Artifact            string
		BytesB64            string `json:"bytes_b64"`
		BytesB64TypeLiteral string `json:"bytes_b64_type_literal"`
		ExpectIndex         uint64 `json:"expected_chunk_index"`
		ExpectCount         uint64 `json:"expected_object_count"`
		Accepted            bool
		Error               string
		DecodedIndex        uint64       `json:"decoded_chunk_index"`
		DecodedObjects      []objectJSON `json:"decoded_objects"`
	}
	for _, v := range read[row](t, "bad-chunks.jsonl") {
		for _, data := range [][]byte{vb64(t, v.BytesB64), vb64(t, v.BytesB64TypeLiteral)} {
			var err error
			var got any
			switch v.Artifact {
			case "segments":
				got, err = DecodeSegments(data)
			case "object_chunk":
				var c ObjectChunk
				c, err = DecodeObjectChunk(data, v.ExpectIndex, v.ExpectCount)
				got = c
			default:
				t.Fatalf("%s: artifact %q", v.Name, v.Artifact)
			}
			switch {
			case refusedWhereUpstreamAccepts[v.Name]:
				if !v.Accepted || err == nil || !errors.Is(err, ErrMalformed) {
					t.Errorf("%s: upstream accepted=%v; here %v (want a refusal)", v.Name, v.Accepted, err)
				}
			case v.Accepted:
				if err != nil {
					t.Errorf("%s: %v", v.Name, err)
					continue
				}
				if v.Artifact == "object_chunk" {
					want := ObjectChunk{ChunkIndex: v.DecodedIndex, Objects: []ObjectEntry{}}
					for _, o := range v.DecodedObjects {
						want.Objects = append(want.Objects, o.entry(t))
					}
					if !equalJSON(got, want) {
						t.Errorf("%s: decoded %+v, upstream %+v", v.Name, got, want)
					}
				}
			default:
				var ce *contract.Error
				if err == nil || !errors.As(err, &ce) {
					t.Errorf("%s: %v, upstream refused: %s", v.Name, err, v.Error)
					continue
				}
				if ce.Reason != v.Error && !strings.HasPrefix(ce.Reason, v.Error+": ") {
					t.Errorf("%s: reason %q, upstream %q", v.Name, ce.Reason, v.Error)
				}
			}
		}
	}
}
