package audit

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/oplogha/oplogha/impl/contract/batchlog"
	"github.com/oplogha/oplogha/impl/contract/batchsnap"
	"github.com/oplogha/oplogha/impl/contract/keyspace"
	"github.com/oplogha/oplogha/impl/contract/legacysnap"

	"github.com/oplogha/oplogha/harness/etcddump"
)

// KeyspaceOrder replays etcd's MVCC history of the namespace revision by
// revision, keeping a model of the namespace as of each revision, and checks
// every keyspace-order invariant of Invariants against the revision and the
// model just before it. Evidence lines start with the invariant's id.
//
// Revisions the harness itself wrote (fault events' Revisions) update the
// model without being judged: what the system does next must cope with them.
func KeyspaceOrder(in *Input) Result {
	ks, err := keyspace.New(in.ClusterID)
	if err != nil {
		return Result{Summary: "bad cluster id", Evidence: []string{err.Error()}}
	}
	r := newReplay(ks, in.Events, in.Advertised)
	events := in.Etcd
	for i := 0; i < len(events); {
		j := i
		for j < len(events) && events[j].Revision == events[i].Revision {
			j++
		}
		r.revision(events[i:j])
		i = j
	}
	r.countFencedOrphans(in.Objects)
	r.judgeAckHolders(in.Ops)
	if len(events) == 0 {
		r.ev.add("no etcd history in the bundle")
	}
	summary := fmt.Sprintf("%d revisions of history: %d batch appends, %d view claims, %d prefix moves, %d batch deletes, %d pointer publications",
		r.revs, r.n["append-continues"], r.n["view-grows"], r.prefixPuts, r.n["delete-under-floor"], r.n["pointers-monotonic"])
	if k := r.n["legacy-import-once"]; k > 0 {
		summary += fmt.Sprintf(", %d legacy import", k)
	}
	return Result{Pass: r.ev.empty(), Summary: summary, Evidence: r.ev.list(), Exercised: r.n}
}

// slot is one pointer slot as of a revision.
type slot struct {
	raw      []byte
	p        *batchsnap.Pointer // nil when absent or malformed
	injected bool               // the harness wrote the slot's value
}

// describe says what a slot held, for evidence.
func (s slot) describe() string {
	switch {
	case s.p != nil:
		return fmt.Sprintf("a valid pointer to %s at batch %d", s.p.SnapshotID, s.p.LastIncludedBatchID)
	case s.raw != nil:
		return "a value that did not decode either"
	}
	return "nothing"
}

// writer is the /snapshot/maintenance key (the maintenance lease's) as of a revision.
type writer struct {
	token string
	lease int64
	rev   int64
}

// garbled is the last seq of a batch the harness overwrote with garbage.
const garbled = ^uint64(0)

// replay is the namespace as of the revision being judged.
type replay struct {
	ks keyspace.Keyspace
	ev evidence
	n  map[string]int // exercised counts by invariant id

	injected  map[int64]bool
	corrupted map[string]int64 // snapshot id → the revision before which the run corrupted it

	view             uint64
	viewSet          bool
	prefix           *batchlog.DurablePrefix
	batches          map[uint64]uint64 // present batch → its last seq
	batchView        map[uint64]uint64 // batch → the view it was appended under
	floor            uint64
	floorRev         int64
	hasFloor         bool
	latest, fallback slot
	writer           *writer
	writerEnded      map[int64]int64 // lease → revision its maintenance key went away
	leases           bool            // the history carries lease ids
	imported         bool
	revs, prefixPuts int

	// zeroRev is the revision the durable prefix last became zero, and
	// viewRev the revision the view was last written (zero-prefix-alone).
	zeroRev, viewRev int64
	// The election and the maintenance leases (standby-captured).
	capture *captureTrack
}

