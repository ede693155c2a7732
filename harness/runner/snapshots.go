package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/oplogha/oplogha/harness/audit"
	"github.com/oplogha/oplogha/harness/bundle"
	"github.com/oplogha/oplogha/harness/etcddump"
	"github.com/oplogha/oplogha/harness/objects"
	"github.com/oplogha/oplogha/impl/contract/batchsnap"
	"github.com/oplogha/oplogha/impl/contract/keyspace"
)

// keepBudget bounds the bytes of snapshot objects one bundle keeps: pr
// runs write a few hundred KiB; a soak's larger states are noted, not kept.
const keepBudget = 256 << 20

// snapshotKeeper copies into the bundle, byte for byte, the objects of
// every snapshot a pointer named during the run (read with the harness's
// own store client, never the master's), so that the audits decode them
// through the contract from what the system left behind. It keeps a
// snapshot the first time the sampler or the collection sees a pointer name
// it; what it could not keep (gone, over budget, the store unreachable) is
// noted with the reason, and tried again when the pointer is seen again.
type snapshotKeeper struct {
	// noting serialises note: the sampler and the collection never copy
	// one snapshot at once.
	noting sync.Mutex
	mu     sync.Mutex
	dir    string // the bundle's snapshots directory
	start  time.Time
	kept   map[string]*audit.KeptSnapshot // snapshot id → what was kept
	keys   map[string][]string            // snapshot id → the keys kept
	bytes  int64
}

func newSnapshotKeeper(bundleDir string, start time.Time) *snapshotKeeper {
	return &snapshotKeeper{dir: filepath.Join(bundleDir, bundle.SnapshotsDir), start: start,
		kept: map[string]*audit.KeptSnapshot{}, keys: map[string][]string{}}
}

// pointerReader reads both pointer slots' values now.
type pointerReader func(ctx context.Context) ([2][]byte, error)

// note keeps the snapshot the pointer raw names, unless it was kept
// already; a pointer that does not decode is not a snapshot to keep. live
// reads the pointers once the copy ends: a copy is whole when one of them
// still names the snapshot.
func (k *snapshotKeeper) note(ctx context.Context, st objects.Reader, raw []byte, live pointerReader) {
	if k == nil || st == nil || raw == nil {
		return
	}
	p, err := batchsnap.DecodePointer(raw)
	if err != nil {
		return
	}
	k.noting.Lock()
	defer k.noting.Unlock()
	k.mu.Lock()
	prev := k.kept[p.SnapshotID]
	k.mu.Unlock()
	if prev != nil && (prev.Kept || prev.OverBudget) {
		return
	}
	ks := &audit.KeptSnapshot{SnapshotID: p.SnapshotID, Pointer: string(raw), SeenAt: int64(time.Since(k.start))}
	keys, size, err := k.copy(ctx, st, p)
	switch {
	case err == nil:
		ks.Kept, ks.Objects, ks.Bytes = true, len(keys), size
		if now, err := live(ctx); err == nil {
			ks.Whole = names(now, p.SnapshotID)
		}
	case errors.Is(err, errOverBudget):
		ks.OverBudget, ks.Error = true, err.Error()
	default:
		ks.Error = err.Error()
	}
	k.mu.Lock()
	if old := k.kept[p.SnapshotID]; old == nil || !old.Kept {
		k.kept[p.SnapshotID] = ks
		if ks.Kept {
			k.keys[p.SnapshotID] = keys
		}
	}
	k.mu.Unlock()
}

// keysOf are the object keys kept for a snapshot (nil: not kept whole).
func (k *snapshotKeeper) keysOf(id string) []string {
	if k == nil {
		return nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if ks := k.kept[id]; ks == nil || !ks.Whole {
		return nil
	}
	return k.keys[id]
}

// names reports whether either pointer value names the snapshot id.
func names(ptrs [2][]byte, id string) bool {
	for _, raw := range ptrs {
		if p, err := batchsnap.DecodePointer(raw); raw != nil && err == nil && p.SnapshotID == id {
			return true
		}
	}
	return false
}

var errOverBudget = errors.New("not kept: the bundle's budget for snapshot objects is spent")

// copy writes every object under the snapshot's artifact prefix into the
// bundle at its key; it returns how many and their bytes. The objects are
// copied as stored: judging them is the audit's work.
func (k *snapshotKeeper) copy(ctx context.Context, st objects.Reader, p batchsnap.Pointer) ([]string, int64, error) {
	prefix := batchsnap.Artifacts(p.Root(), p.SnapshotID).Prefix()
	list, err := st.List(ctx, prefix)
	if err != nil {
		return nil, 0, err
	}
	if len(list) == 0 {
		return nil, 0, fmt.Errorf("no object under %s", prefix)
	}
	var total int64
	for _, o := range list {
		total += o.Size
	}
	k.mu.Lock()
	if k.bytes+total > keepBudget {
		k.mu.Unlock()
		return nil, 0, fmt.Errorf("%w (%d bytes of %d kept; this snapshot has %d)", errOverBudget, k.bytes, int64(keepBudget), total)
	}
	k.bytes += total
	k.mu.Unlock()
	keys := make([]string, 0, len(list))
	for _, o := range list {
		if err := k.copyObject(ctx, st, o.Key); err != nil {
			k.mu.Lock()
			k.bytes -= total
			k.mu.Unlock()
			return nil, 0, err
		}
		keys = append(keys, o.Key)
	}
	return keys, total, nil
}

func (k *snapshotKeeper) copyObject(ctx context.Context, st objects.Reader, key string) error {
	rc, _, err := st.GetObject(ctx, key)
	if err != nil {
		return err
	}
	defer rc.Close()
	path := filepath.Join(k.dir, filepath.FromSlash(key))
	if !strings.HasPrefix(path, k.dir+string(filepath.Separator)) {
		return fmt.Errorf("object key %q escapes the bundle", key)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, rc); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// noteHistory keeps every snapshot a pointer named in the namespace's
// MVCC history that the run has not kept yet (a pointer that stood for
// less than a sampling period), while its objects are still there.
func (k *snapshotKeeper) noteHistory(ctx context.Context, st objects.Reader, ks keyspace.Keyspace, events []etcddump.Event, live pointerReader) {
	for _, e := range events {
		if e.Type == "put" && (e.Key == ks.SnapshotLatest() || e.Key == ks.SnapshotFallback()) {
			k.note(ctx, st, e.Value, live)
		}
	}
}

// write records what was kept (bundle.SnapshotsFile).
func (k *snapshotKeeper) write(bundleDir string) error {
	if k == nil {
		return nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make([]audit.KeptSnapshot, 0, len(k.kept))
	for _, ks := range k.kept {
		out = append(out, *ks)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].SeenAt < out[j].SeenAt })
	return bundle.WriteJSON(bundleDir, bundle.SnapshotsFile, out)
}
