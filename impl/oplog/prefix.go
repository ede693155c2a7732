package oplog

import (
	"fmt"

	"github.com/oplogha/oplogha/impl/contract/batchlog"

	"github.com/oplogha/oplogha/impl/state"
)

// DurablePrefix is the highest batch and sequence acknowledged as durable.
// The zero value is the S01 zero state: an initialised cluster with no batch.
// Its record is upstream's (batchlog.DurablePrefix):
// {"batch_id":N,"last_seq":M,"schema_version":1}.
type DurablePrefix struct {
	BatchID uint64
	LastSeq uint64
}

// Cursor is the prefix as a state cursor.
func (p DurablePrefix) Cursor() state.Cursor { return state.Cursor{BatchID: p.BatchID, Seq: p.LastSeq} }

// Encode returns the record upstream's EncodeDurablePrefix writes for p.
func (p DurablePrefix) Encode() []byte {
	return batchlog.EncodeDurablePrefix(batchlog.DurablePrefix{BatchID: p.BatchID, LastSeq: p.LastSeq})
}

// DecodeDurablePrefix decodes a durable prefix record as upstream's decoder
// does (any JSON object with the three fields, see contract), then checks
// what upstream checks of a prefix at startup, (N==0) == (M==0), and that
// M >= N (batch ids start at 1 and each batch holds at least one sequence).
func DecodeDurablePrefix(data []byte) (DurablePrefix, error) {
	cp, err := batchlog.DecodeDurablePrefix(data)
	if err != nil {
		return DurablePrefix{}, codecErr(err)
	}
	p := DurablePrefix{BatchID: cp.BatchID, LastSeq: cp.LastSeq}
	if (p.BatchID == 0) != (p.LastSeq == 0) {
		return DurablePrefix{}, fmt.Errorf("%w: durable prefix has inconsistent zero fields: batch_id %d with last_seq %d", ErrMalformed, p.BatchID, p.LastSeq)
	}
	if p.LastSeq < p.BatchID {
		return DurablePrefix{}, fmt.Errorf("%w: durable prefix last_seq %d below batch_id %d", ErrMalformed, p.LastSeq, p.BatchID)
	}
	return p, nil
}
