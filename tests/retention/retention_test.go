package retention

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oplogha/oplogha/impl/contract/batchsnap"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/impl/objstore"
	"github.com/oplogha/oplogha/impl/oplog"
	"github.com/oplogha/oplogha/impl/publish"
	"github.com/oplogha/oplogha/impl/retention"
	"github.com/oplogha/oplogha/impl/snapshot"
)

func opts(grace time.Duration) retention.Options {
	return retention.Options{Prefix: storePrefix, GC: true, Prune: true, Grace: grace}
}

// GC over versitygw: both protected groups, a recent orphan, an in-flight
// upload newer than S_new and a non-snapshot folder stay; an old orphan
// below S_safe and an expired unpublished candidate between S_safe and S_new
// go; then the floor moves to S_safe and only then are batches deleted.
func TestGCDeletesOnlyWhatNobodyProtects(t *testing.T) {
	wd := newWorld(t)
	const grace = 2 * time.Second
	wd.puts(5)
	oldOrphan := wd.snap()
	sSafe := wd.published(5)
	wd.puts(5)
	expired := wd.snap() // uploaded, never published, below S_new
	time.Sleep(grace + 1500*time.Millisecond)
	wd.puts(5)
	recent := wd.snap()
	sNew := wd.published(5)
	wd.puts(5)
	inFlight := wd.snap()
	notes := path.Join(storePrefix, "notes", "readme")
	require.NoError(t, wd.st.PutIfAbsent(ctxT(t), notes, strings.NewReader("x"), 1, batchsnap.CRC32C([]byte("x"))))
	// A folder under batch-oplog/ whose name is no snapshot id.
	stray := batchsnap.ArtifactRoot(storePrefix) + "notes/readme"
	require.NoError(t, wd.st.PutIfAbsent(ctxT(t), stray, strings.NewReader("x"), 1, batchsnap.CRC32C([]byte("x"))))

	rep, err := wd.cycle(t, wd.st, opts(grace))
	require.NoError(t, err)
	t.Logf("cycle: %+v", rep)
	require.Equal(t, []string{sNew.SnapshotID, sSafe.SnapshotID}, rep.Protected)
	require.Equal(t, 2, rep.GCGroups)
	require.Zero(t, rep.GCFailures)
	require.Positive(t, rep.GCBytes)

	left := wd.groups()
	for _, kept := range []publish.Pointer{sSafe, sNew, recent, inFlight} {
		require.Contains(t, left, kept.SnapshotID)
	}
	for _, gone := range []publish.Pointer{oldOrphan, expired} {
		require.NotContains(t, left, gone.SnapshotID)
	}
	require.Contains(t, left, "notes", "a folder that is not a snapshot id is never touched")
	_, err = wd.st.Head(ctxT(t), notes)
	require.NoError(t, err, "nor an object outside batch-oplog/")

	require.Equal(t, sSafe.LastIncludedBatchID, rep.Floor)
	require.Equal(t, sSafe.LastIncludedBatchID, wd.floor())
	lo, hi, n := wd.batchRange()
	require.Equal(t, sSafe.LastIncludedBatchID+1, lo, "every batch through S_safe is gone, none after it")
	require.Equal(t, wd.w.Prefix().BatchID, hi)
	require.Equal(t, int(hi-lo+1), n)
}

// flakyStore wraps the real store: the first Delete of a group named in
// failOnce removes only half of its keys, then fails, as a dropped
// connection in the middle of a multi-object delete would.
type flakyStore struct {
	objstore.Store
	mu       sync.Mutex
	failOnce map[string]bool
}

var errInjected = errors.New("injected: connection reset in the middle of a delete")

func (f *flakyStore) Delete(ctx context.Context, keys []string) error {
	f.mu.Lock()
	var hit string
	for id := range f.failOnce {
		if len(keys) > 0 && strings.Contains(keys[0], id) {
			hit = id
		}
	}
	if hit != "" {
		delete(f.failOnce, hit)
	}
	f.mu.Unlock()
	if hit == "" {
		return f.Store.Delete(ctx, keys)
	}
	if err := f.Store.Delete(ctx, keys[:len(keys)/2]); err != nil {
		return err
	}
	return errInjected
}

