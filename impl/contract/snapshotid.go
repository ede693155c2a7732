package contract

import (
	"fmt"
	"regexp"
	"strconv"
)

// SnapshotID is a snapshot id, the name of a snapshot's directory in the
// object store and the snapshot_id of its pointer, descriptor and manifest:
//
//	{last_included_batch_id:%020d}-{lease id, lowercase hex}-{random, 16 lowercase hex digits}
//
// The RFC ("Object Layout and Immutability") asks for an id unique within
// the namespace with enough entropy to tell nodes and incarnations apart;
// this form is the project's (impl/master/CONTRACT.md §4): the lease is the maintenance lease
// the snapshot was made under (an auditor checks the pointer against the
// writer key with it), and ids sort by cursor. impl/snapshot's ID is this
// type; it draws the random part (NewID).
type SnapshotID struct {
	BatchID uint64
	Lease   int64
	Random  string
}

func (id SnapshotID) String() string {
	return fmt.Sprintf("%020d-%x-%s", id.BatchID, id.Lease, id.Random)
}

var snapshotIDPattern = regexp.MustCompile(`^([0-9]{20})-([0-9a-f]{1,16})-([0-9a-f]{16})$`)

// ParseSnapshotID parses a snapshot id. Anything but the exact form, a
// batch id above 2^64-1 or a lease above 2^63-1 included, is ErrSnapshotID.
func ParseSnapshotID(s string) (SnapshotID, error) {
	m := snapshotIDPattern.FindStringSubmatch(s)
	if m == nil {
		return SnapshotID{}, newError(ErrSnapshotID, strconv.Quote(s))
	}
	batch, err := strconv.ParseUint(m[1], 10, 64)
	if err != nil {
		return SnapshotID{}, newError(ErrSnapshotID, strconv.Quote(s)+": batch id out of range")
	}
	lease, err := strconv.ParseUint(m[2], 16, 63)
	if err != nil {
		return SnapshotID{}, newError(ErrSnapshotID, strconv.Quote(s)+": lease out of range")
	}
	return SnapshotID{BatchID: batch, Lease: int64(lease), Random: m[3]}, nil
}
