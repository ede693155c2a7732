package batchsnap

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/oplogha/oplogha/impl/contract"
)

// ID is a snapshot id: "<last_included_batch_id>-<maintenance_lease_id>",
// both decimal (metadata.cpp BuildBatchOpLogSnapshotId, ParseSnapshotId).
// The lease is the maintenance lease the snapshot was made under, so an
// auditor can tie a pointer to the lease that held the maintenance key
// when it was written. An id is unique per lease and batch, not per
// attempt: a second attempt at the same batch under the same lease meets
// the first one's objects and fails (the writer refuses a taken prefix).
type ID struct {
	BatchID uint64
	Lease   int64 // 1..2^63-1
}

// String is the id's text; "" for a lease of zero or less, as upstream's
// BuildBatchOpLogSnapshotId returns.
func (id ID) String() string { return BuildID(id.BatchID, id.Lease) }

// BuildID is upstream's BuildBatchOpLogSnapshotId: "" for lease <= 0.
func BuildID(batchID uint64, lease int64) string {
	if lease <= 0 {
		return ""
	}
	return strconv.FormatUint(batchID, 10) + "-" + strconv.FormatInt(lease, 10)
}

// ParseID is upstream's ParseSnapshotId: exactly one '-', a batch id
// (0..2^64-1) and a lease (1..2^63-1) in decimal, and the text exactly what
// BuildID writes for them (no sign, no leading zero). Anything else is
// ErrSnapshotID.
func ParseID(s string) (ID, error) {
	sep := strings.IndexByte(s, '-')
	if sep <= 0 || sep+1 == len(s) || strings.IndexByte(s[sep+1:], '-') >= 0 {
		return ID{}, idError(s, "not <batch>-<lease>")
	}
	batch, err := strconv.ParseUint(s[:sep], 10, 64)
	if err != nil || !plainDecimal(s[:sep]) {
		return ID{}, idError(s, "batch id is not a decimal uint64")
	}
	lease, err := strconv.ParseInt(s[sep+1:], 10, 64)
	if err != nil || !plainDecimal(s[sep+1:]) || lease <= 0 || lease > math.MaxInt64 {
		return ID{}, idError(s, "lease is not a positive decimal int64")
	}
	if BuildID(batch, lease) != s {
		return ID{}, idError(s, "not in canonical form")
	}
	return ID{BatchID: batch, Lease: lease}, nil
}

// plainDecimal reports whether s is only ASCII digits (from_chars takes no
// sign or space).
func plainDecimal(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func idError(s, why string) error {
	return contract.NewError(contract.ErrSnapshotID, fmt.Sprintf("%q: %s", s, why))
}
