package state

import (
	"fmt"

	"github.com/oplogha/oplogha/impl/contract/structpack"

	"github.com/tidwall/btree"
)

type objectItem struct {
	k ObjectKey
	o *Object // immutable once inserted
}

type segmentItem struct {
	s *Segment // immutable once inserted
}

func lessObject(a, b objectItem) bool {
	if a.k.Tenant != b.k.Tenant {
		return a.k.Tenant < b.k.Tenant
	}
	return a.k.Key < b.k.Key
}

func lessSegment(a, b segmentItem) bool { return a.s.Endpoint < b.s.Endpoint }

var treeOpts = btree.Options{NoLocks: true}

// tables is the content shared by State, Tx and Capture.
type tables struct {
	objects  *btree.BTreeG[objectItem]
	segments *btree.BTreeG[segmentItem]
	cursor   Cursor
	fp       Footprint // the trees' content's cost (footprint.go)
}

func newTables() *tables {
	return &tables{
		objects:  btree.NewBTreeGOptions(lessObject, treeOpts),
		segments: btree.NewBTreeGOptions(lessSegment, treeOpts),
	}
}

// fork is an O(1) copy-on-write clone: neither side's later writes are seen by the other.
func (t *tables) fork() *tables {
	return &tables{objects: t.objects.Copy(), segments: t.segments.Copy(), cursor: t.cursor, fp: t.fp}
}

// Reader is what State and Capture share: read access to content and cursor.
type Reader interface {
	Cursor() Cursor
	Len() (objects, segments int)
	Object(tenant, key string) (Object, bool)
	Segment(endpoint string) (Segment, bool)
	Objects(yield func(ObjectKey, Object) bool)
	Segments(yield func(Segment) bool)
	Digest() Digest
	Footprint() Footprint
}

func (t *tables) Cursor() Cursor { return t.cursor }

func (t *tables) Len() (objects, segments int) { return t.objects.Len(), t.segments.Len() }

func (t *tables) Object(tenant, key string) (Object, bool) {
	it, ok := t.objects.Get(objectItem{k: ObjectKey{NormalizeTenant(tenant), key}})
	if !ok {
		return Object{}, false
	}
	return it.o.clone(), true
}

func (t *tables) Segment(endpoint string) (Segment, bool) {
	it, ok := t.segments.Get(segmentItem{s: &Segment{Endpoint: endpoint}})
	if !ok {
		return Segment{}, false
	}
	return *it.s, true
}

// Objects yields every object in (tenant, key) order. The Object values are
// copies; changing them does not change the state.
func (t *tables) Objects(yield func(ObjectKey, Object) bool) {
	t.objects.Scan(func(it objectItem) bool { return yield(it.k, it.o.clone()) })
}

// Segments yields every segment in endpoint order.
func (t *tables) Segments(yield func(Segment) bool) {
	t.segments.Scan(func(it segmentItem) bool { return yield(*it.s) })
}

func (o *Object) clone() Object {
	c := *o
	c.Replicas = append([]Replica(nil), o.Replicas...)
	return c
}

// State is the live metadata of a master. See the package doc for concurrency.
type State struct {
	*tables
	// Apply's: the entries' changes, the payload decoder (its strings
	// interned), the object tree's path hint
	changes []change
	dec     payloadDecoder
	hint    btree.PathHint
}

// New returns the empty state at the zero cursor.
func New() *State { return &State{tables: newTables()} }

// Capture is an immutable view of a State at one cursor.
type Capture struct {
	*tables
}

// ObjectsShared yields every object in (tenant, key) order without copying
// its replicas: the yielded Replicas slice is the capture's own and must
// only be read. It is for readers that walk millions of objects and keep
// none (the snapshot encoder): no allocation per object, so no GC work.
func (c *Capture) ObjectsShared(yield func(ObjectKey, Object) bool) {
	c.objects.Scan(func(it objectItem) bool { return yield(it.k, *it.o) })
}

// Capture returns an immutable view of the state as it is now, in O(1).
func (s *State) Capture() *Capture { return &Capture{tables: s.fork()} }

