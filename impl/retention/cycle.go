// Package retention owns the compaction floor's movement: the retention
// cycle of RFC N10–N11 (cycle.go), the floor's monotonic CAS (floor.go) and
// the guarded range delete of the batches it covers (rangedelete.go). The
// floor's bytes are impl/contract's; readers (impl/oplog, impl/publish) only
// read it. The cycle is run by the holder of the maintenance lease right
// after it publishes: with both pointers
// independently valid and ordered (S_new, S_safe), it garbage-collects
// snapshot groups nobody protects (best effort), revalidates the two
// protected snapshots' metadata, CASes the compaction floor monotonically to
// S_safe's batch, and only after that commit deletes the covered batches with
// the guarded range delete. Either slot invalid: no floor, no deletion.
package retention

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/oplogha/oplogha/impl/contract/batchsnap"
	"github.com/oplogha/oplogha/impl/contract/keyspace"
	"github.com/oplogha/oplogha/impl/objstore"
	"github.com/oplogha/oplogha/impl/publish"
	"github.com/oplogha/oplogha/impl/snapshot"
)

// Options configure one cycle.
type Options struct {
	Prefix string        // {s3_prefix}/{cluster_id}: the dedicated snapshot prefix
	GC     bool          // enable_snapshot_gc
	Prune  bool          // enable_oplog_pruning
	Grace  time.Duration // snapshot_gc_grace_multiplier × snapshot interval
	Now    func() time.Time
	// Lease is the maintenance lease the cycle runs under (required): every
	// destructive step is fenced by its token, in the transaction (floor CAS,
	// range delete) or by Lease.Confirm just before it (object deletes). A
	// lost lease ends the cycle.
	Lease Fence
	// Verified remembers snapshots whose every object verified, so the
	// newer protected snapshot costs one complete verification, not one per
	// cycle (nil: verify each time). The older one is verified afresh
	// whenever the floor is about to move onto it.
	Verified *Verified
	// ReadBound bounds the validation reads of one cycle (0: none). They
	// run under the maintenance lease, right before the floor CAS, so that
	// a snapshot that rotted since it was last read never gets the floor;
	// on a slow store they would hold every publication back behind them.
	// Past the bound the validation is inconclusive: the cycle skips
	// pruning (RFC Design Principle 5) and lets the lease go, and the next
	// cycle tries again.
	ReadBound time.Duration
	AfterGC   func() // crash window: GC done, floor not yet published
	AfterCAS  func() // crash window: floor published, batches not yet deleted

	// Injected failures (failpoints): a non-nil error stands for the step
	// failing in the backend. GCDeleteFault is asked before each group's
	// delete, FloorCASFault before the floor CAS, DeleteFault before the
	// range delete.
	GCDeleteFault func(id string) error
	FloorCASFault func() error
	DeleteFault   func() error
}

// Fence is what the cycle needs of the maintenance lease: its token for
// the transactions' compare, and a proof that it still holds just before a
// step no transaction can fence (publish.Lease is one).
type Fence interface {
	OwnerToken() string
	Confirm(ctx context.Context, margin time.Duration) error
}

// confirmMargin is how long the lease must still have to live before an
// object delete: the delete ends well within it.
const confirmMargin = 2 * time.Second

// Report says what a cycle did.
type Report struct {
	Protected      []string // S_new, S_safe ids
	GCDeleted      int      // objects deleted
	GCGroups       int      // snapshot groups deleted
	GCBytes        int64    // bytes of the objects deleted
	GCFailures     int      // groups whose delete failed (left for the next cycle)
	UploadsAborted int      // unfinished multipart uploads aborted
	Floor          uint64   // floor after the cycle
	FloorMoved     bool
	// FloorAboveSafe is the floor the cycle found above S_safe's batch (an
	// outside write: no cycle publishes one), 0 when it is not: the range
	// delete then stops at S_safe, and the caller reports a violation.
	FloorAboveSafe uint64
	BatchesDeleted int64
	Verified       []string // snapshots verified completely in this cycle
	Skipped        string   // why nothing was pruned
	// Inconclusive: the validation reads did not finish within ReadBound,
	// and nothing was pruned.
	Inconclusive bool
}

