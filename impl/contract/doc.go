// Package contract is what every part of the wire contract with upstream
// Mooncake (kvcache-ai/Mooncake @ 3b5a594133958449a1feaf1c9e0fc1b553e34a28)
// shares: the decode errors (one sentinel per kind, an *Error carrying
// upstream's reason), the batch cursor, upstream's cluster id rule and the
// ObjectGetter through which the snapshot readers reach a store. The
// formats themselves live in one package per upstream component, each
// byte-identical to upstream and proven against vectors upstream's own code
// wrote (testdata/upstream):
//
//   - batchlog: the batch OpLog's records and keys (batch record, durable
//     prefix, producer view);
//   - batchsnap: the batch-OpLog snapshot (control keys, ids, descriptor,
//     manifest, segments, object chunks, CRC32C, the reader by exact keys),
//     with the project's pointer and floor values beside it;
//   - legacysnap: the legacy primary snapshot, with the project's import
//     record beside it;
//   - metadata, structpack, jsoncpp: the payload types and the codecs the
//     others share;
//   - keyspace: every etcd key of one cluster; verify: the operator's
//     verdict on a live namespace.
//
// The implementation writes every record through these packages and the
// harness reads everything the system left behind through them alone
// (tests/importgraph holds both to it). Nothing here holds state or does
// I/O of its own; no decoder panics on any input.
package contract
