package snapshot

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"github.com/oplogha/oplogha/impl/contract"
)

// ID is a snapshot id: {last_included_batch_id:%020d}-{lease id hex}-{random},
// unique per node and incarnation and sortable by cursor. The format is the
// contract's (contract.SnapshotID, which the harness reads it through).
type ID = contract.SnapshotID

// NewID draws a fresh id for a capture at batchID under lease.
func NewID(batchID uint64, lease int64) ID {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return ID{BatchID: batchID, Lease: lease, Random: hex.EncodeToString(b[:])}
}

// ParseID parses a snapshot id (contract.ParseSnapshotID). A malformed id,
// or one whose batch id or lease is out of range, is ErrMalformed here and
// contract.ErrSnapshotID.
func ParseID(s string) (ID, error) {
	id, err := contract.ParseSnapshotID(s)
	if err != nil {
		return ID{}, &contractError{kind: ErrMalformed, err: err, msg: fmt.Sprintf("%v: snapshot id %s", ErrMalformed, reason(err))}
	}
	return id, nil
}