// ErrNotProtected: the two-snapshot rule does not hold; nothing is pruned.
var ErrNotProtected = errors.New("both pointers must be valid and ordered")

// ErrFloorCAS: the floor could not be published; nothing was deleted.
var ErrFloorCAS = errors.New("floor CAS failed")

// ErrRangeDelete: the floor is published but the covered batches could not
// be deleted; they are retained and the next cycle retries.
var ErrRangeDelete = errors.New("range delete after the floor failed")

// ErrLeaseLost: the maintenance lease no longer fences this cycle; it ended
// before its next destructive step.
var ErrLeaseLost = publish.ErrLeaseLost

// Run performs one cycle under opts.Lease.
func Run(ctx context.Context, cli *clientv3.Client, ks keyspace.Keyspace, st objstore.Store, opts Options) (Report, error) {
	var rep Report
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Lease == nil {
		return rep, fmt.Errorf("%w: a retention cycle needs the maintenance lease", ErrLeaseLost)
	}
	// Pointers, floor and view at one revision: what the cycle validates,
	// and what its transactions compare.
	o, err := publish.Observe(ctx, cli, ks)
	if err != nil {
		return rep, err
	}
	rep.Floor = o.Floor
	if !o.Latest.Valid() || !o.Fallback.Valid() || o.Latest.Pointer.LastIncludedBatchID <= o.Fallback.Pointer.LastIncludedBatchID {
		rep.Skipped = "two valid ordered pointers needed"
		return rep, nil
	}
	sNew, sSafe := *o.Latest.Pointer, *o.Fallback.Pointer
	rep.Protected = []string{sNew.SnapshotID, sSafe.SnapshotID}
	if opts.GC {
		if err := gc(ctx, st, opts, sNew, sSafe, &rep); err != nil {
			return rep, err
		}
	}
	if opts.AfterGC != nil {
		opts.AfterGC()
	}
	if !opts.Prune {
		rep.Skipped = "pruning disabled"
		return rep, nil
	}
	// Both protected snapshots are validated before the floor moves: the
	// newer once (cached), the older afresh when the floor is to move onto
	// it, so a snapshot that rotted since it was last read never becomes
	// the only one above a deleted OpLog. Otherwise their metadata.
	moving := sSafe.LastIncludedBatchID > o.Floor
	vctx, cancel := ctx, context.CancelFunc(func() {})
	if opts.ReadBound > 0 {
		vctx, cancel = context.WithTimeout(ctx, opts.ReadBound)
	}
	defer cancel()
	for _, p := range []publish.Pointer{sNew, sSafe} {
		fresh := moving && p.SnapshotID == sSafe.SnapshotID
		verified, err := validate(vctx, st, p, moving, fresh, opts.Verified)
		if err != nil && ctx.Err() == nil && errors.Is(vctx.Err(), context.DeadlineExceeded) {
			rep.Skipped = fmt.Sprintf("validation inconclusive: protected snapshot %s not read within %v", p.SnapshotID, opts.ReadBound)
			rep.Inconclusive = true
			return rep, nil
		}
		if err != nil {
			rep.Skipped = fmt.Sprintf("protected snapshot %s failed validation: %v", p.SnapshotID, err)
			return rep, nil
		}
		if verified {
			rep.Verified = append(rep.Verified, p.SnapshotID)
		}
	}
	if opts.FloorCASFault != nil {
		if err := opts.FloorCASFault(); err != nil {
			return rep, fmt.Errorf("%w (nothing deleted): %w", ErrFloorCAS, err)
		}
	}
	ptrs := Pointers{Latest: o.Latest.Raw, Fallback: o.Fallback.Raw}
	floor, moved, err := CASFloor(ctx, cli, ks, opts.Lease.OwnerToken(), o.FloorRaw, sSafe.LastIncludedBatchID, ptrs)
	if err != nil {
		if errors.Is(err, ErrLeaseLost) {
			return rep, err
		}
		return rep, fmt.Errorf("%w (nothing deleted): %w", ErrFloorCAS, err)
	}
	rep.Floor, rep.FloorMoved = floor, moved
	if opts.AfterCAS != nil {
		opts.AfterCAS()
	}
	if opts.DeleteFault != nil {
		if err := opts.DeleteFault(); err != nil {
			return rep, fmt.Errorf("%w: through %d (retained, retry is safe): %w", ErrRangeDelete, floor, err)
		}
	}
	// Batch keys go through S_safe's batch (RFC "delete batch keys through
	// S_safe.batch_id"), never through a floor above it: that would take
	// the fallback's suffix and leave one recoverable snapshot.
	through := floor
	if floor > sSafe.LastIncludedBatchID {
		rep.FloorAboveSafe, through = floor, sSafe.LastIncludedBatchID
	}
	// The delete commits only on the namespace as validated: the view and
	// both pointers read together, the floor just published, and the
	// writer token.
	res, err := DeleteThrough(ctx, cli, ks, through, DeleteGuard{ProducerView: o.View, RequireFloor: true, WriterToken: opts.Lease.OwnerToken(),
		Pointers: &ptrs})
	switch {
	case errors.Is(err, ErrWouldDeletePrefix):
		return rep, nil // nothing past the prefix to delete yet
	case errors.Is(err, ErrWriterFenced):
		return rep, fmt.Errorf("%w: range delete through %d refused: %w", ErrLeaseLost, floor, err)
	case err != nil:
		return rep, fmt.Errorf("%w: through %d (retained, retry is safe): %w", ErrRangeDelete, through, err)
	}
	rep.BatchesDeleted = res.Deleted
	return rep, nil
}

