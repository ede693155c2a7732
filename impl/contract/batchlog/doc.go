// Package batchlog is upstream Mooncake's batch OpLog on the wire
// (mooncake-store/src/ha/oplog: oplog_batch_codec.cpp, oplog_batch_types.cpp):
// the batch record (a JSON array checksummed with XXH32 over jsoncpp's
// serialization), the durable prefix, the producer view, and their etcd keys
// under /oplog/<cluster>/. Encoders write what upstream writes and refuse a
// batch its decoder would refuse; decoders accept what upstream accepts,
// with upstream's reasons, except for the deliberate differences listed in
// impl/contract/README.md. Entry payloads are impl/contract/metadata's.
package batchlog
