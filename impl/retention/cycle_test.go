package retention

import (
	"context"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/oplogha/oplogha/impl/contract/batchsnap"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/impl/contract/keyspace"
	"github.com/oplogha/oplogha/impl/internal/etcdtest"
	"github.com/oplogha/oplogha/impl/objstore"
	"github.com/oplogha/oplogha/impl/objstore/localdir"
	"github.com/oplogha/oplogha/impl/oplog"
	"github.com/oplogha/oplogha/impl/publish"
	"github.com/oplogha/oplogha/impl/snapshot"
	"github.com/oplogha/oplogha/impl/state"
)

type fixture struct {
	t    *testing.T
	srv  *etcdtest.Server
	ks   keyspace.Keyspace
	st   *localdir.Store
	root string
	w    *oplog.Writer
	// lease is the last maintenance lease id a snapshot was made under:
	// each snapshot gets its own, so two at one batch are two snapshots.
	lease int64
}

// dir is the artifact prefix (ending in '/') of the snapshot p names.
func dir(p publish.Pointer) string { return batchsnap.Artifacts(p.Root(), p.SnapshotID).Prefix() }

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func newFixture(t *testing.T, batches int) *fixture {
	srv := etcdtest.Start(t)
	ks := keyspace.Must("m")
	root := t.TempDir()
	st, err := localdir.New(root)
	require.NoError(t, err)
	view, err := oplog.ClaimProducerView(ctxT(t), srv.Client, ks)
	require.NoError(t, err)
	w, err := oplog.NewWriter(ctxT(t), srv.Client, ks, view)
	require.NoError(t, err)
	for i := 0; i < batches; i++ {
		_, err := w.Append(ctxT(t), []state.Entry{state.PutRevoke("t", "k")})
		require.NoError(t, err)
	}
	return &fixture{t: t, srv: srv, ks: ks, st: st, root: root, w: w}
}

// snap writes a real snapshot at batch b and returns its pointer.
func (f *fixture) snap(b uint64) publish.Pointer {
	t := f.t
	s, err := state.NewBuilder().Finish(state.Cursor{BatchID: b, Seq: b})
	require.NoError(t, err)
	f.lease++
	p, err := snapshot.Prepare(s.Capture(), snapshot.PrepareSpec{Root: "snaps/m", ID: snapshot.NewID(b, f.lease), View: 1,
		WorkDir: t.TempDir(), ChunkObjects: 8, CreatedAt: time.UnixMilli(1)})
	require.NoError(t, err)
	defer p.Close()
	w, err := snapshot.Write(ctxT(t), f.st, objstore.Trust{}, p, snapshot.WriteOptions{})
	require.NoError(t, err)
	return w.Pointer
}

func (f *fixture) publish(p publish.Pointer) {
	l, err := publish.AcquireLease(ctxT(f.t), f.srv.Client, f.ks, "n", 10)
	require.NoError(f.t, err)
	defer l.Release(context.Background())
	o, err := publish.Observe(ctxT(f.t), f.srv.Client, f.ks)
	require.NoError(f.t, err)
	plan, err := publish.PlanFor(o, p)
	require.NoError(f.t, err)
	_, err = publish.Publish(ctxT(f.t), f.srv.Client, f.ks, l.Token, o, plan)
	require.NoError(f.t, err)
}

// run runs one cycle under a maintenance lease taken for it.
func (f *fixture) run(opts Options) (Report, error) {
	l, err := publish.AcquireLease(ctxT(f.t), f.srv.Client, f.ks, "maintainer", 10)
	require.NoError(f.t, err)
	defer l.Release(context.Background())
	opts.Lease = l
	return Run(ctxT(f.t), f.srv.Client, f.ks, f.st, opts)
}

func batchCount(t *testing.T, f *fixture) int64 {
	resp, err := f.srv.Client.Get(ctxT(t), f.ks.BatchPrefix(), clientv3WithPrefixCount()...)
	require.NoError(t, err)
	return resp.Count
}

func TestNoFloorWithoutTwoValidPointers(t *testing.T) {
	f := newFixture(t, 30)
	f.publish(f.snap(10))
	rep, err := f.run(Options{Prefix: "snaps/m", GC: true, Prune: true})
	require.NoError(t, err)
	require.NotEmpty(t, rep.Skipped)
	require.Zero(t, rep.Floor)
	require.Equal(t, int64(30), batchCount(t, f), "one pointer: nothing is pruned")
}

