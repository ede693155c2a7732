package model

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/tidwall/btree"
)

// Overlap is two live objects whose buffer replicas (memory or NVMe-oF)
// share bytes of one segment: the same transport endpoint, and ranges
// [offset, offset+length) that intersect. A segment's allocator hands a
// range to one object at a time, so no state a master makes durable holds
// one.
type Overlap struct {
	Endpoint string
	A, B     ObjectKey
	ARange   [2]uint64 // [offset, end) of A's replica
	BRange   [2]uint64
}

func (o Overlap) String() string {
	return fmt.Sprintf("%s [%d, %d) and %s [%d, %d) on segment %s", o.A, o.ARange[0], o.ARange[1], o.B, o.BRange[0], o.BRange[1], o.Endpoint)
}

// Buffers indexes the buffer replicas of a state's live objects by segment
// endpoint and offset, so that the objects a batch stores can be checked
// against every other live object without a scan of them all (a nightly
// soak holds tens of thousands). It follows a state through Update, batch
// by batch, and is exact whatever the replicas' lengths.
type Buffers struct {
	segs    map[string]*btree.BTreeG[span] // by endpoint, ordered by offset
	maxLen  map[string]uint64              // by endpoint: the longest span ever indexed there
	indexed map[ObjectKey][]span           // what is indexed for each object
}

// span is one indexed buffer replica.
type span struct {
	off, end uint64
	key      ObjectKey
	replica  int
	endpoint string // not part of the order: one tree per endpoint
}

func lessSpan(a, b span) bool {
	if a.off != b.off {
		return a.off < b.off
	}
	if c := compareKeys(a.key, b.key); c != 0 {
		return c < 0
	}
	return a.replica < b.replica
}

// NewBuffers is the index of s's live objects (Overlaps checks them).
func NewBuffers(s *State) *Buffers {
	b := &Buffers{segs: map[string]*btree.BTreeG[span]{}, maxLen: map[string]uint64{}, indexed: map[ObjectKey][]span{}}
	for k, o := range s.objects {
		b.set(k, o)
	}
	return b
}

// Overlaps is every overlap of the indexed state, each pair once.
func (b *Buffers) Overlaps() []Overlap {
	keys := make([]ObjectKey, 0, len(b.indexed))
	for k := range b.indexed {
		keys = append(keys, k)
	}
	return b.overlapsOf(keys)
}

// Update re-indexes keys (those a batch stored or erased) as they stand in
// s, and returns every overlap one of them (those still live) takes part
// in, each pair once. Checked after every batch from a state without
// overlaps, this finds every overlap of every state the batches lead to.
func (b *Buffers) Update(s *State, keys []ObjectKey) []Overlap {
	for _, k := range keys {
		for _, sp := range b.indexed[k] {
			b.segs[sp.endpoint].Delete(sp)
		}
		delete(b.indexed, k)
		if o, ok := s.objects[k]; ok {
			b.set(k, o)
		}
	}
	return b.overlapsOf(keys)
}

func (b *Buffers) set(k ObjectKey, o Object) {
	for i, r := range o.Replicas {
		if !r.Kind.Buffered() || r.Length == 0 {
			continue
		}
		sp := span{off: r.Offset, end: spanEnd(r), key: k, replica: i, endpoint: r.Endpoint}
		t := b.segs[r.Endpoint]
		if t == nil {
			t = btree.NewBTreeGOptions(lessSpan, btree.Options{NoLocks: true})
			b.segs[r.Endpoint] = t
		}
		t.Set(sp)
		b.maxLen[r.Endpoint] = max(b.maxLen[r.Endpoint], sp.end-sp.off)
		b.indexed[k] = append(b.indexed[k], sp)
	}
}

// overlapsOf is every overlap one of keys takes part in, each pair of
// objects once, sorted.
func (b *Buffers) overlapsOf(keys []ObjectKey) []Overlap {
	var out []Overlap
	seen := map[[2]ObjectKey]bool{}
	for _, k := range keys {
		for _, a := range b.indexed[k] {
			t := b.segs[a.endpoint]
			hit := func(x span) {
				p := [2]ObjectKey{k, x.key}
				if compareKeys(p[0], p[1]) > 0 {
					p[0], p[1] = p[1], p[0]
				}
				if x.key == k || seen[p] || x.off >= a.end || a.off >= x.end {
					return
				}
				seen[p] = true
				out = append(out, Overlap{Endpoint: a.endpoint, A: k, B: x.key, ARange: [2]uint64{a.off, a.end}, BRange: [2]uint64{x.off, x.end}})
			}
			// The spans that start within a's range …
			t.Ascend(span{off: a.off}, func(x span) bool {
				if x.off >= a.end {
					return false
				}
				hit(x)
				return true
			})
			// … and those that start before it, as far back as the longest
			// span on the segment could reach.
			t.Descend(span{off: a.off}, func(x span) bool {
				if x.off == a.off {
					return true // seen ascending
				}
				if a.off-x.off >= b.maxLen[a.endpoint] {
					return false
				}
				hit(x)
				return true
			})
		}
	}
	slices.SortFunc(out, func(x, y Overlap) int {
		return cmp.Or(compareKeys(x.A, y.A), compareKeys(x.B, y.B), cmp.Compare(x.Endpoint, y.Endpoint))
	})
	return out
}

// Overlaps is every overlap of the state (a starting point's check).
func (s *State) Overlaps() []Overlap { return NewBuffers(s).Overlaps() }

// spanEnd is a buffer replica's end, clamped to 2^64-1.
func spanEnd(r Replica) uint64 {
	end := r.Offset + r.Length
	if end < r.Offset {
		end = math.MaxUint64
	}
	return end
}
