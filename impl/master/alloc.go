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
	gen  uint64 // rebuilds so far: a release from before the last one is void
}

func (a *allocator) rebuild(r state.Reader) {
	next := map[string]uint64{}
	r.Objects(func(_ state.ObjectKey, o state.Object) bool {
		for _, rep := range o.Replicas {
			if rep.Kind != state.ReplicaMemory { // the allocator places memory replicas only
				continue
			}
			if end := rep.Offset + rep.Length; end > next[rep.Segment] {
				next[rep.Segment] = end
			}
		}
		return true
	})
	a.mu.Lock()
	a.next = next
	a.gen++
	a.mu.Unlock()
}

// generation is the index's rebuild count; read it before place, and hand
// it to release.
func (a *allocator) generation() uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.gen
}

// place picks n distinct segments of segs (the mounted memory segments),
// starting from one chosen by the key's hash, and reserves size bytes on each.
// DefaultProtocol is the transport protocol of the memory replicas the
// allocator places (upstream's AllocatedBuffer::Descriptor protocol_).
const DefaultProtocol = "tcp"

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
		out = append(out, state.Replica{ID: uint64(len(out) + 1), Kind: state.ReplicaMemory, Segment: s.Endpoint, Offset: off, Length: size,
			Status: state.ReplicaComplete, Protocol: DefaultProtocol})
	}
	if len(out) < n {
		a.releaseLocked(out)
		return nil, fmt.Errorf("%w: %d of %d replicas of %d bytes placed", errNoCapacity, len(out), n, size)
	}
	return out, nil
}

// release gives back what place reserved, in generation gen, for a put that
// definitely failed. A bump allocator can only take back its last
// reservation on a segment: one that a later reservation followed stays
// used until the index is rebuilt at the next promotion. After a rebuild the
// index comes from the state, which another primary may have extended over
// the same range, so nothing is taken back.
func (a *allocator) release(reps []state.Replica, gen uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if gen != a.gen {
		return
	}
	a.releaseLocked(reps)
}

func (a *allocator) releaseLocked(reps []state.Replica) {
	for i := len(reps) - 1; i >= 0; i-- {
		r := reps[i]
		if a.next[r.Segment] == r.Offset+r.Length {
			a.next[r.Segment] = r.Offset
		}
	}
}