func newReplay(ks keyspace.Keyspace, events []Event, advertised map[string]string) *replay {
	r := &replay{ks: ks, n: map[string]int{}, injected: map[int64]bool{}, corrupted: map[string]int64{},
		batches: map[uint64]uint64{}, batchView: map[uint64]uint64{}, writerEnded: map[int64]int64{},
		capture: newCaptureTrack(advertised)}
	for _, e := range events {
		for _, rev := range e.Revisions {
			r.injected[rev] = true
		}
		for _, id := range e.Corrupted {
			if e.EtcdRevision <= 0 {
				// Damaged at a revision the harness could not read: a
				// floor on it cannot be placed before or after the damage.
				r.n["floor-verified: snapshots damaged at a revision the harness could not read (not judged)"]++
				continue
			}
			if old, ok := r.corrupted[id]; !ok || e.EtcdRevision < old {
				r.corrupted[id] = e.EtcdRevision
			}
		}
		for _, node := range e.Ended {
			if e.EtcdRevision <= 0 {
				r.capture.endedUnknown[node] = true
				continue
			}
			r.capture.ended[node] = append(r.capture.ended[node], e.EtcdRevision)
		}
	}
	return r
}

func (r *replay) add(id string, rev int64, format string, args ...any) {
	r.ev.add("[%s] rev %d: %s", id, rev, fmt.Sprintf(format, args...))
}

// change is one revision's writes, sorted by what they touch.
type change struct {
	rev       int64
	batchPuts []batchlog.Batch
	deletes   []uint64
	prefix    *batchlog.DurablePrefix
	prefixDel bool
	view      *uint64
	floor     *batchsnap.Floor
	latest    *slot
	fallback  *slot
	writer    *writer
	writerDel bool
	marker    *legacysnap.ImportRecord
	// candidates are the election candidate keys the revision put or
	// deleted.
	candidates []etcddump.Event
}

// touchesRecords reports whether the revision wrote a record whose
// relation to the durable prefix the invariants hold (prefix, batch,
// floor, pointer, import record).
func (c *change) touchesRecords() bool {
	return c.prefix != nil || c.prefixDel || len(c.batchPuts) > 0 || c.floor != nil || c.latest != nil || c.fallback != nil || c.marker != nil
}

// revision judges one revision's events against the model, then applies them.
func (r *replay) revision(group []etcddump.Event) {
	rev := group[0].Revision
	r.revs++
	injected := r.injected[rev]
	c := change{rev: rev}
	for _, e := range group {
		r.collect(&c, e, injected)
	}
	if !injected {
		r.judge(&c)
	}
	r.apply(&c)
	if !injected && c.touchesRecords() {
		r.judgePrefixCovers(&c)
		r.judgeZeroPrefixAlone(&c)
	}
}