// gc deletes snapshot groups (<root>/batch-oplog/<id>/) that neither pointer
// protects, that are older than S_safe (or unpublished candidates below
// S_new), and whose newest object is older than the grace period. Listing
// is only a conservative input here; failures are counted, never fatal. A
// lease that cannot be confirmed before a delete ends GC and the cycle.
func gc(ctx context.Context, st objstore.Store, opts Options, sNew, sSafe publish.Pointer, rep *Report) error {
	groups := batchsnap.ArtifactRoot(opts.Prefix)
	list, err := st.List(ctx, groups)
	if err != nil {
		rep.GCFailures++
		return nil
	}
	type group struct {
		keys   []string
		bytes  int64
		newest time.Time
		batch  uint64
	}
	byID := map[string]*group{}
	for _, o := range list {
		rest := strings.TrimPrefix(o.Key, groups)
		id, _, ok := strings.Cut(rest, "/")
		if !ok {
			continue
		}
		sid, err := snapshot.ParseID(id)
		if err != nil {
			continue // not a snapshot group: never touched
		}
		g := byID[id]
		if g == nil {
			g = &group{batch: sid.BatchID}
			byID[id] = g
		}
		g.keys = append(g.keys, o.Key)
		g.bytes += o.Size
		if o.ModTime.After(g.newest) {
			g.newest = o.ModTime
		}
	}
	ids := make([]string, 0, len(byID))
	for id := range byID {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		g := byID[id]
		if id == sNew.SnapshotID || id == sSafe.SnapshotID {
			continue
		}
		if g.batch >= sNew.LastIncludedBatchID {
			continue // newer than S_new: maybe an upload in flight
		}
		if opts.Now().Sub(g.newest) < opts.Grace {
			continue
		}
		// Descriptor last, so a half-deleted group never looks complete.
		keys := make([]string, 0, len(g.keys))
		var desc []string
		for _, k := range g.keys {
			if path.Base(k) == batchsnap.DescriptorObject {
				desc = append(desc, k)
			} else {
				keys = append(keys, k)
			}
		}
		if opts.GCDeleteFault != nil {
			if err := opts.GCDeleteFault(id); err != nil {
				rep.GCFailures++
				continue
			}
		}
		if err := opts.Lease.Confirm(ctx, confirmMargin); err != nil {
			return fmt.Errorf("snapshot GC stopped before deleting %s: %w", id, err)
		}
		if err := st.Delete(ctx, append(keys, desc...)); err != nil {
			rep.GCFailures++
			continue
		}
		rep.GCGroups++
		rep.GCDeleted += len(g.keys)
		rep.GCBytes += g.bytes
	}
	return abortUploads(ctx, st, opts, sNew, rep)
}

