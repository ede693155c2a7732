// Package oplog is the batch OpLog in etcd: the record codecs of DESIGN §2
// (batch record, durable prefix, producer view, compaction floor), the fenced
// batch writer a primary appends through, group commit of concurrent client
// entries into batches, the validating reader a standby or a recovery replays
// from, and the guarded range-delete primitive (RFC N09).
//
// Every decoder is strict: a record is accepted only in its canonical encoding,
// so two replicas that accept the same bytes agree on their meaning, and any
// divergence shows up as a typed error rather than a silently different state.
// A missing record is never read as an empty one.
package oplog