// collect sorts one event into c; events that cannot be judged at all
// (deleting a record that must never go, a value that does not decode) are
// reported here.
func (r *replay) collect(c *change, e etcddump.Event, injected bool) {
	rev, ks := e.Revision, r.ks
	report := func(id, format string, args ...any) {
		if !injected {
			r.add(id, rev, format, args...)
		}
	}
	put := e.Type == "put"
	switch {
	case e.Key == ks.SnapshotMaintenance():
		if put {
			c.writer = &writer{token: string(e.Value), lease: e.Lease, rev: rev}
			r.leases = r.leases || e.Lease != 0
			if !injected {
				r.capture.token(e.Lease, string(e.Value))
			}
		} else {
			c.writerDel = true
		}
	case e.Key == ks.SnapshotLatest(), e.Key == ks.SnapshotFallback():
		name := "latest"
		if e.Key == ks.SnapshotFallback() {
			name = "fallback"
		}
		if !put {
			report("pointers-monotonic", "%s pointer deleted", name)
			s := slot{injected: injected}
			r.setSlot(c, name, &s)
			return
		}
		s := slot{raw: e.Value, injected: injected}
		if p, err := batchsnap.DecodePointer(e.Value); err == nil {
			s.p = &p
		} else if name == "latest" {
			report("pointers-monotonic", "latest pointer written malformed: %v", err)
		} else {
			report("fallback-never-degrades", "fallback written with a value that does not decode as a pointer (%v), replacing %s", err,
				r.fallback.describe())
		}
		if name == "fallback" && !injected {
			r.n["fallback-never-degrades"]++
		}
		r.setSlot(c, name, &s)
	case e.Key == ks.ProducerView():
		if !put {
			report("view-grows", "producer view deleted")
			return
		}
		v, err := batchlog.DecodeProducerView(e.Value)
		if err != nil {
			report("view-grows", "producer view %q: %v", e.Value, err)
			return
		}
		view := uint64(v)
		c.view = &view
	case e.Key == ks.DurablePrefix():
		if !put {
			c.prefixDel = true
			report("prefix-terminal", "durable prefix deleted")
			return
		}
		p, err := batchlog.DecodeDurablePrefix(e.Value)
		if err != nil {
			report("prefix-terminal", "durable prefix %q: %v", e.Value, err)
			return
		}
		if (p.BatchID == 0) != (p.LastSeq == 0) || p.LastSeq < p.BatchID {
			// Upstream refuses inconsistent zero fields at startup; a last
			// sequence below the batch id has no history behind it.
			report("prefix-terminal", "durable prefix %q: batch %d with last seq %d", e.Value, p.BatchID, p.LastSeq)
			return
		}
		c.prefix = &p
	case e.Key == ks.LegacyImport():
		if !put {
			report("legacy-import-once", "legacy import record deleted")
			return
		}
		m, err := legacysnap.DecodeImportRecord(e.Value)
		if err != nil {
			report("legacy-import-once", "legacy import record: %v", err)
			return
		}
		c.marker = &m
	case e.Key == ks.CompactionFloor():
		if !put {
			report("floor-monotonic", "compaction floor deleted")
			return
		}
		f, err := batchsnap.DecodeFloor(e.Value)
		if err != nil {
			report("floor-monotonic", "compaction floor %q: %v", e.Value, err)
			return
		}
		c.floor = &f
	default:
		id, isBatch := ks.ParseBatch(e.Key)
		// A candidate the harness put (garbage) is no node's; one it
		// deleted (a revoked session) is gone all the same.
		if !isBatch && strings.HasPrefix(e.Key, ks.LeaderCandidates()) && (!injected || !put) {
			c.candidates = append(c.candidates, e)
		}
		if !isBatch {
			r.n["namespace-keys"]++
			if !strings.HasPrefix(e.Key, ks.Leader()) && !strings.HasPrefix(e.Key, ks.SnapshotPrefix()) {
				report("namespace-keys", "unexpected key %s in the namespace", e.Key)
			}
			return
		}
		if !put {
			c.deletes = append(c.deletes, id)
			return
		}
		if e.Version != 1 {
			report("batch-once", "batch %d overwritten (version %d, created at rev %d)", id, e.Version, e.CreateRevision)
		}
		b, err := batchlog.DecodeBatch(e.Value)
		if err != nil {
			if injected {
				r.batches[id] = garbled // garbage the harness wrote: present, unreadable
			} else {
				report("append-continues", "batch %d does not decode: %v", id, err)
			}
			return
		}
		if b.ID != id {
			report("append-continues", "key of batch %d holds batch %d", id, b.ID)
		}
		c.batchPuts = append(c.batchPuts, b)
	}
}

func (r *replay) setSlot(c *change, name string, s *slot) {
	if name == "latest" {
		c.latest = s
	} else {
		c.fallback = s
	}
}

