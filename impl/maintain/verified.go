package maintain

import "sync"

// Verified is a small set of snapshot ids whose every object was read,
// checksummed and decoded. A retention cycle consults it for the newer
// protected snapshot, so each snapshot costs one complete verification.
// The zero value is ready; a nil *Verified remembers nothing.
type Verified struct {
	mu    sync.Mutex
	ids   map[string]bool
	order []string
}

// verifiedCap bounds the set: only the two protected snapshots matter.
const verifiedCap = 16

// Has reports whether id verified before.
func (v *Verified) Has(id string) bool {
	if v == nil {
		return false
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.ids[id]
}

// Add remembers id, forgetting the oldest beyond the cap.
func (v *Verified) Add(id string) {
	if v == nil {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.ids == nil {
		v.ids = map[string]bool{}
	}
	if v.ids[id] {
		return
	}
	v.ids[id] = true
	v.order = append(v.order, id)
	if len(v.order) > verifiedCap {
		delete(v.ids, v.order[0])
		v.order = v.order[1:]
	}
}

// Forget drops id (it failed a later verification).
func (v *Verified) Forget(id string) {
	if v == nil {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.ids, id)
}
