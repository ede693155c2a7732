package legacysnap

import (
	"errors"

	"github.com/oplogha/oplogha/impl/contract"
)

// Errors a reader branches on. Every failure of Read that the snapshot
// causes (not the store: a Getter's other errors are wrapped as they come)
// wraps exactly one of these.
var (
	// ErrNotFound: an object of the snapshot is not there. A Getter reports
	// a missing object with an error wrapping it.
	ErrNotFound   = errors.New("legacy snapshot object not found")
	ErrID         = contract.ErrLegacySnapshotID // the contract's: the import record names an id
	ErrDescriptor = errors.New("legacy descriptor malformed")
	ErrManifest   = errors.New("legacy manifest mismatch")
	ErrTruncated  = errors.New("legacy snapshot truncated")
	ErrMalformed  = errors.New("legacy snapshot malformed")
	// ErrContent: the files decode but do not form a consistent state (a
	// duplicate key, a segment mounted twice, a discarded replica upstream's
	// decoder refuses…).
	ErrContent = errors.New("legacy snapshot content invalid")
)
