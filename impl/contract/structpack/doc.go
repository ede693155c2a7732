// Package structpack is the part of yalantinglibs struct_pack (the version
// upstream pins, 0.6.0 at 7801bc9a) that upstream's OpLog payloads and
// batch-OpLog snapshot objects use, in its default configuration (no fast
// varints, STRUCT_PACK_OPTIMIZE off).
//
// A buffer is
//
//		hash (4 bytes LE) [metainfo (1 byte) [compatible length] [type literal NUL]] body compatible-section
//
//	  - hash: the first 4 bytes of MD5(type literal), read big-endian, with
//	    bit 0 cleared; bit 0 set means a metainfo byte follows. The literal,
//	    and so the hash, leaves out compatible<> fields and field names.
//	  - metainfo: bits 0-1, the width of the compatible length (0 none, 1 two
//	    bytes, 2 four, 3 eight); bit 2, a type literal follows; bits 3-4, the
//	    width of every container length in the buffer (0 one byte, 1 two, 2
//	    four, 3 eight). It is written when the type has compatible fields, when
//	    the literal is written, or when the lengths are wider than one byte.
//	  - compatible length: the whole buffer's length, for types with
//	    compatible<> fields; the reader treats compatible fields past it as absent.
//	  - type literal: written only by builds without NDEBUG (upstream's
//	    Release build type, whose flags drop -DNDEBUG, and Debug); the
//	    RelWithDebInfo default has NDEBUG and writes none. A reader must
//	    accept both.
//	  - body: fields in declaration order, compatible<> fields skipped;
//	    integers, enums and bools little-endian at their C++ size; std::string
//	    and std::vector as a length then the elements; std::variant as a
//	    one-byte index then the alternative; std::optional as a has-value
//	    byte then the value; tl::expected as a has-value byte then the value
//	    (nothing for void) or the error; a trivially copyable struct such
//	    as std::pair<uint64_t, uint64_t> as its raw bytes; std::tuple and
//	    other structs as their fields in order.
//	  - compatible section: the compatible<> fields (here all version 1), in
//	    declaration order, each a has-value byte then the value.
//
// Container lengths all take the width chosen for the largest container in
// the whole buffer: below 2^8 one byte, below 2^16 two, below 2^32 four,
// else eight.
//
// Upstream's reader is looser than its writer in ways this one is not: it
// ignores bytes after what it reads, ignores a compatible length that does
// not match the buffer, keeps a compatible field whose value is cut short,
// does not check that a bool byte is 0 or 1, and ignores unknown metainfo
// bits and a compatible length on a type without compatible fields. Here
// each of these is an error: no upstream writer produces them.
//
// The codecs built on it are impl/contract/metadata (the OpLog entry
// payloads), impl/contract/batchsnap (the snapshot's segments and object
// chunks) and impl/contract/cororpc (the bodies of the client RPC). Errors are *contract.Error of kind contract.ErrMalformed or
// contract.ErrTypeHash.
package structpack
