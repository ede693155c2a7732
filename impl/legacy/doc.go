// Package legacy reads the primary snapshots upstream Mooncake's master
// wrote before the batch OpLog (kvcache-ai/Mooncake @ 3b5a594, its
// MasterSnapshotManager) and imports one, explicitly, into a fresh
// batch-OpLog namespace (RFC "Legacy Snapshot Removal", N13/N14 analogues).
//
// The old format is read only: nothing here writes it (the fixtures are
// written by fixtures/legacy/gen). Pointer mode never treats an old snapshot
// as an authority: an import converts it into an ordinary schema-v1
// snapshot, and one fenced etcd transaction makes that snapshot the latest
// pointer at batch 1 with the compaction floor at 1, and writes batch 1 as
// the durable prefix's terminal batch (ImportBatch: one entry no applier
// takes, at the legacy sequence) — batch 1 stands for the whole imported
// state, which only the pointer holds, and an upstream master's startup
// check finds the prefix's batch where it looks. From then on recovery reads
// pointers and the OpLog only; the legacy files are never opened again.
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
// content size, which upstream's decompressor requires. metadata.go,
// segments.go and tasks.go describe each file field by field, with the
// upstream writer each follows; fixtures/legacy/README.md has the whole
// layout in one place.
//
// # Reading
//
// Read decodes a snapshot the way upstream's decoder does
// (MasterSnapshotCodec::Decode): segments first, then the metadata, whose
// memory replicas are restored against their segments, then the tasks.
// Upstream's decoder skips an object, logs it and goes on when a memory
// replica's segment is not mounted, not OK or has no allocator; Read records
// those objects in Decoded.Skipped with that reason, and Decoded.Used gives
// each segment's allocator count as upstream's decoder leaves it. Anything
// else that is not what upstream's writer produces is an error naming the
// file, the place in it and the reason: a cut file or frame (ErrTruncated),
// a wrong type, shape, unknown key, trailing bytes, a frame without its
// content size (ErrMalformed), inconsistent content (ErrContent). Upstream's
// decoder tolerates some of that (it ignores unknown keys, skips an object
// or a task it cannot parse); this reader refuses, because no upstream
// writer produces it and an import must not drop what it cannot read. Length
// headers are held to the bytes that remain, and a frame's declared size to
// what a frame of its length can hold, so a hostile file fails where it
// stands instead of allocating what it claims.
//
// # Converting
//
// Convert maps the decoded snapshot into impl/state, all of it or nothing:
// a segment by its transport endpoint with its name and capacity, an object
// with its client (the same UUID, state.UUID), size, group, data type and
// hard pin, a memory replica on its segment's transport endpoint at its
// address less its segment's base, with its length, id and status (all six
// of upstream's, UNDEFINED included); the layout stores no transport
// protocol, so the replica's stays empty. Every object's buffers must lie
// within a mounted segment (state.Builder.CheckPlacement), as a primary's
// put must. The tenant upstream writes as "" (or omits) is its default
// tenant, "default".
// NotImported lists what the model has no place for and stays behind.
//
// It refuses (ErrNotImportable) a snapshot of which upstream's decoder
// drops objects, and one with a segment that is not OK. The golden vector
// "draining" (testdata/upstream) is that case: one segment DRAINING,
// upstream's decoder keeps two objects and drops the four with a replica on
// it. This importer refuses the snapshot rather than skip exactly those
// four, because: importing the rest would be a partial import, and the four
// are intact (a draining segment stays readable); upstream's own full
// restore of that snapshot fails and starts empty (it unmounts segments that
// are not OK while holding the lock the unmount takes), so no upstream
// master ever serves the decoder's partial result; and the state model has
// no segment status, so the draining segment would come back allocatable.
// The operator lets the drain finish (or cancels it), takes a new snapshot
// with the old master, and imports that. `oplogctl legacy inspect` shows
// the decoded content, the dropped objects and the refusal without writing
// anything.
//
// It also refuses replicas other than memory (disk, local-disk, DFS: the
// state model has those kinds, but this importer does not map them yet and
// no upstream vector holds one to prove a mapping) and segments sharing a
// transport endpoint (the model keys segments by it), rather than import a
// cluster without them: an import happens once, into a fresh namespace, so
// what it leaves out cannot be brought in later.
package legacy
