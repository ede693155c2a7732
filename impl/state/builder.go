package state

import "fmt"

// Builder loads a State from a stream of segments and objects (a snapshot
// decode). In sorted order, which is how this project writes snapshots, it
// appends to the trees without searching; in any other order (upstream's
// writer copies its hash maps) it inserts. A key given twice is an error. It
// validates as Apply would, so a decoded snapshot cannot hold what the OpLog
// could not have produced.
type Builder struct {
	t       *tables
	objects int      // objects added: errors name an object by its position, never by its tenant or key
	slab    []Object // objects are carved from blocks: far fewer heap objects to mark
	err     error
}

const objectSlab = 1024

// NewBuilder starts an empty state.
func NewBuilder() *Builder { return &Builder{t: newTables()} }

// AddSegment adds a segment; an endpoint given twice is an error.
func (b *Builder) AddSegment(s Segment) error {
	if b.err != nil {
		return b.err
	}
	if err := s.validate(); err != nil {
		return b.fail(err)
	}
	seg := s
	if _, dup := b.t.segments.Load(segmentItem{s: &seg}); dup {
		return b.fail(fmt.Errorf("%w: segment %d: its endpoint is given twice", ErrMalformed, b.t.segments.Len()))
	}
	b.t.fp.addSegment(&seg, +1)
	return nil
}

// AddObject adds an object. The tenant is never "" (Apply stores it as
// "default"), and a key given twice is an error. Replicas are not checked
// against the segments: upstream's applier does not link them (apply.go).
func (b *Builder) AddObject(k ObjectKey, o Object) error {
	if b.err != nil {
		return b.err
	}
	if len(b.slab) == cap(b.slab) {
		b.slab = make([]Object, 0, objectSlab)
	}
	b.slab = append(b.slab, o)
	return b.AddObjectShared(k, &b.slab[len(b.slab)-1])
}

// AddObjectShared is AddObject keeping o itself, which the caller must not
// change afterwards.
func (b *Builder) AddObjectShared(k ObjectKey, o *Object) error {
	if b.err != nil {
		return b.err
	}
	if k.Tenant == "" || len(k.Key) > MaxKeyBytes || len(k.Tenant) > MaxKeyBytes {
		return b.fail(fmt.Errorf("%w: object %d: key of %d bytes, tenant of %d", ErrMalformed, b.objects, len(k.Key), len(k.Tenant)))
	}
	if err := o.validate(); err != nil {
		return b.fail(fmt.Errorf("object %d: %w", b.objects, err))
	}
	if _, dup := b.t.objects.Load(objectItem{k: k, o: o}); dup {
		return b.fail(fmt.Errorf("%w: object %d: its key is given twice", ErrMalformed, b.objects))
	}
	b.t.fp.addObject(k, o, +1)
	b.objects++
	return nil
}

// CheckPlacement checks that every buffer replica (memory, NoF) of o lies
// within a segment added before, of its kind, as a primary's put must. A
// writer of this project's own content (a legacy import) calls it before
// AddObject; a snapshot of a standby need not hold to it (apply.go). The
// error names the replica by position, never the object's key.
func (b *Builder) CheckPlacement(o Object) error {
	return b.t.checkPlacement(&o)
}

func (b *Builder) fail(err error) error {
	b.err = err
	return err
}

// Finish returns the built state at cursor c.
func (b *Builder) Finish(c Cursor) (*State, error) {
	if b.err != nil {
		return nil, b.err
	}
	if !c.Consistent() {
		return nil, fmt.Errorf("%w: inconsistent cursor %s", ErrMalformed, c)
	}
	b.t.cursor = c
	s := &State{tables: b.t}
	b.t = nil
	return s, nil
}
