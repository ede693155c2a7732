package contract

import (
	"encoding/binary"
	"hash/crc32"
)

// Payload envelope constants.
const (
	EnvelopeMagic         = "OPLGSNAP"
	EnvelopeSchemaVersion = 1
	// PayloadCodecVersion 2: object records carry upstream's replica
	// descriptors, client UUID, group id, data type and pins (the state
	// model of the struct_pack payloads); version 1 records (JSON-era
	// objects) are refused, not misread.
	PayloadCodecVersion = 2
	// EnvelopeHeaderSize is the size of the envelope header, the first
	// bytes of the payload (and of its segments object).
	EnvelopeHeaderSize = 72

	checksumAlgCRC64NVME = 1
)

var crc32c = crc32.MakeTable(crc32.Castagnoli)

// EnvelopeHeader is the payload envelope (RFC "Payload Envelope"): the
// first EnvelopeHeaderSize bytes of the payload stream, little-endian:
//
//	 0  magic "OPLGSNAP"
//	 8  envelope schema version (u16), payload codec version (u16),
//	    checksum algorithm (u16, 1 = CRC64NVME), reserved (u16, 0)
//	16  last included seq, last included batch id (u64 each)
//	32  uncompressed size (bytes of record bodies), encoded size (bytes
//	    after the header), checksum (CRC64NVME of the bytes after the
//	    header), object count (u64 each)
//	64  chunk count (u32)
//	68  CRC32C of bytes 0..67 (u32)
type EnvelopeHeader struct {
	EnvelopeSchemaVersion uint16
	PayloadCodecVersion   uint16
	Cursor                Cursor
	UncompressedSize      uint64 // bytes of record bodies
	EncodedSize           uint64 // bytes after the header
	Checksum              uint64 // CRC64NVME of the bytes after the header
	ObjectCount           uint64
	ChunkCount            uint32
}

// Marshal renders the header with its CRC32C.
func (h EnvelopeHeader) Marshal() [EnvelopeHeaderSize]byte {
	var b [EnvelopeHeaderSize]byte
	copy(b[0:8], EnvelopeMagic)
	le := binary.LittleEndian
	le.PutUint16(b[8:], h.EnvelopeSchemaVersion)
	le.PutUint16(b[10:], h.PayloadCodecVersion)
	le.PutUint16(b[12:], checksumAlgCRC64NVME)
	le.PutUint64(b[16:], h.Cursor.Seq)
	le.PutUint64(b[24:], h.Cursor.BatchID)
	le.PutUint64(b[32:], h.UncompressedSize)
	le.PutUint64(b[40:], h.EncodedSize)
	le.PutUint64(b[48:], h.Checksum)
	le.PutUint64(b[56:], h.ObjectCount)
	le.PutUint32(b[64:], h.ChunkCount)
	le.PutUint32(b[68:], crc32.Checksum(b[:68], crc32c))
	return b
}

// ParseEnvelopeHeader decodes and checks the header at the start of b:
// magic, its own CRC, versions, algorithm, reserved bytes, a consistent
// cursor and sizes.
func ParseEnvelopeHeader(b []byte) (EnvelopeHeader, error) {
	if len(b) < EnvelopeHeaderSize {
		return EnvelopeHeader{}, snapshotError(ErrSnapshotTruncated, "header of %d bytes", len(b))
	}
	if string(b[0:8]) != EnvelopeMagic {
		return EnvelopeHeader{}, snapshotError(ErrSnapshotMalformed, "envelope magic %q", b[0:8])
	}
	le := binary.LittleEndian
	if got, want := le.Uint32(b[68:]), crc32.Checksum(b[:68], crc32c); got != want {
		return EnvelopeHeader{}, snapshotError(ErrSnapshotChecksum, "envelope header crc32c %08x, computed %08x", got, want)
	}
	h := EnvelopeHeader{
		EnvelopeSchemaVersion: le.Uint16(b[8:]),
		PayloadCodecVersion:   le.Uint16(b[10:]),
		Cursor:                Cursor{Seq: le.Uint64(b[16:]), BatchID: le.Uint64(b[24:])},
		UncompressedSize:      le.Uint64(b[32:]),
		EncodedSize:           le.Uint64(b[40:]),
		Checksum:              le.Uint64(b[48:]),
		ObjectCount:           le.Uint64(b[56:]),
		ChunkCount:            le.Uint32(b[64:]),
	}
	switch {
	case h.EnvelopeSchemaVersion != EnvelopeSchemaVersion:
		return EnvelopeHeader{}, snapshotError(ErrSnapshotVersion, "envelope schema %d", h.EnvelopeSchemaVersion)
	case h.PayloadCodecVersion != PayloadCodecVersion:
		return EnvelopeHeader{}, snapshotError(ErrSnapshotVersion, "payload codec %d", h.PayloadCodecVersion)
	case le.Uint16(b[12:]) != checksumAlgCRC64NVME:
		return EnvelopeHeader{}, snapshotError(ErrSnapshotVersion, "checksum algorithm %d", le.Uint16(b[12:]))
	case le.Uint16(b[14:]) != 0:
		return EnvelopeHeader{}, snapshotError(ErrSnapshotMalformed, "reserved header bytes set")
	case !h.Cursor.Consistent() || h.Cursor.Seq < h.Cursor.BatchID:
		return EnvelopeHeader{}, snapshotError(ErrSnapshotCursor, "envelope cursor %s", h.Cursor)
	case h.UncompressedSize > h.EncodedSize:
		return EnvelopeHeader{}, snapshotError(ErrSnapshotMalformed, "uncompressed size %d above encoded size %d", h.UncompressedSize, h.EncodedSize)
	}
	return h, nil
}

// AgreeHeader checks an envelope header against its manifest: cursor,
// checksum, counts and size.
func AgreeHeader(h EnvelopeHeader, m Manifest) error {
	if h.Cursor.Seq != m.LastIncludedSeq || h.Cursor.BatchID != m.LastIncludedBatchID {
		return snapshotError(ErrSnapshotCursor, "envelope %s, manifest batch %d seq %d", h.Cursor, m.LastIncludedBatchID, m.LastIncludedSeq)
	}
	if CRC64NVME(h.Checksum) != m.PayloadChecksum {
		return snapshotError(ErrSnapshotIdentity, "envelope checksum %s, manifest %s", CRC64NVME(h.Checksum), m.PayloadChecksum)
	}
	if h.ObjectCount != m.ObjectCount || int(h.ChunkCount) != len(m.Chunks) || h.UncompressedSize != m.UncompressedSize {
		return snapshotError(ErrSnapshotCount, "envelope counts differ from the manifest")
	}
	if int64(h.EncodedSize)+EnvelopeHeaderSize != m.PayloadSize {
		return snapshotError(ErrSnapshotIdentity, "envelope size %d, manifest %d", int64(h.EncodedSize)+EnvelopeHeaderSize, m.PayloadSize)
	}
	return nil
}
