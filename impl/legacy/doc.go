// Package legacy reads the primary snapshots upstream Mooncake's master
// wrote before the batch OpLog (kvcache-ai/Mooncake @ 3b5a594, its
// MasterSnapshotManager) and imports one, explicitly, into a fresh
// batch-OpLog namespace (RFC "Legacy Snapshot Removal", N13/N14 analogues).
//
// The old format is read only: nothing here writes it (the fixtures are
// written by fixtures/legacy/gen). Pointer mode never treats an old snapshot
// as an authority: an import converts it into an ordinary batch-OpLog
// snapshot (upstream's format), and one fenced etcd transaction makes that snapshot the latest
// pointer at batch 1 with the compaction floor at 1, and writes batch 1 as
// the durable prefix's terminal batch (ImportBatch: one entry no applier
// takes, at the legacy sequence) — batch 1 stands for the whole imported
// state, which only the pointer holds, and an upstream master's startup
// check finds the prefix's batch where it looks. From then on recovery reads
// pointers and the OpLog only; the legacy files are never opened again.
//
// # Reading
//
// The old layout (latest.txt, descriptor.txt, manifest.txt, metadata,
// segments, task_manager: msgpack and zstd frames) is read by the
// contract's decoder, impl/contract/legacysnap, which also describes it
// field by field; the harness reads a legacy fixture through the same
// package. Source adapts an object store to it, Read decodes a snapshot
// into legacysnap's Decoded model, and Open also converts it.
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
// "draining" (impl/contract/testdata/upstream/legacy) is that case: one segment DRAINING,
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
// Every replica kind the layout carries is imported, field for field as
// upstream's PUT_END payload carries it (state/payload.go): MEMORY as above;
// DISK with its file path and object size (the replica's length);
// LOCAL_DISK with its client UUID, object size and transport endpoint (the
// replica's segment); DFS with its file path, offset, object size, aligned
// size and shard index. The layout has no NVMe-oF replica (upstream does not
// serialize NoF segments). It refuses segments sharing a transport endpoint
// (the model keys segments by it) and replica statuses outside upstream's
// six, rather than import a cluster without them: an import happens once,
// into a fresh namespace, so what it leaves out cannot be brought in later.
package legacy
