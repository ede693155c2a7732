// Package snapshot is the snapshot payload: the streaming chunk codec that
// turns an immutable capture into a payload and back with bounded memory,
// and the writing (Prepare, Write) and reading (Open, OpenState) of whole
// snapshots. The records around the payload — the schema-v1 descriptor (and
// the legacy three-field one), the manifest, the payload envelope header,
// the object names and the rules by which they agree — are impl/contract's
// (descriptor.go, manifest.go, envelope.go here alias them), so the harness
// and the operator's verifier read them without this package.
//
// A payload is one byte stream: a fixed 72-byte envelope header, then one
// segments record, then one record per chunk of at most ChunkObjects
// objects. Each record is self-checking (magic, version, index, count, body
// length, body, CRC64NVME of the body). The stream is stored as objects cut
// at record boundaries — segments.bin (which also holds the header) and
// chunks/{n:%06d}.bin — each listed in the manifest with its size and full-object
// CRC64NVME. The envelope checksum, the manifest checksum and the
// descriptor's payload_checksum are one value: CRC64NVME over every byte after
// the header; the header carries its own CRC32C. Cursor, sizes and counts are
// duplicated across envelope, manifest, descriptor and pointer on purpose:
// readers compare them all and reject any disagreement.
//
// An object entry carries every field of state.Object (record.go): tenant,
// key, client UUID (two uvarints), size, group id, data type, hard pin, and
// per replica its id, kind, status, segment, offset, length, protocol, file
// path, client UUID, aligned size and shard index (a zig-zag varint).
// These fields came with upstream's payloads; the envelope's payload codec
// version moved to 2 with them, so a payload written before is refused by
// its header (ErrVersion) before any record is read.
package snapshot
