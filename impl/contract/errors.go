package contract

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Every decode failure wraps exactly one of them, so callers
// branch with errors.Is; the *Error around it carries the detail.
var (
	// ErrMalformed: the bytes are not a record of the expected shape (JSON
	// that does not parse, wrong element count or types, base64 that is not
	// canonical, a struct_pack buffer that is truncated or has bytes left over).
	ErrMalformed = errors.New("malformed record")
	// ErrVersion: the record names a schema version this codec does not know.
	ErrVersion = errors.New("unsupported schema version")
	// ErrSpan: a batch's identity or sequence range is invalid: batch id 0,
	// first_seq 0, no entries, or last_seq-first_seq+1 != len(entries).
	ErrSpan = errors.New("invalid batch span")
	// ErrChecksum: the stored checksum is not the one computed.
	ErrChecksum = errors.New("checksum mismatch")
	// ErrUnknownOp: an entry's op type is outside 1..7.
	ErrUnknownOp = errors.New("op type outside the enum range")
	// ErrTenant: an entry's tenant id is not a valid upstream TenantId.
	ErrTenant = errors.New("invalid tenant id")
	// ErrTooLarge: an object key or payload is over upstream's size limit.
	ErrTooLarge = errors.New("object key or payload too large")
	// ErrTypeHash: a struct_pack buffer was written for another type (its
	// type hash or type literal does not match).
	ErrTypeHash = errors.New("struct_pack type mismatch")
)

// ErrLossy (an ErrMalformed) is what (*Batch).Lossless reports: a tenant or
// key is not valid UTF-8, so the record upstream's encoder (and EncodeBatch)
// writes for it decodes to different bytes.
var ErrLossy = fmt.Errorf("%w: string is not valid UTF-8 and does not survive the JSON round trip", ErrMalformed)

// Error is a decode (or encode validation) failure. Kind is one of the
// sentinels above; Reason is upstream's reason string for the same input
// where upstream has one (for the batch record and the durable prefix it is
// byte-for-byte what upstream's decoder reports, jsoncpp parse errors
// included), otherwise a description of ours.
type Error struct {
	Kind   error
	Reason string
	// Entry is the index of the batch entry at fault, or -1.
	Entry int
}

func (e *Error) Error() string {
	reason := strings.Join(strings.Fields(e.Reason), " ")
	var b strings.Builder
	b.WriteString(e.Kind.Error())
	if reason != "" && reason != e.Kind.Error() {
		b.WriteString(": ")
		b.WriteString(reason)
	}
	if e.Entry >= 0 {
		fmt.Fprintf(&b, " (entry %d)", e.Entry)
	}
	return b.String()
}

// Unwrap returns Kind, so errors.Is(err, ErrChecksum) and friends work.
func (e *Error) Unwrap() error { return e.Kind }

// NewError is an *Error of kind with a reason and no entry: how the codecs
// of this package and its subpackages report a failure.
func NewError(kind error, reason string) *Error {
	return newError(kind, reason)
}

// EntryError is an *Error of kind at batch entry entry.
func EntryError(kind error, entry int, reason string) *Error {
	return entryError(kind, entry, reason)
}

func newError(kind error, reason string) *Error {
	return &Error{Kind: kind, Reason: reason, Entry: -1}
}

func entryError(kind error, entry int, reason string) *Error {
	return &Error{Kind: kind, Reason: reason, Entry: entry}
}

// Sentinels of the project's records beside upstream's, each of its own
// text and an ErrMalformed (errors.Is matches both), because callers branch
// on them by name.
var (
	// ErrSnapshotID: a string that is not a snapshot id (batchsnap.ParseID).
	ErrSnapshotID error = &kind{text: "malformed snapshot id", of: ErrMalformed}
	// ErrLegacySnapshotID: a string that is not an upstream legacy snapshot
	// id (legacysnap.CheckLegacySnapshotID).
	ErrLegacySnapshotID error = &kind{text: "legacy snapshot id malformed", of: ErrMalformed}
)

// NewKind is a sentinel with a text of its own that is also of, one of the
// sentinels above (errors.Is matches both): how the contract's
// subpackages name the failures their callers branch on.
func NewKind(text string, of error) error { return &kind{text: text, of: of} }

// kind is a sentinel with a text of its own that is also another sentinel:
// errors.Is(err, ErrMalformedPointer) and errors.Is(err, ErrMalformed) both
// hold for a pointer that does not decode.
type kind struct {
	text string
	of   error
}

func (k *kind) Error() string { return k.text }
func (k *kind) Unwrap() error { return k.of }
