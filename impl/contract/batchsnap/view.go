package batchsnap

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"

	"github.com/oplogha/oplogha/impl/contract"
	"github.com/oplogha/oplogha/impl/contract/metadata"
)

// View is a snapshot as an operator reads it: its identity, its
// descriptor and manifest, every stored object with its size and checksums,
// and the decoded segments and objects, in the shape of the golden vectors'
// directory/expected.json (strings that may not be UTF-8 also as *_b64).
// Inspect builds one.
type View struct {
	SnapshotRoot       string `json:"snapshot_root"`
	SnapshotID         string `json:"snapshot_id"`
	MaintenanceLeaseID int64  `json:"maintenance_lease_id"`
	CreatedAtMS        int64  `json:"created_at_ms"`
	// ChunkObjectCount is the writer's object count per chunk as far as
	// the snapshot shows it: chunk 0's (every chunk but the last holds
	// exactly that many; with one chunk it is a lower bound).
	ChunkObjectCount uint64              `json:"chunk_object_count"`
	Capture          CaptureView         `json:"capture"`
	Descriptor       DescriptorView      `json:"descriptor"`
	Manifest         ManifestView        `json:"manifest"`
	Files            map[string]FileView `json:"files"`
	Segments         []SegmentView       `json:"segments"`
	ObjectChunks     []ChunkView         `json:"object_chunks"`
}

// CaptureView is the cursor and view the snapshot was captured at.
type CaptureView struct {
	LastIncludedBatchID uint64 `json:"last_included_batch_id"`
	LastIncludedSeq     uint64 `json:"last_included_seq"`
	ProducerViewVersion int64  `json:"producer_view_version"`
}

