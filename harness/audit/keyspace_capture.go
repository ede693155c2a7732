package audit

import (
	"fmt"
	"strings"

	"github.com/oplogha/oplogha/harness/etcddump"
	"github.com/oplogha/oplogha/harness/history"
	"github.com/oplogha/oplogha/impl/contract/batchsnap"
)

// captureTrack follows, through the MVCC history, who was the primary and
// which node holds which maintenance lease, so that every pointer write
// can be tied to the node that published it and to the primary that
// appended the batch it captured (standby-captured).
//
// The primary that appended a batch is the node that claimed the producer
// view the batch was appended under (every append is fenced on the view):
// the election's leader when the view was claimed, the oldest by create
// revision of the candidate keys under Keyspace.LeaderCandidates (each put
// under its campaign's session lease, its value the node's
// advertise_url). A pointer's snapshot id names the maintenance lease it
// was made under; the writer key put under that lease holds the owner
// token "{node_id}/{lease id hex}/{random}" (docs/protocol.md). A node's
// advertise_url and node_id meet in its config (Input.Advertised); where
// they do not, the pointer is counted as not attributable, never guessed.
type captureTrack struct {
	advertised map[string]string     // advertise_url → node id
	candidates map[string]candidate  // present candidate keys
	tokens     map[int64]string      // maintenance lease → owner token
	claimer    map[uint64]*candidate // producer view → the leader that claimed it
	// ended holds, per node, the etcd revisions at which the harness had
	// ended its process (Event.Ended): a node's work after one is a later
	// incarnation's.
	ended map[string][]int64
	// endedUnknown are the nodes the harness ended at a revision it could
	// not read (etcd unreachable then): their captures are not judged.
	endedUnknown map[string]bool
}

// candidate is one election candidacy.
type candidate struct {
	key       string
	createRev int64
	url       string
}

func newCaptureTrack(advertised map[string]string) *captureTrack {
	return &captureTrack{advertised: advertised, candidates: map[string]candidate{}, tokens: map[int64]string{},
		claimer: map[uint64]*candidate{}, ended: map[string][]int64{},
		endedUnknown: map[string]bool{}}
}

// token records the owner token a writer key put under lease holds (the
// lease also parsed from the token, for histories without lease ids).
func (t *captureTrack) token(lease int64, token string) {
	if lease != 0 {
		t.tokens[lease] = token
	}
	if _, l, ok := parseToken(token); ok {
		t.tokens[l] = token
	}
}

// parseToken splits an owner token into its node id and lease.
func parseToken(token string) (node string, lease int64, ok bool) {
	parts := strings.Split(token, "/")
	if len(parts) < 3 {
		return "", 0, false
	}
	var l uint64
	if _, err := fmt.Sscanf(parts[len(parts)-2], "%x", &l); err != nil || l > 1<<63-1 {
		return "", 0, false
	}
	return strings.Join(parts[:len(parts)-2], "/"), int64(l), true
}

// elect applies one revision's candidate key changes.
func (t *captureTrack) elect(evs []etcddump.Event) {
	for _, e := range evs {
		if e.Type == "put" {
			if old, ok := t.candidates[e.Key]; ok && old.createRev == e.CreateRevision {
				old.url = string(e.Value)
				t.candidates[e.Key] = old
				continue
			}
			t.candidates[e.Key] = candidate{key: e.Key, createRev: e.CreateRevision, url: string(e.Value)}
		} else {
			delete(t.candidates, e.Key)
		}
	}
}

// leader is the oldest candidacy present, or nil.
func (t *captureTrack) leader() *candidate {
	var out *candidate
	for _, c := range t.candidates {
		if out == nil || c.createRev < out.createRev {
			c := c
			out = &c
		}
	}
	return out
}

// claimed records the leader at the claim of view v.
func (t *captureTrack) claimed(v uint64) { t.claimer[v] = t.leader() }