// A delete that fails half-way is counted, does not block the floor or the
// batch deletes, leaves the group's descriptor (deleted last) so the group
// is still recognised, and the next cycle removes the rest.
func TestPartialGCFailureIsRetriedAndNeverBlocksPruning(t *testing.T) {
	wd := newWorld(t)
	const grace = time.Second
	wd.puts(3)
	a := wd.snap()
	wd.puts(3)
	b := wd.snap()
	sSafe := wd.published(3)
	wd.published(3)
	time.Sleep(grace + 1500*time.Millisecond)
	before := wd.groups()
	require.Greater(t, before[a.SnapshotID], 2, "a group has several objects")

	flaky := &flakyStore{Store: wd.st, failOnce: map[string]bool{a.SnapshotID: true}}
	rep, err := wd.cycle(t, flaky, opts(grace))
	require.NoError(t, err)
	t.Logf("first cycle: %+v", rep)
	require.Equal(t, 1, rep.GCFailures)
	require.Equal(t, 1, rep.GCGroups, "the other old group is deleted all the same")
	require.Equal(t, sSafe.LastIncludedBatchID, rep.Floor, "a GC failure never blocks the floor")
	require.Positive(t, rep.BatchesDeleted, "nor the batch deletes")

	mid := wd.groups()
	require.NotContains(t, mid, b.SnapshotID)
	require.Contains(t, mid, a.SnapshotID, "the half-deleted group is still listed")
	require.Less(t, mid[a.SnapshotID], before[a.SnapshotID])
	_, err = wd.st.Head(ctxT(t), a.DescriptorKey)
	require.NoError(t, err, "its descriptor went last, so it is still there")

	rep, err = wd.cycle(t, flaky, opts(grace))
	require.NoError(t, err)
	t.Logf("retry cycle: %+v", rep)
	require.Zero(t, rep.GCFailures)
	require.Equal(t, 1, rep.GCGroups)
	require.NotContains(t, wd.groups(), a.SnapshotID)
	require.Len(t, wd.groups(), 2, "only the two protected groups are left")
}

// crash runs one cycle whose hook panics, as a process killed in that window
// would stop, and returns what the cycle had done.
func crash(t *testing.T, wd *world, o retention.Options) {
	t.Helper()
	done := make(chan any)
	go func() {
		defer func() { done <- recover() }()
		_, _ = wd.cycle(t, wd.st, o)
	}()
	require.Equal(t, "crash", <-done, "the cycle reached the crash window")
}

// A crash after GC and before the floor CAS leaves the complete history: no
// floor, batch 1 onwards present, and a bootstrap that cannot use either
// pointer rebuilds the exact state from the complete OpLog.
func TestCrashAfterGCKeepsCompleteHistory(t *testing.T) {
	wd := newWorld(t)
	const grace = time.Second
	wd.puts(4)
	orphan := wd.snap()
	wd.published(4)
	wd.published(4)
	time.Sleep(grace + 1500*time.Millisecond)

	o := opts(grace)
	o.AfterGC = func() { panic("crash") }
	crash(t, wd, o)
	require.NotContains(t, wd.groups(), orphan.SnapshotID, "GC ran before the crash")
	require.Zero(t, wd.floor(), "no floor was published")
	lo, hi, n := wd.batchRange()
	require.Equal(t, uint64(1), lo)
	require.Equal(t, int(hi), n, "every batch from 1 is present")

	got := wd.replayAll()
	require.Equal(t, wd.want.Digest(), got.Digest(), "the complete OpLog rebuilds the exact state")

	rep, err := wd.cycle(t, wd.st, opts(grace))
	require.NoError(t, err)
	require.True(t, rep.FloorMoved, "the next cycle publishes the floor")
	require.Positive(t, rep.BatchesDeleted)
}

// A crash after the floor CAS and before the range delete leaves batches at
// or below the floor; they are harmless (no reader starts below the floor)
// and the next cycle deletes them.
func TestCrashAfterFloorLeavesBatchesForTheNextCycle(t *testing.T) {
	wd := newWorld(t)
	sSafe := wd.published(4)
	wd.published(4)

	o := opts(time.Hour)
	o.AfterCAS = func() { panic("crash") }
	crash(t, wd, o)
	require.Equal(t, sSafe.LastIncludedBatchID, wd.floor(), "the floor was published")
	lo, _, _ := wd.batchRange()
	require.Equal(t, uint64(1), lo, "nothing was deleted")

	rep, err := wd.cycle(t, wd.st, opts(time.Hour))
	require.NoError(t, err)
	require.False(t, rep.FloorMoved, "the floor is already there")
	require.Equal(t, int64(sSafe.LastIncludedBatchID), rep.BatchesDeleted)
	lo, _, _ = wd.batchRange()
	require.Equal(t, sSafe.LastIncludedBatchID+1, lo)
}

