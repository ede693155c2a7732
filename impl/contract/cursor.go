package contract

import "fmt"

// Cursor is a position in the batch OpLog: the last complete batch applied
// and the last sequence id it held. The zero Cursor is the empty state
// before batch 1. A snapshot pointer, a snapshot and a legacy import record
// each name one (Pointer.Cursor; ImportRecord's BatchID and LastSeq);
// impl/state's Cursor is this type.
type Cursor struct {
	BatchID uint64 `json:"batch_id"`
	Seq     uint64 `json:"seq"`
}

// Consistent reports whether the cursor obeys (BatchID == 0) == (Seq == 0).
func (c Cursor) Consistent() bool { return (c.BatchID == 0) == (c.Seq == 0) }

func (c Cursor) String() string { return fmt.Sprintf("batch %d seq %d", c.BatchID, c.Seq) }
