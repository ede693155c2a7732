package publish

import (
	"github.com/oplogha/oplogha/impl/contract"
	"github.com/oplogha/oplogha/impl/snapshot"
)

// The pointer record is the contract's (impl/contract/pointer.go): the
// harness reads it through impl/contract, and this package writes what that
// decodes. These names keep the implementation's callers as they were.

// PointerSchemaVersion is the pointer record schema.
const PointerSchemaVersion = contract.PointerSchemaVersion

// Pointer is the value of /snapshot/latest or /snapshot/fallback.
type Pointer = contract.Pointer

// ErrMalformedPointer: a pointer value that does not decode or validate.
var ErrMalformedPointer = contract.ErrMalformedPointer

// DecodePointer decodes a pointer strictly (no unknown fields, canonical).
func DecodePointer(data []byte) (Pointer, error) { return contract.DecodePointer(data) }

// FromDescriptor builds the pointer that names a written snapshot.
func FromDescriptor(d snapshot.Descriptor) Pointer { return d.Pointer() }

// Agree checks that a pointer and the descriptor it names say the same.
func Agree(p Pointer, d snapshot.Descriptor) error { return d.Agree(p) }
