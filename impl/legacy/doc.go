// Package legacy reads the historical primary snapshot format of the Mooncake
// master and imports one snapshot, explicitly, into a fresh batch-OpLog
// namespace (RFC "Legacy Snapshot Removal", N13/N14 analogues).
//
// The old format is read only: nothing here writes it (fixtures are produced
// by fixtures/legacy/gen). Pointer mode never treats an old snapshot as an
// authority: an import converts it into an ordinary schema-v1 snapshot, and
// one fenced etcd transaction makes that snapshot the latest pointer at
// batch 1 with the compaction floor at 1 — as if batch 1 had held the whole
// imported state and been pruned. From then on recovery reads pointers and
// the OpLog only; the legacy objects are never opened again.
//
// Layout, under a root (a directory, or an S3 prefix):
//
//	{root}/{cluster_id}/latest.txt             the id of the newest snapshot
//	{root}/{cluster_id}/{id}/descriptor.txt    "<last_included_seq>|<producer_view_version>|<created_at_ms>"
//	{root}/{cluster_id}/{id}/manifest.txt      "messagepack|1.0.0|<id>"
//	{root}/{cluster_id}/{id}/segments          msgpack segment registry
//	{root}/{cluster_id}/{id}/metadata          msgpack shard table; each shard a zstd frame of msgpack rows
//
// with ids of the form YYYYMMDD_HHMMSS_mmm. fixtures/legacy/README.md
// describes every field.
package legacy
