package audit

import (
	"fmt"
	"sort"
	"strings"

	"github.com/oplogha/oplogha/harness/etcddump"
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
// it was made under. Latest only moves under the maintenance lease and
// never regresses, so from the moment that lease was taken latest's batch
// was at least what it was then; a snapshot at or below it can never
// advance latest, and a publisher must find that out (after the lease, it
// rereads the pointers: RFC "Scheduling") before it captures, let alone
// uploads. It returns the snapshots judged, those it could not tie to a
// lease taken in the history, and the violations.
func judgeUploads(in *Input, ev *evidence) (judged, untied int) {
	acc := in.Objects.Access
	ks, err := keyspace.New(in.ClusterID)
	if err != nil {
		return 0, 0
	}
	type first struct {
		op, key string
		status  int
	}
	firsts := map[string]first{} // snapshot id → its first write
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
			firsts[id.String()] = first{q.Op, q.Key, q.Status}
			ids = append(ids, id.String())
		}
	}
	if len(ids) == 0 {
		return 0, 0
	}
	// latest's batch when each maintenance lease was first taken.
	evs := append([]etcddump.Event(nil), in.Etcd...)
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].Revision < evs[j].Revision })
	type taken struct {
		rev    int64
		latest uint64
	}
	leases := map[int64]taken{}
	var latest uint64
	for _, e := range evs {
		switch {
		case e.Key == ks.SnapshotLatest() && e.Type == "put":
			if p, err := batchsnap.DecodePointer(e.Value); err == nil {
				latest = max(latest, p.LastIncludedBatchID)
			}
		case e.Key == ks.SnapshotMaintenance() && e.Type == "put":
			lease := e.Lease
			if _, l, ok := parseToken(string(e.Value)); ok {
				lease = l
			}
			if _, ok := leases[lease]; !ok && lease != 0 {
				leases[lease] = taken{e.Revision, latest}
			}
		}
	}
	for _, idText := range ids {
		id, _ := batchsnap.ParseID(idText)
		t, ok := leases[id.Lease]
		if !ok {
			untied++
			continue
		}
		judged++
		if id.BatchID <= t.latest {
			f := firsts[idText]
			ev.add("[upload-advances] snapshot %s: %s %s (%d): its batch %d is at or below latest's batch %d when its maintenance lease "+
				"%x was taken (rev %d), so it could never advance latest; the attempt should have stopped before it captured, yet it uploaded",
				idText, f.op, f.key, f.status, id.BatchID, t.latest, id.Lease, t.rev)
		}
	}
	return judged, untied
}

// storeAccessNote says what the store's record held, for the summary.
func storeAccessNote(acc *StoreAccess, judged, untied int) string {
	var parts []string
	parts = append(parts, fmt.Sprintf("%d store requests recorded, %d snapshots' uploads judged", len(acc.Requests), judged))
	if untied > 0 {
		parts = append(parts, fmt.Sprintf("%d not tied to a maintenance lease in the history", untied))
	}
	if acc.Truncated {
		parts = append(parts, "the record truncated")
	}
	if acc.Error != "" {
		parts = append(parts, "the record unreadable past: "+acc.Error)
	}
	return strings.Join(parts, ", ")
}
