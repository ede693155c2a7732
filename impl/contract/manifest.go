package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
)

// ManifestSchemaVersion is the manifest's schema_version.
const ManifestSchemaVersion = 1

// MaxChunkObjects bounds the objects of one chunk record, and so a
// manifest's chunk_objects.
const MaxChunkObjects = 1 << 26

// ManifestEntry is one stored object of the payload.
type ManifestEntry struct {
	Key      string   `json:"key"` // relative to the snapshot's object prefix
	Objects  uint64   `json:"objects"`
	Size     int64    `json:"size"`
	Checksum Checksum `json:"checksum"` // full-object CRC64NVME
}

// Manifest is the object ManifestObject under a snapshot's object prefix
// (the descriptor's manifest_key): it lists the payload objects in stream
// order, each with its size and full-object checksum, and repeats the
// snapshot's identity (RFC "Object Layout and Immutability"; the record is
// the project's). Indented JSON, the members in this order, as Encode
// writes it.
type Manifest struct {
	SchemaVersion       int             `json:"schema_version"`
	SnapshotID          string          `json:"snapshot_id"`
	LastIncludedSeq     uint64          `json:"last_included_seq"`
	LastIncludedBatchID uint64          `json:"last_included_batch_id"`
	ProducerViewVersion uint64          `json:"producer_view_version"`
	PayloadChecksum     Checksum        `json:"payload_checksum"`
	PayloadSize         int64           `json:"payload_size"`
	UncompressedSize    uint64          `json:"uncompressed_size"`
	ObjectCount         uint64          `json:"object_count"`
	ChunkObjects        int             `json:"chunk_objects"`
	Segments            ManifestEntry   `json:"segments"`
	Chunks              []ManifestEntry `json:"chunks"`
}

// Encode renders a valid manifest.
func (m Manifest) Encode() ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return json.MarshalIndent(m, "", "  ")
}

// Entries lists the payload objects in stream order: segments, then the
// chunks.
func (m Manifest) Entries() []ManifestEntry { return append([]ManifestEntry{m.Segments}, m.Chunks...) }

// Validate checks the manifest on its own: names, counts and sizes add up.
func (m Manifest) Validate() error {
	if m.SchemaVersion != ManifestSchemaVersion {
		return snapshotError(ErrSnapshotVersion, "manifest schema %d", m.SchemaVersion)
	}
	if _, err := snapshotIDOf(m.SnapshotID); err != nil {
		return err
	}
	if (m.LastIncludedSeq == 0) != (m.LastIncludedBatchID == 0) || m.LastIncludedSeq < m.LastIncludedBatchID {
		return snapshotError(ErrSnapshotCursor, "manifest cursor seq %d batch %d", m.LastIncludedSeq, m.LastIncludedBatchID)
	}
	if _, err := checksumOf(m.PayloadChecksum); err != nil {
		return err
	}
	if m.ChunkObjects <= 0 || m.ChunkObjects > MaxChunkObjects {
		return snapshotError(ErrSnapshotMalformed, "chunk_objects %d", m.ChunkObjects)
	}
	if m.Segments.Key != SegmentsObject {
		return snapshotError(ErrSnapshotMalformed, "segments object %q", m.Segments.Key)
	}
	var size int64
	var objects uint64
	for i, e := range m.Entries() {
		if _, err := checksumOf(e.Checksum); err != nil {
			return fmt.Errorf("manifest entry %s: %w", e.Key, err)
		}
		if e.Size <= 0 || size+e.Size < size {
			return snapshotError(ErrSnapshotOverflow, "manifest entry %s size %d", e.Key, e.Size)
		}
		size += e.Size
		if i == 0 {
			continue
		}
		if e.Key != ChunkObject(i-1) {
			return snapshotError(ErrSnapshotMalformed, "chunk %d is %q, want %q", i-1, e.Key, ChunkObject(i-1))
		}
		if e.Objects == 0 || e.Objects > uint64(m.ChunkObjects) || (i < len(m.Chunks) && e.Objects != uint64(m.ChunkObjects)) {
			return snapshotError(ErrSnapshotCount, "chunk %s holds %d objects (chunks of %d)", e.Key, e.Objects, m.ChunkObjects)
		}
		objects += e.Objects
	}
	if objects != m.ObjectCount {
		return snapshotError(ErrSnapshotCount, "chunks hold %d objects, manifest says %d", objects, m.ObjectCount)
	}
	if size != m.PayloadSize {
		return snapshotError(ErrSnapshotIdentity, "objects total %d bytes, manifest says %d", size, m.PayloadSize)
	}
	return nil
}

// DecodeManifest decodes a manifest strictly: no unknown member, nothing
// after it, valid.
func DecodeManifest(data []byte) (Manifest, error) {
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return Manifest{}, snapshotError(ErrSnapshotMalformed, "manifest: %v", err)
	}
	if dec.More() {
		return Manifest{}, snapshotError(ErrSnapshotTrailing, "after the manifest")
	}
	return m, m.Validate()
}

// AgreeManifest checks that a descriptor and its manifest name the same
// snapshot: every duplicated identity field matches, and the descriptor's
// manifest key is the manifest's place under its object prefix. A
// mismatch is ErrSnapshotIdentity.
func AgreeManifest(d Descriptor, m Manifest) error {
	type pair struct {
		field string
		a, b  any
	}
	for _, p := range []pair{
		{"snapshot_id", d.SnapshotID, m.SnapshotID},
		{"last_included_seq", d.LastIncludedSeq, m.LastIncludedSeq},
		{"last_included_batch_id", d.LastIncludedBatchID, m.LastIncludedBatchID},
		{"producer_view_version", d.ProducerViewVersion, m.ProducerViewVersion},
		{"payload_checksum", d.PayloadChecksum, m.PayloadChecksum},
		{"payload_size", d.PayloadSize, uint64(m.PayloadSize)},
	} {
		if p.a != p.b {
			return snapshotError(ErrSnapshotIdentity, "descriptor %s %v, manifest %v", p.field, p.a, p.b)
		}
	}
	if d.ManifestKey != path.Join(d.ObjectPrefix, ManifestObject) {
		return snapshotError(ErrSnapshotIdentity, "manifest key %q not under %q", d.ManifestKey, d.ObjectPrefix)
	}
	return nil
}