// A writer appends the whole time while snapshots are published and
// retention cycles prune behind them: no batch above the floor is ever
// deleted, the history above the floor stays contiguous, and latest plus
// the suffix rebuilds the exact state.
func TestAppendsDuringRetentionAreNeverDeleted(t *testing.T) {
	wd := newWorld(t)
	wd.published(10)

	var stop atomic.Bool
	var appended atomic.Int64
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		deadline := time.Now().Add(time.Minute)
		for i := 0; i < 3000 && !stop.Load() && time.Now().Before(deadline); i++ {
			wd.puts(1)
			appended.Add(1)
		}
	}()
	cycles, deleted := 0, int64(0)
	for i := 0; i < 8; i++ {
		time.Sleep(100 * time.Millisecond)
		wd.publish(wd.snap())
		rep, err := wd.cycle(t, wd.st, opts(time.Hour))
		require.NoError(t, err)
		cycles++
		deleted += rep.BatchesDeleted
		lo, hi, n := wd.batchRange()
		require.Equal(t, wd.floor()+1, lo, "cycle %d: nothing above the floor deleted", i)
		require.Equal(t, int(hi-lo+1), n, "cycle %d: no gap above the floor", i)
	}
	stop.Store(true)
	<-writerDone
	t.Logf("%d cycles deleted %d batches while %d were appended", cycles, deleted, appended.Load())
	require.Positive(t, deleted)
	require.Positive(t, appended.Load())

	o, err := publish.Observe(ctxT(t), wd.cli, wd.ks)
	require.NoError(t, err)
	h, s, _, err := snapshot.OpenState(ctxT(t), wd.st, *o.Latest.Pointer)
	require.NoError(t, err)
	_, err = (&oplog.Reader{KV: wd.cli, Keyspace: wd.ks}).Scan(ctxT(t), h.Descriptor.Cursor(), s.Apply)
	require.NoError(t, err)
	require.Equal(t, wd.want.Digest(), s.Digest(), fmt.Sprintf("latest at batch %d plus the suffix", h.Descriptor.LastIncludedBatchID))
}

// A failed floor CAS deletes nothing; a failed range delete after the floor
// retains the batches, and the next cycle deletes them.
func TestFloorCASAndRangeDeleteFailures(t *testing.T) {
	wd := newWorld(t)
	sSafe := wd.published(4)
	wd.published(4)

	o := opts(time.Hour)
	o.FloorCASFault = func() error { return errInjected }
	_, err := wd.cycle(t, wd.st, o)
	require.ErrorIs(t, err, retention.ErrFloorCAS)
	require.Zero(t, wd.floor())
	lo, _, _ := wd.batchRange()
	require.Equal(t, uint64(1), lo, "a failed floor CAS deletes nothing")

	o = opts(time.Hour)
	o.DeleteFault = func() error { return errInjected }
	_, err = wd.cycle(t, wd.st, o)
	require.ErrorIs(t, err, retention.ErrRangeDelete)
	require.Equal(t, sSafe.LastIncludedBatchID, wd.floor(), "the floor was published")
	lo, _, _ = wd.batchRange()
	require.Equal(t, uint64(1), lo, "the covered batches are retained")

	rep, err := wd.cycle(t, wd.st, opts(time.Hour))
	require.NoError(t, err)
	require.Equal(t, int64(sSafe.LastIncludedBatchID), rep.BatchesDeleted, "the retry deletes them")
}

// The floor advances only with two valid, ordered pointers: with one, or
// with the fallback slot holding garbage, the cycle deletes nothing.
func TestFloorNeedsTwoValidPointers(t *testing.T) {
	wd := newWorld(t)
	wd.published(4)
	rep, err := wd.cycle(t, wd.st, opts(time.Hour))
	require.NoError(t, err)
	require.NotEmpty(t, rep.Skipped, "one pointer")
	require.Zero(t, wd.floor())

	wd.published(4)
	_, err = wd.cli.Put(ctxT(t), wd.ks.SnapshotFallback(), `{"pointer_schema_version":1,"snapshot_id":"garbage"`)
	require.NoError(t, err)
	rep, err = wd.cycle(t, wd.st, opts(time.Hour))
	require.NoError(t, err)
	require.NotEmpty(t, rep.Skipped, "an invalid fallback")
	require.Zero(t, wd.floor())
	lo, _, _ := wd.batchRange()
	require.Equal(t, uint64(1), lo, "nothing deleted")
}
