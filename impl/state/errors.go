package state

import (
	"errors"
	"fmt"
)

// Sentinel errors. Apply wraps them in an *ApplyError that says where.
var (
	ErrMalformed        = errors.New("malformed entry")
	ErrUnknownOp        = errors.New("unknown op type")
	ErrObjectExists     = errors.New("object already exists")
	ErrObjectNotFound   = errors.New("object not found")
	ErrSegmentExists    = errors.New("segment already mounted")
	ErrSegmentNotFound  = errors.New("segment not mounted")
	ErrSegmentMismatch  = errors.New("replica does not fit its segment")
	ErrDiscontinuous    = errors.New("batch does not continue the cursor")
	ErrInvalidBatchSpan = errors.New("batch sequence span does not match its entries")
)

// ApplyError locates a failed entry. Index is -1 when the batch as a whole is
// rejected (discontinuity, bad span). Its message names the entry by its
// position (batch, index, sequence) only: it reaches logs, which must never
// hold a tenant or key; callers that need them read the fields.
type ApplyError struct {
	BatchID uint64
	Index   int
	Seq     uint64
	Op      OpType
	Tenant  string
	Key     string
	Err     error
}

func (e *ApplyError) Error() string {
	if e.Index < 0 {
		return fmt.Sprintf("batch %d: %v", e.BatchID, e.Err)
	}
	return fmt.Sprintf("batch %d entry %d (seq %d, %s): %v", e.BatchID, e.Index, e.Seq, e.Op, e.Err)
}

func (e *ApplyError) Unwrap() error { return e.Err }
