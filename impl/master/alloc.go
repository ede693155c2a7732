package master

import (
	"fmt"
	"hash/fnv"
	"sync"

	"github.com/oplogha/oplogha/impl/state"
)

// allocator places replicas on mounted segments. Its index (the next free
// offset per segment) is not persisted: it is rebuilt from the segment and
// replica descriptors at promotion (RFC "State Rebuilt").
type allocator struct {
	mu   sync.Mutex
	next map[string]uint64
}

func (a *allocator) rebuild(r state.Reader) {
	next := map[string]uint64{}
	r.Objects(func(_ state.ObjectKey, o state.Object) bool {
		for _, rep := range o.Replicas {
			if end := rep.Offset + rep.Length; end > next[rep.Segment] {
				next[rep.Segment] = end
			}
		}
		return true
	})
	a.mu.Lock()
	a.next = next
	a.mu.Unlock()
}

// place picks n distinct segments of segs (the mounted memory segments),
// starting from one chosen by the key's hash, and reserves size bytes on each.
func (a *allocator) place(segs []state.Segment, tenant, key string, size uint64, n int) ([]state.Replica, error) {
	if n > len(segs) {
		return nil, fmt.Errorf("%w: %d replicas wanted, %d memory segments mounted", errNoCapacity, n, len(segs))
	}
	h := fnv.New64a()
	h.Write([]byte(tenant + "\x00" + key))
	start := int(h.Sum64() % uint64(len(segs)))
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.next == nil {
		a.next = map[string]uint64{}
	}
	var out []state.Replica
	for i := 0; i < len(segs) && len(out) < n; i++ {
		s := segs[(start+i)%len(segs)]
		off := a.next[s.Endpoint]
		if off+size < off || off+size > s.Capacity {
			continue
		}
		a.next[s.Endpoint] = off + size
		out = append(out, state.Replica{ID: uint64(len(out) + 1), Kind: state.ReplicaMemory, Segment: s.Endpoint, Offset: off, Length: size, Status: state.ReplicaComplete})
	}
	if len(out) < n {
		return nil, fmt.Errorf("%w: %d of %d replicas of %d bytes placed", errNoCapacity, len(out), n, size)
	}
	return out, nil
}