func TestGCKeepsProtectedAndRecentThenFloorBeforeDelete(t *testing.T) {
	f := newFixture(t, 40)
	old := f.snap(5)     // will be older than S_safe
	orphan := f.snap(15) // never published
	f.publish(old)
	safe := f.snap(10)
	f.publish(safe)
	newest := f.snap(20)
	f.publish(newest)    // latest=20, fallback=10
	recent := f.snap(12) // an orphan within the grace period
	now := time.Now()
	// Everything but `recent` is older than the grace period.
	clock := func() time.Time { return now.Add(time.Hour) }
	future := now.Add(2 * time.Hour)
	require.NoError(t, filepath.Walk(filepath.Join(f.root, filepath.FromSlash(dir(recent))), func(path string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			return os.Chtimes(path, future, future)
		}
		return err
	}))
	rep, err := f.run(Options{Prefix: "snaps/m", GC: true, Prune: true, Grace: 30 * time.Minute, Now: clock})
	require.NoError(t, err)
	require.Equal(t, 2, rep.GCGroups, "the old snapshot and the expired orphan go")
	left := map[string]bool{}
	list, err := f.st.List(ctxT(t), "snaps/m/")
	require.NoError(t, err)
	for _, o := range list {
		left[path.Dir(o.Key)] = true
	}
	has := func(p publish.Pointer) bool {
		for k := range left {
			if strings.HasPrefix(k+"/", dir(p)) {
				return true
			}
		}
		return false
	}
	require.True(t, has(newest) && has(safe), "both protected groups stay")
	require.True(t, has(recent), "a recent orphan stays within the grace period")
	require.False(t, has(old) || has(orphan))

	require.Equal(t, uint64(10), rep.Floor, "floor = S_safe's batch")
	require.True(t, rep.FloorMoved)
	require.Equal(t, int64(10), rep.BatchesDeleted)
	require.Equal(t, int64(30), batchCount(t, f))
	// The floor never decreases, and a second cycle deletes nothing more.
	rep, err = f.run(Options{Prefix: "snaps/m", Prune: true})
	require.NoError(t, err)
	require.Equal(t, uint64(10), rep.Floor)
	require.False(t, rep.FloorMoved)
	require.Zero(t, rep.BatchesDeleted)
}

func TestCrashAfterFloorLeavesBatchesAForLaterCycle(t *testing.T) {
	f := newFixture(t, 40)
	f.publish(f.snap(10))
	f.publish(f.snap(20))
	crash := func() { panic("crash after floor CAS") }
	require.Panics(t, func() {
		_, _ = f.run(Options{Prefix: "snaps/m", Prune: true, AfterCAS: crash})
	})
	require.Equal(t, int64(40), batchCount(t, f), "the floor is published, nothing deleted yet: extra batches, no gap")
	rep, err := f.run(Options{Prefix: "snaps/m", Prune: true})
	require.NoError(t, err)
	require.Equal(t, int64(10), rep.BatchesDeleted, "a later cycle deletes them")
}

func TestRevalidationFailureBlocksPruning(t *testing.T) {
	f := newFixture(t, 40)
	f.publish(f.snap(10))
	p := f.snap(20)
	f.publish(p)
	require.NoError(t, os.Remove(filepath.Join(f.root, filepath.FromSlash(p.Root()+"/batch-oplog/"+p.SnapshotID+"/"+batchsnap.ManifestObject))))
	rep, err := f.run(Options{Prefix: "snaps/m", Prune: true})
	require.NoError(t, err)
	require.Contains(t, rep.Skipped, "failed validation")
	require.Zero(t, rep.Floor)
	require.Equal(t, int64(40), batchCount(t, f))
}

