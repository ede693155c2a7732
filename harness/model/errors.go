package model

import (
	"errors"
	"fmt"

	"github.com/oplogha/oplogha/impl/contract/batchlog"
)

var (
	// ErrDiscontinuous: a batch that does not continue the state's cursor
	// (its id, its first sequence id, or its span against its entries).
	ErrDiscontinuous = errors.New("batch does not continue the cursor")
	// ErrRejected: upstream's applier refuses an entry of the batch.
	ErrRejected = errors.New("entry rejected by upstream's applier")
	// ErrCursor: an inconsistent cursor ((batch == 0) != (seq == 0)).
	ErrCursor = errors.New("inconsistent cursor")
	// ErrSnapshot: a starting point that cannot be a state.
	ErrSnapshot = errors.New("not a state")
	// ErrUnknown: the durable history does not say what the state is
	// there (the reason is wrapped with it).
	ErrUnknown = errors.New("the model cannot rebuild the state")
	// ErrNoStart: the history begins from a snapshot (a legacy import)
	// and the walk was given no start for it. Always with ErrUnknown.
	ErrNoStart = errors.New("the model has no start for it")
)

// RejectedError is a batch that upstream's applier would stop in: the
// entry it refuses and why. The model applies nothing of the batch, and
// claims no state after it (upstream keeps the entries before the refused
// one and stops its catch-up there: oplog_batch_standby_reader.cpp:127-131).
type RejectedError struct {
	BatchID uint64
	Index   int    // the entry's index in the batch
	Seq     uint64 // its sequence id
	Op      batchlog.OpType
	Reason  string
}

func (e *RejectedError) Error() string {
	return fmt.Sprintf("batch %d entry %d (seq %d, %s): %s", e.BatchID, e.Index, e.Seq, e.Op, e.Reason)
}

// Unwrap makes a RejectedError an ErrRejected.
func (e *RejectedError) Unwrap() error { return ErrRejected }