// DescriptorView is descriptor.json's members.
type DescriptorView struct {
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

// ObjectRefView is the manifest's segments member.
type ObjectRefView struct {
	CRC32C     uint32 `json:"crc32c"`
	Key        string `json:"key"`
	StoredSize uint64 `json:"stored_size"`
}

// ChunkRefView is one element of the manifest's object_chunks.
type ChunkRefView struct {
	ChunkIndex  uint64 `json:"chunk_index"`
	CRC32C      uint32 `json:"crc32c"`
	Key         string `json:"key"`
	ObjectCount uint64 `json:"object_count"`
	StoredSize  uint64 `json:"stored_size"`
}

// ManifestView is manifest.json's members.
type ManifestView struct {
	LastIncludedBatchID uint64         `json:"last_included_batch_id"`
	LastIncludedSeq     uint64         `json:"last_included_seq"`
	ObjectChunks        []ChunkRefView `json:"object_chunks"`
	ProducerViewVersion int64          `json:"producer_view_version"`
	SchemaVersion       uint32         `json:"schema_version"`
	Segments            ObjectRefView  `json:"segments"`
	SnapshotFormat      string         `json:"snapshot_format"`
	SnapshotID          string         `json:"snapshot_id"`
}

// FileView is one stored object's size and checksums.
type FileView struct {
	Size      uint64 `json:"size"`
	CRC32C    uint32 `json:"crc32c"`
	CRC32CHex string `json:"crc32c_hex"`
	SHA256    string `json:"sha256"`
}

// SegmentView is one segment.
type SegmentView struct {
	Capacity             uint64 `json:"capacity"`
	FilePath             string `json:"file_path"`
	FilePathB64          string `json:"file_path_b64"`
	IsMemorySegment      bool   `json:"is_memory_segment"`
	SegmentName          string `json:"segment_name"`
	SegmentNameB64       string `json:"segment_name_b64"`
	TransportEndpoint    string `json:"transport_endpoint"`
	TransportEndpointB64 string `json:"transport_endpoint_b64"`
}

// ChunkView is one object chunk, decoded.
type ChunkView struct {
	ChunkIndex uint64       `json:"chunk_index"`
	Key        string       `json:"key"`
	Objects    []ObjectView `json:"objects"`
}

// ObjectView is one StandbyObjectEntry.
type ObjectView struct {
	Key         string       `json:"key"`
	KeyB64      string       `json:"key_b64"`
	Metadata    MetadataView `json:"metadata"`
	TenantID    string       `json:"tenant_id"`
	TenantIDB64 string       `json:"tenant_id_b64"`
}

// MetadataView is one StandbyObjectMetadata; HardPinned is null when unset.
type MetadataView struct {
	ClientID   [2]uint64     `json:"client_id"`
	DataType   uint8         `json:"data_type"`
	GroupID    string        `json:"group_id"`
	GroupIDB64 string        `json:"group_id_b64"`
	HardPinned *bool         `json:"hard_pinned"`
	Replicas   []ReplicaView `json:"replicas"`
	Size       uint64        `json:"size"`
}

// ReplicaView is one Replica::Descriptor.
type ReplicaView struct {
	Variant    map[string]any `json:"descriptor_variant"`
	ID         uint64         `json:"id"`
	Status     int32          `json:"status"`
	StatusName string         `json:"status_name"`
}

// statusNames are upstream's ReplicaStatus enumerators.
var statusNames = []string{"UNDEFINED", "INITIALIZED", "PROCESSING", "COMPLETE", "REMOVED", "FAILED"}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func replicaView(f *metadata.ReplicaFields) ReplicaView {
	r := ReplicaView{ID: f.ID, Status: int32(f.Status), StatusName: fmt.Sprintf("UNKNOWN(%d)", f.Status)}
	if f.Status >= 0 && int(f.Status) < len(statusNames) {
		r.StatusName = statusNames[f.Status]
	}
	v := map[string]any{"index": f.Index}
	switch f.Index {
	case 0, 1:
		v["type"] = map[uint8]string{0: "MemoryDescriptor", 1: "NoFDescriptor"}[f.Index]
		b := f.Buffer
		v["buffer_descriptor"] = map[string]any{"buffer_address_": b.BufferAddress, "size_": b.Size, "protocol_": b.Protocol,
			"protocol__b64": b64(b.Protocol), "transport_endpoint_": b.TransportEndpoint, "transport_endpoint__b64": b64(b.TransportEndpoint)}
	case 2:
		v["type"], v["file_path"], v["file_path_b64"], v["object_size"] = "DiskDescriptor", f.Disk.FilePath, b64(f.Disk.FilePath), f.Disk.ObjectSize
	case 3:
		d := f.LocalDisk
		v["type"], v["client_id"], v["object_size"] = "LocalDiskDescriptor", [2]uint64{d.ClientID.First, d.ClientID.Second}, d.ObjectSize
		v["transport_endpoint"], v["transport_endpoint_b64"] = d.TransportEndpoint, b64(d.TransportEndpoint)
	case 4:
		d := f.DistributedFS
		v["type"], v["file_path"], v["file_path_b64"] = "DistributedFSDescriptor", d.FilePath, b64(d.FilePath)
		v["offset"], v["object_size"], v["aligned_size"], v["shard_idx"] = d.Offset, d.ObjectSize, d.AlignedSize, d.ShardIdx
	}
	r.Variant = v
	return r
}

// ObjectViewOf is e as the view shows it.
func ObjectViewOf(e *ObjectEntry) ObjectView {
	m := &e.Metadata
	mv := MetadataView{ClientID: [2]uint64{m.ClientID.First, m.ClientID.Second}, DataType: uint8(m.DataType), GroupID: m.GroupID,
		GroupIDB64: b64(m.GroupID), Size: m.Size, Replicas: []ReplicaView{}}
	if m.HardPinned != PinnedUnset {
		b := m.HardPinned == PinnedTrue
		mv.HardPinned = &b
	}
	for i := range m.Replicas {
		mv.Replicas = append(mv.Replicas, replicaView(&m.Replicas[i]))
	}
	return ObjectView{Key: e.Key, KeyB64: b64(e.Key), TenantID: e.TenantID, TenantIDB64: b64(e.TenantID), Metadata: mv}
}

// SegmentViewOf is s as the view shows it.
func SegmentViewOf(s SegmentInfo) SegmentView {
	return SegmentView{Capacity: s.Capacity, FilePath: s.FilePath, FilePathB64: b64(s.FilePath), IsMemorySegment: s.IsMemorySegment,
		SegmentName: s.SegmentName, SegmentNameB64: b64(s.SegmentName), TransportEndpoint: s.TransportEndpoint,
		TransportEndpointB64: b64(s.TransportEndpoint)}
}

func fileView(data []byte) FileView {
	crc := CRC32C(data)
	sum := sha256.Sum256(data)
	return FileView{Size: uint64(len(data)), CRC32C: crc, CRC32CHex: fmt.Sprintf("%08x", crc), SHA256: hex.EncodeToString(sum[:])}
}

// Inspect reads the whole snapshot h heads, as ReadContent reads it (every
// object held to its size and CRC32C before it is decoded), and returns
// its View. progress, when set, is told each object read.
func Inspect(ctx context.Context, g contract.ObjectGetter, h *Head, progress func(key string, objects uint64)) (*View, error) {
	d, m := h.Descriptor, h.Manifest
	id := d.ID()
	v := &View{SnapshotRoot: h.Root, SnapshotID: d.SnapshotID, MaintenanceLeaseID: id.Lease, CreatedAtMS: d.CreatedAtMS,
		Capture: CaptureView{LastIncludedBatchID: d.LastIncludedBatchID, LastIncludedSeq: d.LastIncludedSeq, ProducerViewVersion: d.ProducerViewVersion},
		Descriptor: DescriptorView{CreatedAtMS: d.CreatedAtMS, LastIncludedBatchID: d.LastIncludedBatchID, LastIncludedSeq: d.LastIncludedSeq,
			ManifestCRC32C: d.ManifestCRC32C, ManifestKey: d.ManifestKey, ManifestSize: d.ManifestSize, ProducerViewVersion: d.ProducerViewVersion,
			SchemaVersion: d.SchemaVersion, SnapshotFormat: d.SnapshotFormat, SnapshotID: d.SnapshotID},
		Manifest: ManifestView{LastIncludedBatchID: m.LastIncludedBatchID, LastIncludedSeq: m.LastIncludedSeq, ProducerViewVersion: m.ProducerViewVersion,
			SchemaVersion: m.SchemaVersion, SnapshotFormat: m.SnapshotFormat, SnapshotID: m.SnapshotID, ObjectChunks: []ChunkRefView{},
			Segments: ObjectRefView{CRC32C: m.Segments.CRC32C, Key: m.Segments.Key, StoredSize: m.Segments.StoredSize}},
		Files:        map[string]FileView{h.Keys.Descriptor(): fileView(h.DescriptorRaw), d.ManifestKey: fileView(h.ManifestRaw)},
		Segments:     []SegmentView{},
		ObjectChunks: []ChunkView{},
	}
	for _, c := range m.ObjectChunks {
		v.Manifest.ObjectChunks = append(v.Manifest.ObjectChunks, ChunkRefView{ChunkIndex: c.ChunkIndex, CRC32C: c.CRC32C, Key: c.Key,
			ObjectCount: c.ObjectCount, StoredSize: c.StoredSize})
	}
	if len(m.ObjectChunks) > 0 {
		v.ChunkObjectCount = m.ObjectChunks[0].ObjectCount
	}
	var objects uint64
	err := h.ReadContent(ctx, g, Visitor{
		Stored: func(key string, data []byte) { v.Files[key] = fileView(data) },
		Segments: func(segs []SegmentInfo) error {
			for _, s := range segs {
				v.Segments = append(v.Segments, SegmentViewOf(s))
			}
			return nil
		},
		Chunk: func(c *ObjectChunk) error {
			cv := ChunkView{ChunkIndex: c.ChunkIndex, Key: h.Keys.ObjectChunk(c.ChunkIndex), Objects: make([]ObjectView, 0, len(c.Objects))}
			for i := range c.Objects {
				cv.Objects = append(cv.Objects, ObjectViewOf(&c.Objects[i]))
			}
			v.ObjectChunks = append(v.ObjectChunks, cv)
			objects += uint64(len(c.Objects))
			if progress != nil {
				progress(cv.Key, objects)
			}
			return nil
		},
	})
	return v, err
}