// Apply applies one complete batch atomically, as a standby replays it:
// upstream's applier semantics (apply.go), without the primary's admission
// checks. Every entry applies and the cursor moves to (b.ID, b.LastSeq), or
// nothing changes and an *ApplyError says why.
//
// Every entry is checked and decoded before the first is applied (no check
// depends on the state), so the batch applies in place, without the fork a
// Tx makes: forking per batch made every batch copy the tree paths it
// touched. Captures and open Txs still see nothing of it (the trees are
// copy-on-write towards every fork), and an open Tx's Commit still fails,
// as after any change, because the state gets a new table header.
func (s *State) Apply(b Batch) error {
	if err := s.checkContinues(b); err != nil {
		return err
	}
	if s.dec.strs == nil {
		s.dec.strs = new(structpack.Strings)
	}
	changes := s.changes[:0]
	for i, e := range b.Entries {
		c, err := prepare(e, &s.dec)
		if err != nil {
			clear(changes)
			return &ApplyError{BatchID: b.ID, Index: i, Seq: b.FirstSeq + uint64(i), Op: e.Op, Tenant: e.Tenant, Key: e.Key, Err: err}
		}
		changes = append(changes, c)
	}
	t := &tables{objects: s.objects, segments: s.segments, cursor: b.Cursor(), fp: s.fp}
	for i := range changes {
		t.change(&changes[i], &s.hint)
	}
	clear(changes) // keep no object alive past its removal
	s.changes = changes[:0]
	s.tables = t
	return nil
}

func (s *State) checkContinues(b Batch) error {
	if len(b.Entries) == 0 || b.LastSeq < b.FirstSeq || b.LastSeq-b.FirstSeq+1 != uint64(len(b.Entries)) {
		return &ApplyError{BatchID: b.ID, Index: -1, Err: fmt.Errorf("%w: seq %d..%d with %d entries", ErrInvalidBatchSpan, b.FirstSeq, b.LastSeq, len(b.Entries))}
	}
	if b.ID != s.cursor.BatchID+1 || b.FirstSeq != s.cursor.Seq+1 {
		return &ApplyError{BatchID: b.ID, Index: -1, Err: fmt.Errorf("%w: cursor is %s, batch starts at seq %d", ErrDiscontinuous, s.cursor, b.FirstSeq)}
	}
	return nil
}

// Tx stages entries on a private copy of a State. A primary stages client
// mutations into a Tx while it builds a batch, and commits the Tx only once the
// batch is durable; a Tx that is dropped changes nothing.
type Tx struct {
	base   *tables
	t      *tables
	staged int
}

// Begin starts a Tx on the current state.
func (s *State) Begin() *Tx { return &Tx{base: s.tables, t: s.fork()} }

// Staged is the number of entries staged so far.
func (tx *Tx) Staged() int { return tx.staged }

// Reader gives read access to the Tx's staged view.
func (tx *Tx) Reader() Reader { return tx.t }

// Stage admits one entry (the primary's checks, see apply.go) and applies
// it to the Tx. A rejected entry leaves the Tx unchanged.
func (tx *Tx) Stage(e Entry) error {
	if err := tx.t.admit(e); err != nil {
		return err
	}
	if err := tx.t.apply(e); err != nil {
		return err
	}
	tx.staged++
	return nil
}

// Commit installs a Tx as the state, with b as the batch that made it durable.
// b must continue the cursor and hold exactly the staged entries' count, and
// the state must not have changed since Begin.
func (s *State) Commit(tx *Tx, b Batch) error {
	if tx.base != s.tables {
		return &ApplyError{BatchID: b.ID, Index: -1, Err: fmt.Errorf("%w: state changed since the transaction began", ErrDiscontinuous)}
	}
	if err := s.checkContinues(b); err != nil {
		return err
	}
	if tx.staged != len(b.Entries) {
		return &ApplyError{BatchID: b.ID, Index: -1, Err: fmt.Errorf("%w: %d staged entries, batch has %d", ErrInvalidBatchSpan, tx.staged, len(b.Entries))}
	}
	tx.t.cursor = Cursor{BatchID: b.ID, Seq: b.LastSeq}
	s.tables = tx.t
	tx.base, tx.t = nil, nil
	return nil
}