// A cycle whose lease is revoked after GC publishes no floor and deletes
// nothing: the floor CAS compares the writer token.
func TestLostLeaseEndsTheCycle(t *testing.T) {
	f := newFixture(t, 40)
	f.publish(f.snap(10))
	f.publish(f.snap(20))
	l, err := publish.AcquireLease(ctxT(t), f.srv.Client, f.ks, "maintainer", 10)
	require.NoError(t, err)
	revoke := func() { _, err := f.srv.Client.Revoke(context.Background(), l.ID); require.NoError(t, err) }
	rep, err := Run(ctxT(t), f.srv.Client, f.ks, f.st, Options{Prefix: "snaps/m", Prune: true, Lease: l, AfterGC: revoke})
	require.ErrorIs(t, err, ErrLeaseLost)
	require.Zero(t, rep.Floor)
	require.False(t, rep.FloorMoved)
	require.Equal(t, int64(40), batchCount(t, f), "a fenced cycle deletes nothing")
	resp, err := f.srv.Client.Get(ctxT(t), f.ks.CompactionFloor())
	require.NoError(t, err)
	require.Empty(t, resp.Kvs, "no floor was published")
}

// GC confirms the lease before each delete: revoked, it deletes no group.
func TestLostLeaseStopsGC(t *testing.T) {
	f := newFixture(t, 40)
	old := f.snap(5)
	f.publish(old)
	f.publish(f.snap(10))
	f.publish(f.snap(20))
	l, err := publish.AcquireLease(ctxT(t), f.srv.Client, f.ks, "maintainer", 10)
	require.NoError(t, err)
	_, err = f.srv.Client.Revoke(ctxT(t), l.ID)
	require.NoError(t, err)
	later := func() time.Time { return time.Now().Add(time.Hour) }
	rep, err := Run(ctxT(t), f.srv.Client, f.ks, f.st, Options{Prefix: "snaps/m", GC: true, Prune: true, Grace: time.Minute, Now: later, Lease: l})
	require.ErrorIs(t, err, ErrLeaseLost)
	require.Zero(t, rep.GCGroups)
	_, err = f.st.Head(ctxT(t), old.DescriptorKey)
	require.NoError(t, err, "the unprotected group is still there")
}

// The floor never moves onto a snapshot whose bytes no longer verify, even
// when its metadata (sizes, the server's stored checksums) still does.
func TestFloorNeverMovesOntoACorruptSnapshot(t *testing.T) {
	f := newFixture(t, 40)
	safe := f.snap(10)
	f.publish(safe)
	f.publish(f.snap(20))
	chunk := filepath.Join(f.root, filepath.FromSlash(dir(safe)+batchsnap.SegmentsObject))
	data, err := os.ReadFile(chunk)
	require.NoError(t, err)
	data[len(data)/2] ^= 0x20 // same length: only a complete read can tell
	require.NoError(t, os.WriteFile(chunk, data, 0o644))
	cache := &Verified{}
	cache.Add(safe.SnapshotID) // verified once, before it rotted
	rep, err := f.run(Options{Prefix: "snaps/m", Prune: true, Verified: cache})
	require.NoError(t, err)
	require.Contains(t, rep.Skipped, "failed validation")
	require.Zero(t, rep.Floor)
	require.Equal(t, int64(40), batchCount(t, f))
	require.False(t, cache.Has(safe.SnapshotID), "a failed verification is forgotten")
}

// The range delete commits only under the producer view read with the
// pointers: a promotion during the cycle refuses it (retained, retried).
func TestRangeDeleteTiedToTheValidatedView(t *testing.T) {
	f := newFixture(t, 40)
	f.publish(f.snap(10))
	f.publish(f.snap(20))
	claim := func() {
		_, err := oplog.ClaimProducerView(context.Background(), f.srv.Client, f.ks)
		require.NoError(t, err)
	}
	rep, err := f.run(Options{Prefix: "snaps/m", Prune: true, AfterCAS: claim})
	require.ErrorIs(t, err, ErrRangeDelete)
	require.Equal(t, uint64(10), rep.Floor)
	require.Equal(t, int64(40), batchCount(t, f), "retained")
	rep, err = f.run(Options{Prefix: "snaps/m", Prune: true})
	require.NoError(t, err)
	require.Equal(t, int64(10), rep.BatchesDeleted, "the next cycle deletes them")
}

