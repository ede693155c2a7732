// Package contract holds the wire codecs of the records a Mooncake Store
// master keeps in etcd for its batch OpLog, byte-identical to upstream
// Mooncake (kvcache-ai/Mooncake @ 3b5a594133958449a1feaf1c9e0fc1b553e34a28)
// and proven against golden vectors written by upstream's own code
// (testdata/upstream):
//
//   - keys.go: the etcd keys (batch records, their range, durable prefix,
//     producer view; and the RFC's snapshot, leader and legacy-import keys);
//     keyspace.go: Keyspace, every key of one cluster;
//   - batch.go, batch_decode.go: the batch record, a JSON array checksummed
//     with XXH32 over jsoncpp's serialization (json.go, jsonwrite.go
//     reproduce jsoncpp's reader and writer as far as the record needs);
//   - prefix.go: the durable prefix; view.go: the producer view;
//     floor.go: the RFC's compaction floor;
//   - pointer.go: the RFC's snapshot pointer (latest, fallback), with
//     snapshotid.go (the snapshot id it names), checksum.go (its tagged
//     payload checksum) and cursor.go (the batch cursor it carries);
//     importrecord.go: the legacy import record and the batch 1 an import
//     writes;
//   - descriptor.go, manifest.go, envelope.go, objectlayout.go: the
//     snapshot objects a pointer leads to (descriptor, manifest, payload
//     envelope header, object names) and the rules by which they agree;
//     snapshotread.go, snapshotopen.go: OpenSnapshot, the read-only check
//     of a pointer's snapshot by exact keys, through an ObjectGetter the
//     caller passes (snapshoterrors.go: their sentinel errors);
//   - payload_metadata.go, payload_segment.go: the struct_pack payloads the
//     entries carry (structpack.go is the struct_pack wire format);
//   - legacysnap (a subpackage): the legacy layout, upstream's pre-OpLog
//     primary snapshot files in the object store (latest.txt,
//     descriptor.txt, manifest.txt; metadata, segments and task_manager in
//     msgpack and zstd frames), decoded as upstream's decoder does and
//     proven against its vectors (testdata/upstream/legacy).
//
// Decoders accept what upstream accepts and refuse what it refuses, with
// upstream's reason where it has one, except for the deliberate differences
// listed in README.md (in short: a few kinds of input that jsoncpp or
// struct_pack tolerate but no upstream writer produces are refused here).
// Encoders write what upstream writes, and refuse a batch its decoder would
// refuse. Every decode error wraps one of the sentinel errors (errors.Is) in
// an *Error carrying the reason. Nothing here panics on any input (but
// MustKeyspace, meant for constant ids), holds state, or does I/O of its
// own (the snapshot readers read through the caller's ObjectGetter).
package contract
