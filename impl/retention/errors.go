package retention

import "errors"

// Range delete errors: why a guarded delete did not commit.
var (
	// ErrWouldDeletePrefix: a range delete would remove the durable prefix's batch.
	ErrWouldDeletePrefix = errors.New("range delete would remove the durable prefix batch")
	// ErrFloorBelow: the compaction floor does not cover the requested delete.
	ErrFloorBelow = errors.New("compaction floor does not cover the range")
	// ErrWriterFenced: the maintenance lease's maintenance key no longer holds
	// the token a guarded delete was made under.
	ErrWriterFenced = errors.New("maintenance writer token no longer holds")
	// ErrFloorMoved: the compaction floor changed between read and delete.
	ErrFloorMoved = errors.New("compaction floor changed during the delete")
	// ErrPointersMoved: a pointer slot no longer holds the value the cycle
	// validated (RFC: with either slot unavailable or invalid, no floor
	// advancement and no OpLog deletion).
	ErrPointersMoved = errors.New("a snapshot pointer changed since the cycle validated it")
)
