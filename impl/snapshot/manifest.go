package snapshot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
)

// ManifestSchemaVersion is the manifest schema.
const ManifestSchemaVersion = 1

// ManifestEntry is one stored object of the payload.
type ManifestEntry struct {
	Key      string   `json:"key"` // relative to the snapshot's object prefix
	Objects  uint64   `json:"objects"`
	Size     int64    `json:"size"`
	Checksum Checksum `json:"checksum"` // full-object CRC64NVME
}

// Manifest lists a snapshot's payload objects and repeats its identity.
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

// NewManifest describes an encoded layout.
func NewManifest(id string, view uint64, chunkObjects int, l *Layout) Manifest {
	m := Manifest{SchemaVersion: ManifestSchemaVersion, SnapshotID: id,
		LastIncludedSeq: l.Header.Cursor.Seq, LastIncludedBatchID: l.Header.Cursor.BatchID, ProducerViewVersion: view,
		PayloadChecksum: l.Checksum(), PayloadSize: l.Size, UncompressedSize: l.Header.UncompressedSize,
		ObjectCount: l.Header.ObjectCount, ChunkObjects: chunkObjects}
	for i, p := range l.Parts {
		e := ManifestEntry{Key: p.Name, Objects: p.Count, Size: p.Size, Checksum: CRC64NVME(p.CRC)}
		if i == 0 {
			m.Segments = e
		} else {
			m.Chunks = append(m.Chunks, e)
		}
	}
	return m
}

// Encode renders the manifest as JSON.
func (m Manifest) Encode() ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return json.MarshalIndent(m, "", "  ")
}

// Entries lists the payload objects in stream order.
func (m Manifest) Entries() []ManifestEntry { return append([]ManifestEntry{m.Segments}, m.Chunks...) }

// Validate checks the manifest on its own: names, counts and sizes add up.
func (m Manifest) Validate() error {
	if m.SchemaVersion != ManifestSchemaVersion {
		return fmt.Errorf("%w: manifest schema %d", ErrVersion, m.SchemaVersion)
	}
	if _, err := ParseID(m.SnapshotID); err != nil {
		return err
	}
	if (m.LastIncludedSeq == 0) != (m.LastIncludedBatchID == 0) || m.LastIncludedSeq < m.LastIncludedBatchID {
		return fmt.Errorf("%w: manifest cursor seq %d batch %d", ErrCursorMismatch, m.LastIncludedSeq, m.LastIncludedBatchID)
	}
	if _, _, err := ParseChecksum(m.PayloadChecksum); err != nil {
		return err
	}
	if m.ChunkObjects <= 0 || m.ChunkObjects > maxChunkObjects {
		return malformed("chunk_objects %d", m.ChunkObjects)
	}
	if m.Segments.Key != SegmentsObject {
		return malformed("segments object %q", m.Segments.Key)
	}
	var size int64
	var objects uint64
	for i, e := range m.Entries() {
		if _, _, err := ParseChecksum(e.Checksum); err != nil {
			return fmt.Errorf("manifest entry %s: %w", e.Key, err)
		}
		if e.Size <= 0 || size+e.Size < size {
			return fmt.Errorf("%w: manifest entry %s size %d", ErrOverflow, e.Key, e.Size)
		}
		size += e.Size
		if i == 0 {
			continue
		}
		if e.Key != ChunkObject(i-1) {
			return malformed("chunk %d is %q, want %q", i-1, e.Key, ChunkObject(i-1))
		}
		if e.Objects == 0 || e.Objects > uint64(m.ChunkObjects) || (i < len(m.Chunks) && e.Objects != uint64(m.ChunkObjects)) {
			return fmt.Errorf("%w: chunk %s holds %d objects (chunks of %d)", ErrCount, e.Key, e.Objects, m.ChunkObjects)
		}
		objects += e.Objects
	}
	if objects != m.ObjectCount {
		return fmt.Errorf("%w: chunks hold %d objects, manifest says %d", ErrCount, objects, m.ObjectCount)
	}
	if size != m.PayloadSize {
		return fmt.Errorf("%w: objects total %d bytes, manifest says %d", ErrIdentity, size, m.PayloadSize)
	}
	return nil
}

// DecodeManifest decodes a manifest strictly.
func DecodeManifest(data []byte) (Manifest, error) {
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return Manifest{}, malformed("manifest: %v", err)
	}
	if dec.More() {
		return Manifest{}, fmt.Errorf("%w: after the manifest", ErrTrailing)
	}
	return m, m.Validate()
}

// Agree checks that a descriptor and its manifest name the same snapshot:
// every duplicated identity field must match.
func Agree(d Descriptor, m Manifest) error {
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
			return fmt.Errorf("%w: descriptor %s %v, manifest %v", ErrIdentity, p.field, p.a, p.b)
		}
	}
	if d.ManifestKey != path.Join(d.ObjectPrefix, ManifestObject) {
		return fmt.Errorf("%w: manifest key %q not under %q", ErrIdentity, d.ManifestKey, d.ObjectPrefix)
	}
	return nil
}

// AgreeHeader checks a decoded envelope against its manifest.
func AgreeHeader(h Header, m Manifest) error {
	if h.Cursor.Seq != m.LastIncludedSeq || h.Cursor.BatchID != m.LastIncludedBatchID {
		return fmt.Errorf("%w: envelope %s, manifest batch %d seq %d", ErrCursorMismatch, h.Cursor, m.LastIncludedBatchID, m.LastIncludedSeq)
	}
	if CRC64NVME(h.Checksum) != m.PayloadChecksum {
		return fmt.Errorf("%w: envelope checksum %s, manifest %s", ErrIdentity, CRC64NVME(h.Checksum), m.PayloadChecksum)
	}
	if h.ObjectCount != m.ObjectCount || int(h.ChunkCount) != len(m.Chunks) || h.UncompressedSize != m.UncompressedSize {
		return fmt.Errorf("%w: envelope counts differ from the manifest", ErrCount)
	}
	if int64(h.EncodedSize)+HeaderSize != m.PayloadSize {
		return fmt.Errorf("%w: envelope size %d, manifest %d", ErrIdentity, int64(h.EncodedSize)+HeaderSize, m.PayloadSize)
	}
	return nil
}
