package snapshot

import (
	"errors"

	"github.com/minio/crc64nvme"

	"github.com/oplogha/oplogha/impl/state"
)

// typed reports an error that is one of the package's sentinel errors.
func typed(err error) bool {
	for _, e := range []error{ErrMalformed, ErrVersion, ErrTruncated, ErrOverflow, ErrChecksum, ErrCount,
		ErrCursorMismatch, ErrIdentity, ErrTrailing, ErrBadChecksumTag} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

func crcOf(b []byte) uint64 { return crc64nvme.Checksum(b) }

// isBuilderErr reports a state-level rejection (the payload decoded but its
// content could not be a real state).
func isBuilderErr(err error) bool {
	for _, e := range []error{state.ErrMalformed, state.ErrSegmentNotFound, state.ErrSegmentMismatch} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
