package contract

import (
	"errors"
	"fmt"
)

// Sentinels of the snapshot objects (descriptor, manifest, envelope header,
// payload objects; impl/snapshot's ErrMalformed, ErrVersion, … are these).
// Each has its own text and is also one of the sentinels above
// (errors.Is matches both): a version is ErrVersion, a checksum
// ErrChecksum, anything else ErrMalformed.
var (
	// ErrSnapshotMalformed: not a snapshot record of the expected shape.
	ErrSnapshotMalformed error = &kind{text: "malformed snapshot record", of: ErrMalformed}
	// ErrSnapshotVersion: a schema, envelope, codec or checksum algorithm
	// version this package does not know.
	ErrSnapshotVersion error = &kind{text: "unsupported snapshot version", of: ErrVersion}
	// ErrSnapshotTruncated: fewer bytes than the record or object needs.
	ErrSnapshotTruncated error = &kind{text: "snapshot payload truncated", of: ErrMalformed}
	// ErrSnapshotOverflow: a field out of its range.
	ErrSnapshotOverflow error = &kind{text: "snapshot field overflows", of: ErrMalformed}
	// ErrSnapshotChecksum: stored bytes whose checksum is not the one recorded.
	ErrSnapshotChecksum error = &kind{text: "snapshot checksum mismatch", of: ErrChecksum}
	// ErrSnapshotCount: object or chunk counts that do not add up.
	ErrSnapshotCount error = &kind{text: "snapshot object count mismatch", of: ErrMalformed}
	// ErrSnapshotCursor: a cursor inconsistent in itself or with another record's.
	ErrSnapshotCursor error = &kind{text: "snapshot cursor fields disagree", of: ErrMalformed}
	// ErrSnapshotIdentity: the duplicated identity fields of pointer,
	// descriptor, manifest, envelope and stored objects disagree.
	ErrSnapshotIdentity error = &kind{text: "snapshot identity fields disagree", of: ErrMalformed}
	// ErrSnapshotTrailing: bytes after the end of a record or payload.
	ErrSnapshotTrailing error = &kind{text: "snapshot payload has trailing bytes", of: ErrMalformed}
)

func snapshotError(k error, format string, args ...any) *Error {
	return newError(k, fmt.Sprintf(format, args...))
}

// asKind is a contract error seen through a snapshot sentinel: errors.Is
// matches both (a descriptor's bad snapshot id is ErrSnapshotMalformed and
// ErrSnapshotID), and the message is the snapshot record's.
type asKind struct {
	kind error
	err  error
	msg  string
}

func (e *asKind) Error() string   { return e.msg }
func (e *asKind) Unwrap() []error { return []error{e.kind, e.err} }

// reasonOf is a contract error's reason, or its text.
func reasonOf(err error) string {
	var ce *Error
	if errors.As(err, &ce) {
		return ce.Reason
	}
	return err.Error()
}

// snapshotIDOf parses the snapshot id of a descriptor or manifest: a bad
// one is ErrSnapshotMalformed and ErrSnapshotID.
func snapshotIDOf(s string) (SnapshotID, error) {
	id, err := ParseSnapshotID(s)
	if err != nil {
		return SnapshotID{}, &asKind{kind: ErrSnapshotMalformed, err: err, msg: fmt.Sprintf("%v: snapshot id %s", ErrSnapshotMalformed, reasonOf(err))}
	}
	return id, nil
}

// checksumOf parses a snapshot record's checksum string: an untagged one
// is ErrChecksumTag, another algorithm ErrSnapshotVersion (and ErrVersion).
func checksumOf(s Checksum) (uint64, error) {
	_, v, err := ParseChecksum(s)
	if err != nil && errors.Is(err, ErrVersion) {
		err = &asKind{kind: ErrSnapshotVersion, err: err, msg: fmt.Sprintf("%v: %s", ErrSnapshotVersion, reasonOf(err))}
	}
	return v, err
}
