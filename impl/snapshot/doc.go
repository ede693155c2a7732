// Package snapshot writes and reads whole snapshots in upstream Mooncake's
// batch-OpLog snapshot format (impl/contract/batchsnap holds the format:
// keys, ids, descriptor, manifest, segments and object chunks, CRC32C).
//
// Writing follows upstream's BatchOpLogSnapshotWriter (writer.cpp): an
// immutable capture is encoded into a temporary work file (segments.bin,
// then objects/<n>.bin of a fixed object count, each part's CRC32C computed
// in the same pass) and every part is read back and decoded while the
// encoder goes on (Prepare; RFC "Encoding and Resource Bounds"). Write then
// refuses a candidate prefix that already holds an object, uploads
// segments.bin, the chunks, manifest.json and descriptor.json in that order,
// each create-only and each verified (a HEAD's full-object CRC32C where the
// store was shown to validate checksums, else a complete readback), and
// deletes the objects it wrote when any step fails; a crash's orphans are
// left to GC. Nothing is authoritative until a pointer names the
// descriptor (impl/publish).
//
// Reading (OpenState) goes through batchsnap's reader: the descriptor by
// the pointer's exact key, size and CRC32C, the manifest it names, then
// each object held to its size and CRC32C before it is decoded, built into
// a new state on a second core; nothing is returned unless all of it is
// valid. Objects may come in any order (upstream's writer copies hash maps).
//
// What upstream does not: the capture is copy-on-write (impl/state), so the
// standby keeps applying batches during the whole upload, where upstream's
// replication loop stops until its writer releases the capture.
package snapshot
