package snapshot

import "github.com/oplogha/oplogha/impl/contract/batchsnap"

// ID is a snapshot id: "<last included batch>-<maintenance lease>"
// (batchsnap.ID).
type ID = batchsnap.ID

// NewID is the id of a snapshot at batch made under lease.
func NewID(batch uint64, lease int64) ID { return ID{BatchID: batch, Lease: lease} }

// ParseID parses a snapshot id (batchsnap.ParseID).
func ParseID(s string) (ID, error) { return batchsnap.ParseID(s) }