// A floor above S_safe (an outside write) never widens the range delete:
// batches go only through S_safe's batch, and the cycle reports the floor
// it found above it.
func TestRangeDeleteStopsAtSSafeUnderAHigherFloor(t *testing.T) {
	f := newFixture(t, 40)
	f.publish(f.snap(10))
	f.publish(f.snap(20)) // latest=20, fallback=10
	_, err := f.srv.Client.Put(ctxT(t), f.ks.CompactionFloor(), string(batchsnap.Floor{BatchID: 15}.Encode()))
	require.NoError(t, err)
	rep, err := f.run(Options{Prefix: "snaps/m", Prune: true})
	require.NoError(t, err)
	require.Equal(t, int64(10), rep.BatchesDeleted, "through S_safe (10), not through the floor (15): the fallback's suffix stays")
	require.Equal(t, int64(30), batchCount(t, f))
	require.Equal(t, uint64(15), rep.FloorAboveSafe)
	require.Equal(t, uint64(15), rep.Floor, "the floor never decreases")
}

// The floor CAS and the range delete commit only on the pointers the cycle
// validated: a pointer that changes between the observation and either
// transaction refuses it, and nothing is deleted.
func TestFloorAndDeleteCompareThePointers(t *testing.T) {
	for _, step := range []string{"floor CAS", "range delete"} {
		t.Run(step, func(t *testing.T) {
			f := newFixture(t, 40)
			f.publish(f.snap(10))
			f.publish(f.snap(20))
			rot := func() {
				_, err := f.srv.Client.Put(ctxT(t), f.ks.SnapshotFallback(), "a pointer nobody can read")
				require.NoError(t, err)
			}
			opts := Options{Prefix: "snaps/m", Prune: true}
			if step == "floor CAS" {
				opts.AfterGC = rot
			} else {
				opts.AfterCAS = rot
			}
			_, err := f.run(opts)
			require.Error(t, err)
			require.Equal(t, int64(40), batchCount(t, f), "nothing deleted under a pointer the cycle did not validate")
			if step == "floor CAS" {
				resp, err := f.srv.Client.Get(ctxT(t), f.ks.CompactionFloor())
				require.NoError(t, err)
				require.Empty(t, resp.Kvs, "no floor published")
			}
		})
	}
}

// slowGets is a store whose every Get waits (or until its context ends):
// a store read at a crawl.
type slowGets struct {
	*localdir.Store
	wait time.Duration
}

func (s slowGets) Get(ctx context.Context, key string) (io.ReadCloser, objstore.Info, error) {
	select {
	case <-time.After(s.wait):
	case <-ctx.Done():
		return nil, objstore.Info{}, ctx.Err()
	}
	return s.Store.Get(ctx, key)
}

// TestASlowStoreMakesValidationInconclusive: reads that do not finish
// within ReadBound leave the cycle inconclusive — nothing pruned, the floor
// unmoved, the cycle over at once rather than holding the lease through
// the reads — and a read cut short is no verdict on the snapshot.
func TestASlowStoreMakesValidationInconclusive(t *testing.T) {
	f := newFixture(t, 40)
	safe := f.snap(10)
	f.publish(safe)
	f.publish(f.snap(20))
	l, err := publish.AcquireLease(ctxT(t), f.srv.Client, f.ks, "maintainer", 10)
	require.NoError(t, err)
	defer l.Release(context.Background())
	cache := &Verified{}
	start := time.Now()
	rep, err := Run(ctxT(t), f.srv.Client, f.ks, slowGets{f.st, 5 * time.Second}, Options{Prefix: "snaps/m", Prune: true, Verified: cache,
		Lease: l, ReadBound: 200 * time.Millisecond})
	require.NoError(t, err)
	require.Less(t, time.Since(start), 3*time.Second, "the cycle waited on the reads")
	require.True(t, rep.Inconclusive)
	require.Contains(t, rep.Skipped, "validation inconclusive")
	require.Zero(t, rep.Floor)
	require.Equal(t, int64(40), batchCount(t, f))
	_, known := cache.Verdict(safe.SnapshotID)
	require.False(t, known, "a read cut short says nothing of the snapshot")

	// the same cycle with the store at speed prunes
	rep, err = Run(ctxT(t), f.srv.Client, f.ks, f.st, Options{Prefix: "snaps/m", Prune: true, Verified: cache, Lease: l,
		ReadBound: 30 * time.Second})
	require.NoError(t, err)
	require.False(t, rep.Inconclusive)
	require.Equal(t, uint64(10), rep.Floor)
}