// judge checks one revision the system wrote against the model before it.
func (r *replay) judge(c *change) {
	rev := c.rev
	if c.writer != nil {
		r.n["lease-exclusive"]++
		if w := r.writer; w != nil && !c.writerDel && (w.lease != c.writer.lease || w.token != c.writer.token) {
			r.add("lease-exclusive", rev, "maintenance key taken over by %s (lease %x) while %s (lease %x, since rev %d) held it", c.writer.token,
				c.writer.lease, w.token, w.lease, w.rev)
		}
	}
	if c.view != nil {
		r.n["view-grows"]++
		if *c.view <= r.view {
			r.add("view-grows", rev, "producer view went from %d to %d (must grow)", r.view, *c.view)
		}
	}
	if c.floor != nil {
		r.judgeFloor(c)
	}
	if len(c.deletes) > 0 {
		r.judgeDeletes(c)
	}
	if c.latest != nil || c.fallback != nil {
		r.judgePointers(c)
	}
	if c.marker != nil {
		r.n["legacy-import-once"]++
		if r.imported {
			r.add("legacy-import-once", rev, "a second legacy import record written")
		}
		floorPut := c.floor != nil && c.floor.BatchID == c.marker.BatchID
		checkImport(&r.ev, rev, c.marker, r.prefix, c.prefix, c.batchPuts, floorPut, c.latest)
		for _, b := range c.batchPuts {
			r.n["batch-once"]++
			if _, present := r.batches[b.ID]; present {
				r.add("batch-once", rev, "batch %d written again while present", b.ID)
			}
		}
		return
	}
	r.judgeAppend(c)
}

// judgeAppend: an append is one transaction writing one batch and the
// prefix that names it; a zero prefix is written only into a namespace
// that holds nothing else.
func (r *replay) judgeAppend(c *change) {
	rev := c.rev
	switch {
	case c.prefix == nil && len(c.batchPuts) > 0:
		r.add("append-continues", rev, "batch %d written without moving the durable prefix", c.batchPuts[0].ID)
	case c.prefix != nil && c.prefix.BatchID == 0:
		r.n["no-reinit"]++
		if r.prefix != nil || len(c.batchPuts) > 0 {
			r.add("no-reinit", rev, "durable prefix reset to the zero state")
		} else if residue := r.residue(); residue != "" {
			r.add("no-reinit", rev, "namespace initialised (zero durable prefix) while it still held %s: residue read as an empty cluster", residue)
		}
	case c.prefix != nil:
		r.n["append-continues"]++
		b := c.prefix
		if len(c.batchPuts) != 1 || c.batchPuts[0].ID != b.BatchID || c.batchPuts[0].LastSeq != b.LastSeq {
			r.add("append-continues", rev, "durable prefix moved to batch %d seq %d without exactly that batch in the same "+
				"transaction (%d batch puts)", b.BatchID, b.LastSeq, len(c.batchPuts))
		}
		var last batchlog.DurablePrefix
		if r.prefix != nil {
			last = *r.prefix
		}
		if b.BatchID != last.BatchID+1 {
			r.add("append-continues", rev, "durable prefix jumped from batch %d to %d", last.BatchID, b.BatchID)
		}
		if len(c.batchPuts) == 1 && c.batchPuts[0].FirstSeq != last.LastSeq+1 {
			r.add("append-continues", rev, "batch %d starts at seq %d, the prefix before it ended at %d", c.batchPuts[0].ID, c.batchPuts[0].FirstSeq, last.LastSeq)
		}
	}
	for _, b := range c.batchPuts {
		r.n["batch-once"]++
		if _, present := r.batches[b.ID]; present {
			r.add("batch-once", rev, "batch %d written again while present", b.ID)
		}
	}
}

// residue names what the namespace holds besides an election, or "".
func (r *replay) residue() string {
	var held []string
	if r.viewSet {
		held = append(held, fmt.Sprintf("producer view %d", r.view))
	}
	if len(r.batches) > 0 {
		held = append(held, fmt.Sprintf("%d batch keys", len(r.batches)))
	}
	if r.hasFloor {
		held = append(held, fmt.Sprintf("compaction floor %d", r.floor))
	}
	if r.latest.raw != nil || r.fallback.raw != nil {
		held = append(held, "snapshot pointers")
	}
	if r.imported {
		held = append(held, "a legacy import record")
	}
	return strings.Join(held, ", ")
}

