// Package metadata holds upstream Mooncake's metadata types as they travel
// on the wire (kvcache-ai/Mooncake @ 3b5a594, include/metadata_store.h,
// include/replica.h, include/allocator.h, src/ha/oplog/oplog_types.h): the
// PUT_END payload (MetadataPayload, with its replica descriptors) and the
// segment mount, update and unmount payloads the batch OpLog's entries
// carry, struct_pack-encoded (impl/contract/structpack) in both wire
// variants, byte-identical to upstream and proven against the payload
// vectors upstream's own code wrote. The batch-OpLog snapshot's object
// chunks carry the same replica descriptors (impl/contract/batchsnap).
package metadata
