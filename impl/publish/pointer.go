package publish

import (
	"github.com/oplogha/oplogha/impl/contract/batchsnap"
)

// The pointer record is the contract's (impl/contract/batchsnap's
// pointer.go): the harness reads it through the contract, and this package
// writes what that decodes.

// PointerSchemaVersion is the pointer record schema.
const PointerSchemaVersion = batchsnap.PointerSchemaVersion

// Pointer is the value of /snapshot/latest or /snapshot/fallback.
type Pointer = batchsnap.Pointer

// ErrMalformedPointer: a pointer value that does not decode or validate.
var ErrMalformedPointer = batchsnap.ErrMalformedPointer

// DecodePointer decodes a pointer strictly (no unknown fields, canonical).
func DecodePointer(data []byte) (Pointer, error) { return batchsnap.DecodePointer(data) }
