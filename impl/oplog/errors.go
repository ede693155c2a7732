package oplog

import (
	"errors"
	"fmt"
	"strings"
)

// Decode errors: what is wrong with a stored record. A codec error of
// impl/contract comes wrapped in one of them (errors.Is matches both).
var (
	ErrMalformed = errors.New("malformed record")
	ErrVersion   = errors.New("unsupported record version")
	ErrChecksum  = errors.New("record checksum mismatch")
	ErrSpan      = errors.New("batch sequence span does not match its entries")
)

// History errors: what is wrong with the sequence of records.
var (
	ErrGap             = errors.New("batch missing from the OpLog")
	ErrRegression      = errors.New("OpLog went backwards")
	ErrKeyMismatch     = errors.New("batch record does not match its key")
	ErrNoDurablePrefix = errors.New("durable prefix missing while batches exist")
	// ErrResidue: the namespace has no durable prefix and no batch, yet holds
	// what only a history leaves (a producer view, a compaction floor, a
	// snapshot pointer, an import record). It is not an empty cluster and
	// is never initialised as one.
	ErrResidue = errors.New("namespace holds residue without a provable history")
)

// ResidueError names the residue a namespace without a history holds.
type ResidueError struct {
	Keys []string
}

func (e *ResidueError) Error() string {
	return fmt.Sprintf("%v: %s (an operator must restore the history or reset the namespace)", ErrResidue, strings.Join(e.Keys, ", "))
}
func (e *ResidueError) Unwrap() error { return ErrResidue }

// Writer and delete errors: why an etcd transaction did not commit.
var (
	// ErrFenced: the producer view moved past this writer; it must stop writing.
	ErrFenced = errors.New("fenced: producer view changed")
	// ErrPrefixMoved: the durable prefix is not the one this writer last wrote or read.
	ErrPrefixMoved = errors.New("durable prefix moved under the writer")
	// ErrUnknownOutcome: a commit's outcome could not be resolved; the writer refuses
	// further appends until Resync.
	ErrUnknownOutcome = errors.New("commit outcome unknown")
	// ErrBatchTooLarge: a batch record is over the size one append may carry,
	// refused before anything was written (an entry over the group
	// committer's byte budget, or etcd answering "request is too large").
	// A definite failure: nothing is durable and the writer goes on.
	ErrBatchTooLarge = errors.New("batch too large for one etcd request")
)

// RecordError says which stored record failed to decode.
type RecordError struct {
	Key string
	Err error
}

func (e *RecordError) Error() string { return fmt.Sprintf("%s: %v", e.Key, e.Err) }
func (e *RecordError) Unwrap() error { return e.Err }

// FencedError carries the view that fenced the writer.
type FencedError struct {
	Mine, Current uint64
}

func (e *FencedError) Error() string {
	return fmt.Sprintf("fenced: producer view is %d, this writer holds %d", e.Current, e.Mine)
}
func (e *FencedError) Unwrap() error { return ErrFenced }
