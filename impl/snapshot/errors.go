package snapshot

import (
	"errors"
	"fmt"

	"github.com/oplogha/oplogha/impl/contract"
)

// Decode errors, typed so callers (bootstrap, audits) can branch on them.
// The format's are the contract's (contract.ErrSnapshotMalformed, …): the
// descriptor, manifest and envelope decode there.
var (
	ErrMalformed       = contract.ErrSnapshotMalformed
	ErrVersion         = contract.ErrSnapshotVersion
	ErrTruncated       = contract.ErrSnapshotTruncated
	ErrOverflow        = contract.ErrSnapshotOverflow
	ErrChecksum        = contract.ErrSnapshotChecksum
	ErrCount           = contract.ErrSnapshotCount
	ErrCursorMismatch  = contract.ErrSnapshotCursor
	ErrIdentity        = contract.ErrSnapshotIdentity
	ErrTrailing        = contract.ErrSnapshotTrailing
	ErrBadChecksumTag  = contract.ErrChecksumTag // the contract's: not "<algorithm>:<base64 of 8 bytes>"
	ErrCaptureTooLarge = errors.New("capture would exceed max_snapshot_capture_bytes")
	ErrDiskBudget      = errors.New("snapshot work dir lacks free space")
)

// SkipReason is why a snapshot attempt was skipped before any work (a metric label).
func SkipReason(err error) string {
	switch {
	case errors.Is(err, ErrCaptureTooLarge):
		return "memory_budget"
	case errors.Is(err, ErrDiskBudget):
		return "disk_budget"
	}
	return ""
}

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}