func (r *replay) judgeFloor(c *change) {
	rev, f := c.rev, c.floor.BatchID
	r.n["floor-monotonic"]++
	if r.hasFloor && f < r.floor {
		r.add("floor-monotonic", rev, "compaction floor decreased from %d to %d", r.floor, f)
	}
	if r.hasFloor && f == r.floor || c.marker != nil {
		return // not a move; an import's floor is checked with the import
	}
	r.n["floor-covered"]++
	r.judgeFenced(rev, fmt.Sprintf("floor moved to %d", f))
	lat, fb := r.latest.p, r.fallback.p
	if lat == nil || fb == nil {
		r.add("floor-covered", rev, "floor moved to %d while %s", f, invalidSlots(r.latest, r.fallback))
		return
	}
	older := fb
	if lat.LastIncludedBatchID < fb.LastIncludedBatchID {
		older = lat
	}
	if f > older.LastIncludedBatchID {
		r.add("floor-covered", rev, "floor moved to %d, above the older pointer %s at batch %d", f, older.SnapshotID, older.LastIncludedBatchID)
	}
	for _, p := range []*batchsnap.Pointer{lat, fb} {
		if at, ok := r.corrupted[p.SnapshotID]; ok && at < rev {
			r.n["floor-verified"]++
			if f >= p.LastIncludedBatchID && p == older {
				r.add("floor-verified", rev, "floor moved to %d onto %s, which the run corrupted before rev %d: only one usable "+
					"snapshot is left above the deleted OpLog", f, p.SnapshotID, at)
			}
		}
	}
}

func invalidSlots(lat, fb slot) string {
	var parts []string
	for _, s := range []struct {
		name string
		s    slot
	}{{"latest", lat}, {"fallback", fb}} {
		switch {
		case s.s.raw == nil:
			parts = append(parts, s.name+" is absent")
		case s.s.p == nil:
			parts = append(parts, s.name+" is malformed")
		}
	}
	return strings.Join(parts, " and ")
}

// judgeFenced: a destructive maintenance step needs the maintenance key held.
func (r *replay) judgeFenced(rev int64, what string) {
	r.n["maintenance-fenced"]++
	if r.writer == nil {
		r.add("maintenance-fenced", rev, "%s while no maintenance lease held the maintenance key%s", what, r.lastWriterEnd())
	}
}

func (r *replay) lastWriterEnd() string {
	var last int64
	for _, at := range r.writerEnded {
		last = max(last, at)
	}
	if last == 0 {
		return ""
	}
	return fmt.Sprintf(" (the last holder's key went away at rev %d)", last)
}

func (r *replay) judgeDeletes(c *change) {
	rev := c.rev
	sort.Slice(c.deletes, func(i, j int) bool { return c.deletes[i] < c.deletes[j] })
	r.judgeFenced(rev, fmt.Sprintf("batches %d..%d deleted", c.deletes[0], c.deletes[len(c.deletes)-1]))
	for _, id := range c.deletes {
		r.n["delete-under-floor"]++
		switch {
		case c.floor != nil && id <= c.floor.BatchID:
			r.add("delete-under-floor", rev, "batch %d deleted in the revision that published the floor", id)
		case !r.hasFloor:
			r.add("delete-under-floor", rev, "batch %d deleted while no compaction floor was published", id)
		case id > r.floor:
			r.add("delete-under-floor", rev, "batch %d deleted above the floor %d (floor committed at rev %d)", id, r.floor, r.floorRev)
		}
		if r.prefix != nil && id >= r.prefix.BatchID {
			r.add("delete-under-floor", rev, "batch %d deleted at or above the durable prefix %d", id, r.prefix.BatchID)
		}
	}
	r.judgeDeleteUnderPointers(c)
}

