// Package legacysnap is the contract's reader of "the legacy layout": the
// primary snapshots upstream Mooncake's master wrote before the batch OpLog
// (kvcache-ai/Mooncake @ 3b5a594, its MasterSnapshotManager and
// MasterSnapshotCodec). The implementation imports such a snapshot through
// it (impl/legacy converts the decoded model into its state and installs
// it), and the harness reads a legacy fixture through it to know what an
// import must bring in; neither has a decoder of its own.
//
// Like the rest of impl/contract it is pure: it does no I/O of its own (a
// Source reads files through the Getter it is given), keeps no state
// between calls and does not panic on any input. It never writes the old
// format (the fixtures are written by fixtures/legacy/legacyfixture).
//
// # Layout
//
// Under the old master's object store root (a directory, or an S3 prefix):
//
//	mooncake_master_snapshot/{cluster_id}/latest.txt           the newest snapshot's id
//	mooncake_master_snapshot/{cluster_id}/{id}/descriptor.txt  "<last_included_seq>|<producer_view_version>|<created_at_ms>"
//	mooncake_master_snapshot/{cluster_id}/{id}/manifest.txt    "messagepack|1.0.0|<id>"
//	mooncake_master_snapshot/{cluster_id}/{id}/metadata        msgpack; each shard one zstd frame of msgpack
//	mooncake_master_snapshot/{cluster_id}/{id}/segments        one zstd frame of msgpack
//	mooncake_master_snapshot/{cluster_id}/{id}/task_manager    one zstd frame of msgpack (required)
//
// with ids of the form YYYYMMDD_HHMMSS_mmm. Every zstd frame carries its
// content size, which upstream's decompressor requires. text.go holds the
// rules of the three text files; metadata.go, segments.go and tasks.go
// describe each payload file field by field, with the upstream writer each
// follows; fixtures/legacy/README.md has the whole layout in one place.
//
// # Reading
//
// Source.Read decodes a snapshot the way upstream's decoder does
// (MasterSnapshotCodec::Decode): segments first, then the metadata, whose
// memory replicas are restored against their segments, then the tasks.
// Upstream's decoder skips an object, logs it and goes on when a memory
// replica's segment is not mounted, not OK or has no allocator; Read records
// those objects in Decoded.Skipped with that reason, and Decoded.Used gives
// each segment's allocator count as upstream's decoder leaves it. Anything
// else that is not what upstream's writer produces is an error naming the
// file, the place in it and the reason: a missing file (ErrNotFound), a bad
// id (ErrID), descriptor (ErrDescriptor) or manifest (ErrManifest), a cut
// file or frame (ErrTruncated), a wrong type, shape, unknown key, trailing
// bytes, a frame without its content size (ErrMalformed), inconsistent
// content (ErrContent). Upstream's decoder tolerates some of that (it
// ignores unknown keys, skips an object or a task it cannot parse); this
// reader refuses, because no upstream writer produces it and an import must
// not drop what it cannot read. Length headers are held to the bytes that
// remain, and a frame's declared size to what a frame of its length can
// hold, so a hostile file fails where it stands instead of allocating what
// it claims.
//
// View renders a decoded snapshot in the shape of the golden vectors'
// expected.json (impl/contract/testdata/upstream/legacy: what upstream's
// own decoder recovered from files upstream's own code wrote); the tests
// compare every field.
package legacysnap
