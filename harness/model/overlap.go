package model

import (
	"fmt"
	"math"
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

// OverlapsOf is every overlap in which one of keys takes part (a key not
// in the state takes part in none), each pair once. Checking, after each
// batch, the objects the batch stored finds every overlap of every state
// the batches lead to, provided the state they start from had none
// (Overlaps).
func (s *State) OverlapsOf(keys []ObjectKey) []Overlap {
	var out []Overlap
	seen := map[[2]ObjectKey]bool{}
	all := s.Keys()
	for _, a := range keys {
		oa, ok := s.objects[a]
		if !ok {
			continue
		}
		for _, ra := range oa.Replicas {
			if !ra.Kind.Buffered() || ra.Length == 0 {
				continue
			}
			for _, b := range all {
				if b == a || seen[[2]ObjectKey{b, a}] {
					continue
				}
				for _, rb := range s.objects[b].Replicas {
					if !rb.Kind.Buffered() || rb.Length == 0 || rb.Endpoint != ra.Endpoint {
						continue
					}
					x, y := span(ra), span(rb)
					if x[0] < y[1] && y[0] < x[1] {
						seen[[2]ObjectKey{a, b}] = true
						out = append(out, Overlap{Endpoint: ra.Endpoint, A: a, B: b, ARange: x, BRange: y})
					}
				}
			}
		}
	}
	return out
}

// Overlaps is every overlap of the state.
func (s *State) Overlaps() []Overlap { return s.OverlapsOf(s.Keys()) }

// span is a buffer replica's [offset, end), its end clamped to 2^64-1.
func span(r Replica) [2]uint64 {
	end := r.Offset + r.Length
	if end < r.Offset {
		end = math.MaxUint64
	}
	return [2]uint64{r.Offset, end}
}