func (r *replay) judgePointers(c *change) {
	rev := c.rev
	if c.latest != nil && c.latest.raw != nil {
		r.n["pointers-monotonic"]++
		if p := c.latest.p; p != nil {
			if r.latest.p != nil && p.LastIncludedBatchID <= r.latest.p.LastIncludedBatchID {
				r.add("pointers-monotonic", rev, "latest pointer regressed from batch %d to %d (%s)", r.latest.p.LastIncludedBatchID, p.LastIncludedBatchID, p.SnapshotID)
			}
			r.judgePointerWriter(rev, p)
			if c.marker == nil {
				r.judgeCapture(rev, p)
			}
			if r.hasFloor && c.marker == nil {
				r.n["pointer-above-floor"]++
				if p.LastIncludedBatchID < r.floor {
					r.add("pointer-above-floor", rev, "latest pointer written naming %s at batch %d, below the compaction floor %d", p.SnapshotID,
						p.LastIncludedBatchID, r.floor)
				}
			}
			if v, ok := r.batchView[p.LastIncludedBatchID]; ok {
				r.n["pointer-view"]++
				if v != r.view {
					r.n["pointer-view across a view change"]++
				}
				if uint64(p.ProducerViewVersion) != v {
					r.add("pointer-view", rev, "pointer %s records producer view %d, but batch %d was appended under view %d", p.SnapshotID,
						p.ProducerViewVersion, p.LastIncludedBatchID, v)
				}
			}
		}
	}
	if c.fallback != nil && c.fallback.raw != nil {
		if r.latest.raw == nil || string(c.fallback.raw) != string(r.latest.raw) {
			r.add("pointers-monotonic", rev, "fallback written with a value latest did not hold just before")
		}
	}
}

// judgePointerWriter: the publication transaction compares the writer
// token, so the maintenance key is held at this revision, by the lease the
// candidate was made under (snapshot ids carry it).
func (r *replay) judgePointerWriter(rev int64, p *batchsnap.Pointer) {
	r.n["pointer-fenced"]++
	id, err := batchsnap.ParseID(p.SnapshotID)
	if err != nil {
		return // a malformed pointer is reported by the decoder
	}
	switch {
	case r.writer == nil:
		ended := ""
		if at, ok := r.writerEnded[id.Lease]; ok {
			ended = fmt.Sprintf(" (its lease %x lost the maintenance key at rev %d)", id.Lease, at)
		}
		r.add("pointer-fenced", rev, "pointer to %s written while no maintenance lease held the maintenance key%s", p.SnapshotID, ended)
	case r.leases && r.writer.lease != id.Lease:
		r.add("pointer-fenced", rev, "pointer to %s (made under lease %x) written while the maintenance key was held by lease %x (%s)", p.SnapshotID,
			id.Lease, r.writer.lease, r.writer.token)
	}
}

// apply moves the model to after the revision.
func (r *replay) apply(c *change) {
	if c.view != nil {
		r.view, r.viewSet, r.viewRev = *c.view, true, c.rev
		if !r.injected[c.rev] {
			r.capture.claimed(r.view)
		}
	}
	for _, b := range c.batchPuts {
		r.batches[b.ID] = b.LastSeq
		r.batchView[b.ID] = r.view
	}
	r.capture.elect(c.candidates)
	for _, id := range c.deletes {
		delete(r.batches, id)
	}
	if c.floor != nil {
		if !r.hasFloor || c.floor.BatchID != r.floor {
			r.floorRev = c.rev
		}
		r.floor, r.hasFloor = c.floor.BatchID, true
	}
	if c.latest != nil {
		r.latest = *c.latest
	}
	if c.fallback != nil {
		r.fallback = *c.fallback
	}
	if c.writerDel && r.writer != nil {
		r.writerEnded[r.writer.lease] = c.rev
		r.n["maintenance-fenced: writer leases that ended"]++
		r.writer = nil
	}
	if c.writer != nil {
		r.writer = c.writer
	}
	if c.marker != nil {
		r.imported = true
	}
	if c.prefixDel {
		r.prefix = nil
		if r.injected[c.rev] {
			r.n["no-reinit"]++ // a history lost by a fault: the window the invariant guards
		}
	}
	if c.prefix != nil {
		r.prefixPuts++
		if c.prefix.BatchID == 0 && (r.prefix == nil || r.prefix.BatchID != 0) {
			r.zeroRev = c.rev
		}
		p := *c.prefix
		r.prefix = &p
	}
	if r.injected[c.rev] || r.prefix == nil || r.prefix.BatchID == 0 {
		return
	}
	if c.prefix != nil || len(c.deletes) > 0 {
		r.n["prefix-terminal"]++
		last, ok := r.batches[r.prefix.BatchID]
		switch {
		case !ok:
			r.add("prefix-terminal", c.rev, "the durable prefix's batch %d is not in the OpLog", r.prefix.BatchID)
		case last != r.prefix.LastSeq && last != garbled:
			r.add("prefix-terminal", c.rev, "the durable prefix ends at seq %d, its batch %d at seq %d", r.prefix.LastSeq, r.prefix.BatchID, last)
		}
	}
}

