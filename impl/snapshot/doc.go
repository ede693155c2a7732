// Package snapshot is the snapshot format: the schema-v1 descriptor (and the
// legacy three-field one), the manifest, the payload envelope, and the
// streaming chunk codec that turns an immutable capture into a payload and
// back with bounded memory.
//
// A payload is one byte stream: a fixed 72-byte envelope header, then one
// record per chunk of at most ChunkObjects objects, then one segments record.
// Each record is self-checking (magic, version, index, count, body length,
// body, CRC64NVME of the body). The stream is stored as objects cut at record
// boundaries — chunks/{n:%06d}.bin (the first also holds the header) and
// segments.bin — each listed in the manifest with its size and full-object
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
// Record version 1 gained the replica fields and the UUID without a version
// bump: neither the RFC nor CONTRACT.md says how the chunk record's version
// moves. A record written before that is refused by its body length (the
// decoder reads more fields than it holds), not by its version.
package snapshot
