// Package oplog is the batch OpLog in etcd: the fenced batch writer a primary
// appends through, group commit of concurrent client entries into batches,
// the validating reader a standby or a recovery replays from, and the
// guarded range-delete primitive (RFC N09).
//
// Every record it writes or reads (batch record, durable prefix, producer
// view, compaction floor) goes through impl/contract's codecs, which are
// upstream Mooncake's byte for byte (the floor is the RFC's): what this
// package writes is what an upstream master writes for the same entries, and
// it reads what an upstream master wrote. Decoding is deterministic, so two
// replicas that accept the same bytes agree on their meaning; what a decoder
// refuses is a typed error (ErrMalformed, ErrChecksum, ...) that wraps
// contract's, never a silently different state. A missing record is never
// read as an empty one, and, as upstream's reader requires, a durable prefix
// whose terminal batch is missing or ends elsewhere is refused, whatever the
// compaction floor says.
package oplog
