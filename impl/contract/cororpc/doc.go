// Package cororpc is the wire contract of upstream mooncake_master's client
// RPC (kvcache-ai/Mooncake @ 3b5a594, served by yalantinglibs coro_rpc at
// the commit upstream pins, 7801bc9a): the frame headers, the function ids,
// and the struct_pack bodies of the calls the harness makes (ServiceReady,
// Ping, MountSegment, ReMountSegment, UnmountSegment, PutStart, PutEnd,
// PutRevoke, GetReplicaList, ExistKey, Remove) with every type they carry,
// both ways (a client encodes requests and decodes responses, a Go test
// server the reverse), byte-identical to upstream and proven against the
// vectors upstream's own code wrote (testdata/upstream/rpc: its README is
// the specification this package follows, with the upstream file and line
// of each fact).
//
// Why: a harness that speaks the master's own RPC can drive and judge an
// unmodified upstream master, and what it sends is what upstream's
// MasterClient sends, so a difference in behaviour is the master's.
//
// It is pure like the rest of impl/contract: no I/O, no state, no panic on
// any input. harness/cororpc is the connection that uses it.
//
// # Frames
//
// A request is a 20-byte header (magic 21, version 0, serialize_type 0 for
// struct_pack, msg_type 0, then seq_num, function_id, body length and
// attachment length as little-endian uint32s) and the body; a response is a
// 16-byte header (magic, version, err_code, msg_type, seq_num echoing the
// request's, body length, attachment length) and the body
// (coro_rpc/impl/protocol/coro_rpc_protocol.hpp:60-79). Both headers go out
// as their packed fields and nothing else: client and server write them
// with struct_pack's DISABLE_ALL_META_INFO (coro_rpc_client.hpp:1295-1299,
// coro_rpc_protocol.hpp:235-237). A client numbers its requests from 0 on
// each connection.
//
// The function id is the first four bytes of the MD5 digest of the
// handler's qualified name ("mooncake::WrappedMasterService::Ping"), read
// big-endian (struct_pack/md5_constexpr.hpp:320-323, which the router's
// auto_gen_register_key applies to the function's name, router.hpp:122-126);
// FunctionID computes it, and the Fn constants are the ids of the handlers
// here. A master without the id answers err_code 11.
//
// # Bodies
//
// A request body is struct_pack of the handler's parameter list with its
// exact (decayed) parameter types (coro_rpc_client.hpp:1373-1389): one
// parameter is packed as itself, several as a std::tuple, none as an empty
// body (struct_pack/packer.hpp:81-89). Every parameter is sent, those with
// C++ defaults (tenant_id, replica_type, force) too, as upstream's
// MasterClient does (mooncake-store/src/master_client.cpp); a body that does
// not decode as the parameter list is answered with err_code 4,
// invalid_rpc_arguments (rpc_execute.hpp:83-105).
//
// A response body with err_code 0 is struct_pack of the handler's return
// value (rpc_execute.hpp:140-156), for every handler here a
// tl::expected<T, ErrorCode> (Expected): a has-value byte, then T (nothing
// for void) or the int32 error code. So application errors (ErrorCode,
// such as OBJECT_NOT_FOUND) travel in responses with err_code 0.
//
// Any other err_code is a transport error (RPCError; its codes are
// coro_rpc's errc, errno.h:20-39): the body is struct_pack of the message
// string, or, for a code above 255, err_code is 255 and the body a
// std::pair<uint16_t, std::string> of the code and the message
// (coro_rpc_protocol.hpp:191-239). coro_rpc_client closes its connection
// after one (coro_rpc_client.hpp:1709-1716).
//
// # The two variants
//
// A body begins with a 4-byte hash of its type (MD5 of the type literal,
// bit 0 cleared; struct_pack/type_calculate.hpp:508-516); bit 0 set means a
// metainfo byte follows (struct_pack/packer.hpp:100-139). struct_pack
// writes its type literal after that byte only in builds without NDEBUG
// (type_calculate.hpp:745-752), and upstream's CMake sets the Release flags
// to -O3 alone (mooncake-common/common.cmake:22-23), so a Release master
// (and a client built likewise) writes it, while a build with -DNDEBUG
// (RelWithDebInfo) does not. Both forms are on the wire in practice: every
// encoder here takes a Variant, and every decoder accepts both and, when
// the literal is present, checks it byte for byte as upstream's reader does
// (unpacker.hpp:550-619; contract.ErrTypeHash names the first byte that
// differs). A container length takes one, two, four or eight bytes, the
// width chosen from the largest container in the whole body, not per
// container (calculate_size.hpp:426-446), and announced in the metainfo
// byte, which is then written even without the literal;
// impl/contract/structpack does this for every codec of the contract.
//
// # Types
//
// The replica descriptor (with its variant), the UUID and the object data
// type are impl/contract/metadata's, the same upstream types the OpLog
// payloads and the snapshot carry; the rest (Segment, ReplicateConfig,
// ObjectMeta, PingResponse, GetReplicaListResponse and the enums) are
// declared here, each field in upstream's declaration order, which is the
// wire order. Optional values are pointers (nil: std::nullopt); an empty
// vector decodes as nil.
//
// # Stricter than upstream
//
// Like impl/contract/structpack, the decoders refuse what no upstream
// writer produces and upstream's reader would let pass: bytes after the
// value, a bool byte other than 0 or 1, unknown metainfo bits. A header
// decoder checks the magic only; the version, serialize_type and msg_type
// bytes come back as read.
package cororpc
