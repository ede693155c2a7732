package snapshot

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/oplogha/oplogha/impl/state"
)

// Envelope constants.
const (
	EnvelopeMagic         = "OPLGSNAP"
	EnvelopeSchemaVersion = 1
	// PayloadCodecVersion 2: object records carry upstream's replica
	// descriptors, client UUID, group id, data type and pins (the state
	// model of the struct_pack payloads); version 1 records (JSON-era
	// objects) are refused, not misread.
	PayloadCodecVersion  = 2
	checksumAlgCRC64NVME = 1
	HeaderSize           = 72
)

var crc32c = crc32.MakeTable(crc32.Castagnoli)

// Header is the payload envelope (RFC "Payload Envelope").
type Header struct {
	EnvelopeSchemaVersion uint16
	PayloadCodecVersion   uint16
	Cursor                state.Cursor
	UncompressedSize      uint64 // bytes of record bodies
	EncodedSize           uint64 // bytes after the header
	Checksum              uint64 // CRC64NVME of the bytes after the header
	ObjectCount           uint64
	ChunkCount            uint32
}

// Marshal renders the 72-byte header with its CRC32C.
func (h Header) Marshal() [HeaderSize]byte {
	var b [HeaderSize]byte
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

// ParseHeader decodes and checks a header: magic, versions, algorithm, its
// own CRC, and a consistent cursor.
func ParseHeader(b []byte) (Header, error) {
	if len(b) < HeaderSize {
		return Header{}, fmt.Errorf("%w: header of %d bytes", ErrTruncated, len(b))
	}
	if string(b[0:8]) != EnvelopeMagic {
		return Header{}, malformed("envelope magic %q", b[0:8])
	}
	le := binary.LittleEndian
	if got, want := le.Uint32(b[68:]), crc32.Checksum(b[:68], crc32c); got != want {
		return Header{}, fmt.Errorf("%w: envelope header crc32c %08x, computed %08x", ErrChecksum, got, want)
	}
	h := Header{
		EnvelopeSchemaVersion: le.Uint16(b[8:]),
		PayloadCodecVersion:   le.Uint16(b[10:]),
		Cursor:                state.Cursor{Seq: le.Uint64(b[16:]), BatchID: le.Uint64(b[24:])},
		UncompressedSize:      le.Uint64(b[32:]),
		EncodedSize:           le.Uint64(b[40:]),
		Checksum:              le.Uint64(b[48:]),
		ObjectCount:           le.Uint64(b[56:]),
		ChunkCount:            le.Uint32(b[64:]),
	}
	switch {
	case h.EnvelopeSchemaVersion != EnvelopeSchemaVersion:
		return Header{}, fmt.Errorf("%w: envelope schema %d", ErrVersion, h.EnvelopeSchemaVersion)
	case h.PayloadCodecVersion != PayloadCodecVersion:
		return Header{}, fmt.Errorf("%w: payload codec %d", ErrVersion, h.PayloadCodecVersion)
	case le.Uint16(b[12:]) != checksumAlgCRC64NVME:
		return Header{}, fmt.Errorf("%w: checksum algorithm %d", ErrVersion, le.Uint16(b[12:]))
	case le.Uint16(b[14:]) != 0:
		return Header{}, malformed("reserved header bytes set")
	case !h.Cursor.Consistent() || h.Cursor.Seq < h.Cursor.BatchID:
		return Header{}, fmt.Errorf("%w: envelope cursor %s", ErrCursorMismatch, h.Cursor)
	case h.UncompressedSize > h.EncodedSize:
		return Header{}, malformed("uncompressed size %d above encoded size %d", h.UncompressedSize, h.EncodedSize)
	}
	return h, nil
}
