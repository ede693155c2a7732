package snapshot

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
)

// ID is a snapshot id: {last_included_batch_id:%020d}-{lease id hex}-{random},
// unique per node and incarnation and sortable by cursor.
type ID struct {
	BatchID uint64
	Lease   int64
	Random  string
}

func (id ID) String() string { return fmt.Sprintf("%020d-%x-%s", id.BatchID, id.Lease, id.Random) }

// NewID draws a fresh id for a capture at batchID under lease.
func NewID(batchID uint64, lease int64) ID {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return ID{BatchID: batchID, Lease: lease, Random: hex.EncodeToString(b[:])}
}

var idPattern = regexp.MustCompile(`^([0-9]{20})-([0-9a-f]{1,16})-([0-9a-f]{16})$`)

// ParseID parses a snapshot id.
func ParseID(s string) (ID, error) {
	m := idPattern.FindStringSubmatch(s)
	if m == nil {
		return ID{}, malformed("snapshot id %q", s)
	}
	batch, err := strconv.ParseUint(m[1], 10, 64)
	if err != nil {
		return ID{}, fmt.Errorf("%w: snapshot id %q", ErrOverflow, s)
	}
	lease, err := strconv.ParseUint(m[2], 16, 63)
	if err != nil {
		return ID{}, fmt.Errorf("%w: snapshot id %q", ErrOverflow, s)
	}
	return ID{BatchID: batch, Lease: int64(lease), Random: m[3]}, nil
}