// countFencedOrphans counts candidates left in the store by a lease whose
// maintenance key went away: attempts that did not publish (a lost CAS, a
// revoked lease, a crash before the CAS).
func (r *replay) countFencedOrphans(objs *StoreReport) {
	if objs == nil {
		return
	}
	published := map[string]bool{}
	for _, p := range objs.Pointers {
		published[p.SnapshotID] = true
	}
	seen := map[string]bool{}
	for _, o := range objs.Listing {
		_, rest, ok := strings.Cut(o.Key, "/batch-oplog/")
		if !ok {
			continue
		}
		part, _, _ := strings.Cut(rest, "/")
		id, err := batchsnap.ParseID(part)
		if err != nil || seen[part] {
			continue
		}
		seen[part] = true
		if _, ended := r.writerEnded[id.Lease]; ended && !published[part] {
			r.n["pointer-fenced: unpublished candidates of leases since ended"]++
		}
	}
}

// checkImport checks the revision that recorded a legacy import: it moved
// the prefix from the zero state straight to the import cursor, wrote
// exactly one batch, the prefix's terminal batch as legacysnap.ImportBatch makes
// it (upstream's startup check refuses a prefix whose terminal batch is
// missing; prefix-terminal checks the same after the revision), and
// published the floor at batch 1 and the latest pointer at the cursor.
func checkImport(ev *evidence, rev int64, m *legacysnap.ImportRecord, before, after *batchlog.DurablePrefix, batchPuts []batchlog.Batch,
	floorPut bool, latest *slot) {
	bad := func(format string, args ...any) {
		ev.add("[legacy-import-once] rev %d: %s", rev, fmt.Sprintf(format, args...))
	}
	if before != nil && before.BatchID != 0 {
		bad("legacy import recorded after the durable prefix reached batch %d", before.BatchID)
	}
	if after == nil || after.BatchID != m.BatchID || after.LastSeq != m.LastSeq {
		bad("legacy import recorded without moving the durable prefix to batch %d seq %d", m.BatchID, m.LastSeq)
	}
	switch want := legacysnap.ImportBatch(m.Cursor()); {
	case len(batchPuts) != 1:
		bad("legacy import wrote %d batch keys, want exactly batch %d", len(batchPuts), m.BatchID)
	case !reflect.DeepEqual(batchPuts[0], want):
		b := batchPuts[0]
		bad("legacy import wrote batch %d seq %d..%d with %d entries, want batch %d seq %d..%d with its one entry", b.ID, b.FirstSeq, b.LastSeq,
			len(b.Entries), want.ID, want.FirstSeq, want.LastSeq)
	}
	if !floorPut {
		bad("legacy import did not publish the compaction floor at batch %d in the same revision", m.BatchID)
	}
	switch {
	case latest == nil || latest.p == nil || latest.p.Cursor() != m.Cursor():
		bad("legacy import did not publish the latest pointer at batch %d seq %d", m.BatchID, m.LastSeq)
	case latest.p.SnapshotID != m.SnapshotID:
		bad("legacy import record names snapshot %s, the latest pointer another", m.SnapshotID)
	}
}
