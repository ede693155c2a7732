package model

import (
	"fmt"
	"maps"
	"slices"

	"github.com/oplogha/oplogha/impl/contract"
)

// State is the content upstream's standby holds at a cursor: its object
// store (StandbyMetadataStore) and its segment registry
// (StandbySegmentRegistry). Objects are values and never changed in place
// (a PUT_END replaces the whole object), so Clone shares them.
type State struct {
	cursor   contract.Cursor
	objects  map[ObjectKey]Object
	segments map[string]Segment // by transport endpoint
}

// New is the empty state before batch 1.
func New() *State {
	return &State{objects: map[ObjectKey]Object{}, segments: map[string]Segment{}}
}

// FromSnapshot is the state a snapshot holds: its objects and segments at
// its cursor, as a standby loads it before it applies the batches after
// the cursor (upstream: RestoreMetadata per object,
// standby_metadata_store.cpp:13-18, and LoadSegmentRegistry,
// oplog_applier.cpp:205-211, where a later segment of the same endpoint
// replaces an earlier one). Tenants are normalised; two objects that
// normalise to one key are an error, as is an inconsistent cursor.
func FromSnapshot(cursor contract.Cursor, segments []Segment, objects map[ObjectKey]Object) (*State, error) {
	if !cursor.Consistent() {
		return nil, fmt.Errorf("%w: snapshot cursor %s", ErrCursor, cursor)
	}
	s := New()
	s.cursor = cursor
	for _, seg := range segments {
		s.segments[seg.Endpoint] = seg
	}
	for k, o := range objects {
		nk := Key(k.Tenant, k.Key)
		if _, dup := s.objects[nk]; dup {
			return nil, fmt.Errorf("%w: object %s given twice (tenant \"\" is %q)", ErrSnapshot, nk, DefaultTenant)
		}
		s.objects[nk] = o
	}
	return s, nil
}

// Clone is an independent copy (the objects' values are shared: they are
// never changed in place).
func (s *State) Clone() *State {
	return &State{cursor: s.cursor, objects: maps.Clone(s.objects), segments: maps.Clone(s.segments)}
}

// Cursor is the last batch applied and its last sequence id.
func (s *State) Cursor() contract.Cursor { return s.cursor }

// Len is the number of objects and of segments.
func (s *State) Len() (objects, segments int) { return len(s.objects), len(s.segments) }

// Object is the object of (tenant, key), tenant "" being "default".
func (s *State) Object(tenant, key string) (Object, bool) {
	o, ok := s.objects[Key(tenant, key)]
	return o, ok
}

// Segment is the segment registered at endpoint.
func (s *State) Segment(endpoint string) (Segment, bool) {
	seg, ok := s.segments[endpoint]
	return seg, ok
}

// Keys are the objects' keys, sorted by tenant then key (bytewise).
func (s *State) Keys() []ObjectKey {
	keys := slices.Collect(maps.Keys(s.objects))
	slices.SortFunc(keys, compareKeys)
	return keys
}

// Endpoints are the segments' endpoints, sorted bytewise.
func (s *State) Endpoints() []string {
	return slices.Sorted(maps.Keys(s.segments))
}

func compareKeys(a, b ObjectKey) int {
	switch {
	case a.Tenant < b.Tenant:
		return -1
	case a.Tenant > b.Tenant:
		return 1
	case a.Key < b.Key:
		return -1
	case a.Key > b.Key:
		return 1
	}
	return 0
}