// abortUploads aborts unfinished multipart uploads under the prefix that
// belong to a snapshot group below S_new and were started before the grace
// period (a writer that died mid-upload left them; their parts take space
// no listing of objects shows). Fenced like every delete.
func abortUploads(ctx context.Context, st objstore.Store, opts Options, sNew publish.Pointer, rep *Report) error {
	u, ok := st.(objstore.Uploads)
	if !ok {
		return nil
	}
	groups := batchsnap.ArtifactRoot(opts.Prefix)
	ups, err := u.ListUploads(ctx, groups)
	if err != nil {
		rep.GCFailures++
		return nil
	}
	for _, up := range ups {
		id, _, _ := strings.Cut(strings.TrimPrefix(up.Key, groups), "/")
		sid, err := snapshot.ParseID(id)
		if err != nil || sid.BatchID >= sNew.LastIncludedBatchID || id == sNew.SnapshotID {
			continue
		}
		if opts.Now().Sub(up.Initiated) < opts.Grace {
			continue
		}
		if err := opts.Lease.Confirm(ctx, confirmMargin); err != nil {
			return fmt.Errorf("snapshot GC stopped before aborting an upload of %s: %w", id, err)
		}
		if err := u.AbortUpload(ctx, up.Key, up.UploadID); err != nil {
			rep.GCFailures++
			continue
		}
		rep.UploadsAborted++
	}
	return nil
}

// validate checks a protected snapshot before the floor moves. Its
// metadata always (the descriptor held to the pointer's size and CRC32C,
// the manifest to the descriptor's, every object present with the
// manifest's size and, where the store keeps one, CRC32C); when complete
// is set, every byte too (a full read, checksummed and decoded), unless
// cache already holds it and fresh is not asked. verified says a complete
// read happened.
func validate(ctx context.Context, st objstore.Store, p publish.Pointer, complete, fresh bool, cache *Verified) (verified bool, err error) {
	if err := revalidate(ctx, st, p); err != nil {
		return false, err
	}
	if !complete || (!fresh && cache.Has(p.SnapshotID)) {
		return false, nil
	}
	if _, err := snapshot.Verify(ctx, st, p); err != nil {
		if ctx.Err() == nil {
			cache.Forget(p.SnapshotID) // a read cut short proves nothing either way
		}
		return false, err
	}
	cache.Add(p.SnapshotID)
	return true, nil
}

// revalidate checks a protected snapshot's metadata by exact keys: the
// descriptor and manifest as a reader checks them (batchsnap.OpenHead), and
// every object there with the manifest's size and, where the store keeps a
// full-object checksum, its CRC32C.
func revalidate(ctx context.Context, st objstore.Store, p publish.Pointer) error {
	h, err := batchsnap.OpenHead(ctx, objstore.Getter(st), p)
	if err != nil {
		return err
	}
	refs := []batchsnap.ObjectRef{h.Manifest.Segments}
	for _, c := range h.Manifest.ObjectChunks {
		refs = append(refs, batchsnap.ObjectRef{Key: c.Key, StoredSize: c.StoredSize, CRC32C: c.CRC32C})
	}
	for _, ref := range refs {
		info, err := st.Head(ctx, ref.Key)
		if err != nil {
			return err
		}
		if uint64(info.Size) != ref.StoredSize {
			return fmt.Errorf("%w: %s is %d bytes, manifest says %d", snapshot.ErrChecksum, ref.Key, info.Size, ref.StoredSize)
		}
		if info.CRC32C != nil && info.FullObj && *info.CRC32C != ref.CRC32C {
			return fmt.Errorf("%w: %s has CRC32C %08x, manifest says %08x", snapshot.ErrChecksum, ref.Key, *info.CRC32C, ref.CRC32C)
		}
	}
	return nil
}
