package retention

import "sync"

// Verified is a small set of snapshot ids whose every object was read,
// checksummed and decoded. A retention cycle consults it for the newer
// protected snapshot, so each snapshot costs one complete verification.
// The zero value is ready; a nil *Verified remembers nothing.
type Verified struct {
	mu    sync.Mutex
	ids   map[string]bool // id → it verified (false: a complete read failed)
	order []string
}

// verifiedCap bounds the set: only the two protected snapshots matter.
const verifiedCap = 16

// Has reports whether id verified before.
func (v *Verified) Has(id string) bool {
	ok, _ := v.Verdict(id)
	return ok
}

// Verdict says whether id was read completely, and if so whether it
// verified.
func (v *Verified) Verdict(id string) (ok, known bool) {
	if v == nil {
		return false, false
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	ok, known = v.ids[id]
	return ok, known
}

// Add remembers that id verified.
func (v *Verified) Add(id string) { v.set(id, true) }

// Forget remembers that id failed a complete read: it is not trusted
// until it verifies again.
func (v *Verified) Forget(id string) { v.set(id, false) }

// set records a verdict, forgetting the oldest beyond the cap.
func (v *Verified) set(id string, ok bool) {
	if v == nil {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.ids == nil {
		v.ids = map[string]bool{}
	}
	if _, seen := v.ids[id]; !seen {
		v.order = append(v.order, id)
	}
	v.ids[id] = ok
	if len(v.order) > verifiedCap {
		delete(v.ids, v.order[0])
		v.order = v.order[1:]
	}
}