// judgeCapture: the latest pointer written at rev names a snapshot that a
// standby captured. It fails when the publishing node (the owner of the
// lease the snapshot id names) is the primary that appended the captured
// batch (the node that claimed its producer view) and that candidacy
// still leads the election now: the node was the primary from the batch
// through the publication, so it captured as the primary. A node that lost
// the leadership in between, or whose process the harness ended in between
// (its candidacy outlives the process until its lease expires), may have
// captured as a standby since: not judged (counted).
func (r *replay) judgeCapture(rev int64, p *batchsnap.Pointer) {
	t := r.capture
	id, err := batchsnap.ParseID(p.SnapshotID)
	if err != nil {
		return
	}
	token, ok := t.tokens[id.Lease]
	if !ok {
		r.n["standby-captured: pointer writes whose lease put no writer token in the history"]++
		return
	}
	publisher, _, ok := parseToken(token)
	if !ok {
		r.n["standby-captured: pointer writes whose owner token names no node"]++
		return
	}
	primary, view, lead, why := r.batchHolder(p.LastIncludedBatchID)
	switch why {
	case holderNoBatch:
		r.n["standby-captured: pointer writes whose batch is not in the history"]++
		return
	case holderNoCandidate:
		r.n["standby-captured: pointer writes whose batch's view was claimed with no candidate in the election"]++
		return
	case holderNoNode:
		r.n["standby-captured: pointer writes whose primary cannot be tied to a node (no advertise_url → node_id)"]++
		return
	}
	r.n["standby-captured"]++
	if primary != publisher {
		return
	}
	now := t.leader()
	if now == nil || now.key != lead.key || now.createRev != lead.createRev {
		r.n["standby-captured: published by the primary of its batch after it lost the leadership (not judged)"]++
		return
	}
	if t.endedUnknown[primary] {
		r.n["standby-captured: published by a node the harness ended at a revision it could not read (not judged)"]++
		return
	}
	for _, end := range t.ended[primary] {
		if lead.createRev < end && end <= rev {
			// The process that led was ended: its candidacy outlives it
			// until its lease expires, and the node's new process may
			// capture as a standby meanwhile.
			r.n["standby-captured: published by a later incarnation of its batch's primary (not judged)"]++
			return
		}
	}
	r.add("standby-captured", rev, "pointer to %s (lease %x, node %s) captured batch %d, which %s appended as the primary "+
		"(it claimed view %d with its candidacy %s since rev %d), and %s still led the election when the pointer was written", p.SnapshotID,
		id.Lease, publisher, p.LastIncludedBatchID, primary, view, lead.key, lead.createRev, primary)
}

// Why a batch's holder cannot be named (batchHolder).
const (
	holderNoBatch     = "batch not in the history"
	holderNoCandidate = "view claimed with no candidate"
	holderNoNode      = "no advertise_url → node_id"
)

// batchHolder names the node that appended batch as the primary: the one
// that claimed the producer view the batch was appended under, as the
// election's leader then (lead, its candidacy). why is non-empty when it
// cannot be named.
func (r *replay) batchHolder(batch uint64) (node string, view uint64, lead *candidate, why string) {
	view, ok := r.batchView[batch]
	if !ok {
		return "", 0, nil, holderNoBatch
	}
	lead = r.capture.claimer[view]
	if lead == nil {
		return "", view, nil, holderNoCandidate
	}
	node, ok = r.capture.advertised[lead.url]
	if !ok {
		return "", view, lead, holderNoNode
	}
	return node, view, lead, ""
}

// judgeAckHolders: every acknowledgement that names its batch came from
// the node that held the producer view the batch was appended under (the
// election's leader when that view was claimed). A deposed primary that
// appends after its successor's claim — which only the view compare
// refuses while the successor has not appended yet — acknowledges from a
// batch of its successor's view. What cannot be tied (no batch id in the
// answer, a batch not in the history, a view claimed with no candidate,
// no advertise_url → node id) is counted by reason, never guessed.
func (r *replay) judgeAckHolders(ops []history.Op) {
	for i := range ops {
		op := &ops[i]
		if _, mutation := ackedOp(op); !mutation || op.Outcome != history.OK || op.Node == "" {
			continue
		}
		if op.BatchID == 0 {
			r.n["ack-from-view-holder: acknowledgements that name no batch"]++
			continue
		}
		holder, view, _, why := r.batchHolder(op.BatchID)
		switch why {
		case holderNoBatch:
			r.n["ack-from-view-holder: acknowledgements whose batch is not in the history"]++
			continue
		case holderNoCandidate:
			r.n["ack-from-view-holder: acknowledgements whose batch's view was claimed with no candidate in the election"]++
			continue
		case holderNoNode:
			r.n["ack-from-view-holder: acknowledgements whose view holder cannot be tied to a node (no advertise_url → node_id)"]++
			continue
		}
		r.n["ack-from-view-holder"]++
		if holder != op.Node {
			r.ev.add("[ack-from-view-holder] %s %s/%s acknowledged at %s by %s from batch %d, appended under producer view %d, which %s claimed",
				op.Kind, op.Tenant, op.Key, seconds(op.Complete), op.Node, op.BatchID, view, holder)
		}
	}
}
