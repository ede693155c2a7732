package snapshot

import (
	"errors"
	"fmt"

	"github.com/oplogha/oplogha/impl/contract"
)

// Decode errors, typed so callers (bootstrap, audits) can branch on them.
var (
	ErrMalformed       = errors.New("malformed snapshot record")
	ErrVersion         = errors.New("unsupported snapshot version")
	ErrTruncated       = errors.New("snapshot payload truncated")
	ErrOverflow        = errors.New("snapshot field overflows")
	ErrChecksum        = errors.New("snapshot checksum mismatch")
	ErrCount           = errors.New("snapshot object count mismatch")
	ErrCursorMismatch  = errors.New("snapshot cursor fields disagree")
	ErrIdentity        = errors.New("snapshot identity fields disagree")
	ErrTrailing        = errors.New("snapshot payload has trailing bytes")
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
