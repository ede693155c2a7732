package audit

import (
	"fmt"
	"math"
	"strings"

	"github.com/oplogha/oplogha/impl/contract/batchsnap"
	"github.com/oplogha/oplogha/impl/contract/keyspace"
)

// storeWrites are the operations of an S3 access log that put bytes under
// a key.
var storeWrites = map[string]bool{"s3_PutObject": true, "s3_CreateMultipartUpload": true, "s3_UploadPart": true,
	"s3_CompleteMultipartUpload": true, "s3_CopyObject": true}

// judgeUploads checks upload-advances from the object store's own record
// of the requests it served and etcd's history: every snapshot a request
// wrote an object of names, in its id, a batch and the maintenance lease
// it was made under. While a lease holds the maintenance key only its
// holder moves the pointers, and a valid latest never regresses; so from
// the moment the lease was taken latest named at least the batch it named
// then (the fallback's when latest did not decode: a candidate newer than
// the fallback may repair it), and a snapshot at or below that can never
// advance latest. A publisher must find that out after it takes the lease
// (it rereads the pointers: RFC "Scheduling"), before it captures, let
// alone uploads. A lease whose tenure reached the harness's first damage
// to the namespace or to a snapshot (a write of its own into etcd, a
// corrupted snapshot) is not judged: a holder may then repair what was
// damaged at a batch no higher than before. It returns the snapshots
// judged and those not (no lease taken in the history, or damage).
func judgeUploads(in *Input, ev *evidence) (judged, unjudged int) {
	acc := in.Objects.Access
	ks, err := keyspace.New(in.ClusterID)
	if err != nil {
		return 0, 0
	}
	firsts := map[string]StoreRequest{} // snapshot id → its first write
	var ids []string
	for _, q := range acc.Requests {
		if !storeWrites[q.Op] || q.Status < 200 || q.Status > 299 {
			continue
		}
		_, id, _, ok := batchsnap.ParseArtifactKey(q.Key)
		if !ok {
			continue
		}
		if _, seen := firsts[id.String()]; !seen {
			firsts[id.String()] = q
			ids = append(ids, id.String())
		}
	}
	if len(ids) == 0 {
		return 0, 0
	}
	damage := int64(math.MaxInt64) // the harness's first damage
	for rev := range injectedRevisions(in.Events) {
		damage = min(damage, rev)
	}
	for _, e := range in.Events {
		if len(e.Corrupted) > 0 {
			// a damage at a revision the harness could not read (0) may
			// have come at any point: no lease is judged
			damage = min(damage, max(e.EtcdRevision, 0))
		}
	}
	// Each maintenance lease's tenure, and latest's bound when it began.
	evs := etcdByRevision(in)
	type tenure struct {
		from, to int64 // to: when the key went to another lease or away (MaxInt64: never)
		bound    uint64
	}
	leases := map[int64]*tenure{}
	var holder *tenure
	values := map[string][]byte{}
	bound := func() uint64 {
		if p, err := batchsnap.DecodePointer(values[ks.SnapshotLatest()]); err == nil {
			return p.LastIncludedBatchID
		}
		if p, err := batchsnap.DecodePointer(values[ks.SnapshotFallback()]); err == nil {
			return p.LastIncludedBatchID
		}
		return 0
	}
	for _, e := range evs {
		switch e.Key {
		case ks.SnapshotLatest(), ks.SnapshotFallback():
			if e.Type == "put" {
				values[e.Key] = e.Value
			} else {
				delete(values, e.Key)
			}
		case ks.SnapshotMaintenance():
			lease := e.Lease
			if _, l, ok := parseToken(string(e.Value)); ok {
				lease = l
			}
			if e.Type == "put" && holder != nil && leases[lease] == holder {
				continue // the holder renewing its own value
			}
			if holder != nil && holder.to == math.MaxInt64 {
				holder.to = e.Revision
			}
			holder = nil
			if e.Type != "put" || lease == 0 {
				continue
			}
			if _, ok := leases[lease]; !ok {
				leases[lease] = &tenure{from: e.Revision, to: math.MaxInt64, bound: bound()}
			}
			holder = leases[lease]
		}
	}
	for _, idText := range ids {
		id, _ := batchsnap.ParseID(idText)
		t, ok := leases[id.Lease]
		if !ok || (damage != math.MaxInt64 && t.to >= damage) {
			unjudged++
			continue
		}
		judged++
		if id.BatchID <= t.bound {
			f := firsts[idText]
			ev.add("[upload-advances] snapshot %s: %s %s (%d): its batch %d is at or below latest's batch %d when its maintenance lease "+
				"%x was taken (rev %d), so it could never advance latest; the attempt should have stopped before it captured, yet it uploaded",
				idText, f.Op, f.Key, f.Status, id.BatchID, t.bound, id.Lease, t.from)
		}
	}
	return judged, unjudged
}

// storeAccessNote says what the store's record held, for the summary.
func storeAccessNote(acc *StoreAccess, judged, unjudged int) string {
	var parts []string
	parts = append(parts, fmt.Sprintf("%d store requests recorded, %d snapshots' uploads judged", len(acc.Requests), judged))
	if unjudged > 0 {
		parts = append(parts, fmt.Sprintf("%d not judged (no lease taken in the history, or a lease the harness's damage reached)", unjudged))
	}
	if acc.Truncated {
		parts = append(parts, "the record truncated")
	}
	if acc.Error != "" {
		parts = append(parts, "the record unreadable past: "+acc.Error)
	}
	return strings.Join(parts, ", ")
}
