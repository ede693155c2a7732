package batchsnap

import (
	"fmt"

	"github.com/oplogha/oplogha/impl/contract"
)

// Sentinels a caller branches on (errors.Is). Each is also one of the
// contract's: a version is contract.ErrVersion, a size or CRC32C
// contract.ErrChecksum, anything else contract.ErrMalformed. Decode
// failures carry upstream's reason where upstream has one (jsoncpp's parse
// errors verbatim, "field must be uint64: manifest_size", "Invalid snapshot
// object chunk").
var (
	// ErrMalformed: a descriptor, manifest, segments or object chunk that
	// does not decode.
	ErrMalformed = contract.NewKind("malformed snapshot object", contract.ErrMalformed)
	// ErrVersion: a schema_version or snapshot_format this package does not know.
	ErrVersion = contract.NewKind("unsupported snapshot version", contract.ErrVersion)
	// ErrChecksum: an object whose size or CRC32C is not the one its
	// pointer, descriptor or manifest records.
	ErrChecksum = contract.NewKind("snapshot object size or CRC32C mismatch", contract.ErrChecksum)
	// ErrCount: an object chunk whose index or object count is not the
	// manifest's.
	ErrCount = contract.NewKind("snapshot object chunk index or count mismatch", contract.ErrMalformed)
	// ErrIdentity: pointer, descriptor and manifest disagree on the
	// snapshot's identity (id, cursor, view), or an object is not at the
	// key the layout gives it.
	ErrIdentity = contract.NewKind("snapshot identity fields disagree", contract.ErrMalformed)
	// ErrMalformedPointer: a pointer value that does not decode or validate.
	ErrMalformedPointer = contract.NewKind("malformed snapshot pointer", contract.ErrMalformed)
)

func fail(kind error, reason string) error { return contract.NewError(kind, reason) }

func failf(kind error, format string, args ...any) error {
	return contract.NewError(kind, fmt.Sprintf(format, args...))
}
