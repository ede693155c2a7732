package snapshot

import (
	"errors"

	"github.com/oplogha/oplogha/impl/contract/batchsnap"
)

// Errors callers branch on. A snapshot that does not verify or decode is
// one of batchsnap's (ErrMalformed, ErrVersion, ErrChecksum, ErrCount,
// ErrIdentity), re-exported here.
var (
	ErrMalformed = batchsnap.ErrMalformed
	ErrVersion   = batchsnap.ErrVersion
	ErrChecksum  = batchsnap.ErrChecksum
	ErrCount     = batchsnap.ErrCount
	ErrIdentity  = batchsnap.ErrIdentity
	// ErrWriterArguments: what a writer was asked to write cannot be a
	// snapshot (upstream writer.cpp: "Invalid batch OpLog snapshot writer
	// arguments"); nothing is touched.
	ErrWriterArguments = errors.New("Invalid batch OpLog snapshot writer arguments")
	// ErrPrefixTaken: an object already lies under the candidate's prefix
	// (upstream: "Snapshot candidate prefix already exists"): a second
	// attempt at the same batch under the same lease, or a crash's orphans.
	// Nothing is written or deleted.
	ErrPrefixTaken     = errors.New("Snapshot candidate prefix already exists")
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

// StageError says which stage of PrepareAndWrite failed: "encode" (the
// encoder or the decode-check) or "upload" (the prefix check, an object's
// verified upload, the manifest or descriptor).
type StageError struct {
	Stage string
	Err   error
}

func (e *StageError) Error() string { return e.Stage + ": " + e.Err.Error() }
func (e *StageError) Unwrap() error { return e.Err }
