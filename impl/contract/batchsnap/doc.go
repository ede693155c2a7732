// Package batchsnap is upstream Mooncake's batch-OpLog snapshot on the wire
// (mooncake-store/src/ha/snapshot/batch_oplog: metadata.cpp, codec.cpp,
// writer.cpp; PR #3178, #3326, #3447): the four control keys under
// /oplog/<cluster>/snapshot/, snapshot ids "<batch>-<maintenance lease>",
// the artifact keys <root>/batch-oplog/<id>/{descriptor.json,
// manifest.json, segments.bin, objects/<n>.bin}, the descriptor and
// manifest (jsoncpp's compact JSON, read with upstream's strict reader
// settings and reasons), segments and object chunks (struct_pack, both wire
// variants), and CRC32C over every stored object. Everything is pinned to
// the vectors upstream's own code wrote (testdata/upstream/snapshot).
//
// Beside it, marked as the project's because upstream names the keys but
// defines no value yet: the pointer (pointer.go: the snapshot's descriptor
// by key, size and CRC32C) and the compaction floor (floor.go).
//
// Upstream has no reader at 3b5a594; Open, OpenHead and ReadContent are the
// project's (open.go says what they check): exact keys only, every object
// held to its size and CRC32C before it is decoded. Where upstream's
// decoders accept something unsafe (bytes after a chunk or a segments
// buffer, a chunk cut inside its last hard_pinned), this package refuses it
// (impl/contract/README.md lists the differences).
package batchsnap
