package snapshot

import "github.com/oplogha/oplogha/impl/contract"

// ManifestSchemaVersion is the manifest schema.
const ManifestSchemaVersion = contract.ManifestSchemaVersion

// ManifestEntry is one stored object of the payload (contract.ManifestEntry).
type ManifestEntry = contract.ManifestEntry

// Manifest lists a snapshot's payload objects and repeats its identity: the
// contract's record (contract.Manifest, with its Encode, Validate and
// Entries).
type Manifest = contract.Manifest

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

// DecodeManifest decodes a manifest strictly (contract.DecodeManifest).
func DecodeManifest(data []byte) (Manifest, error) { return contract.DecodeManifest(data) }

// Agree checks that a descriptor and its manifest name the same snapshot:
// every duplicated identity field must match (contract.AgreeManifest).
func Agree(d Descriptor, m Manifest) error { return contract.AgreeManifest(d, m) }

// AgreeHeader checks a decoded envelope against its manifest
// (contract.AgreeHeader).
func AgreeHeader(h Header, m Manifest) error { return contract.AgreeHeader(h, m) }
