package master

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/impl/internal/etcdtest"
	"github.com/oplogha/oplogha/impl/oplog"
	"github.com/oplogha/oplogha/impl/state"
)

// floorTestMaster is a master at batch 0 beside a namespace with two batches
// and a compaction floor whose record nobody can read.
func floorTestMaster(t *testing.T, cluster string) (*Master, *etcdtest.Server, uint64) {
	t.Helper()
	ctx := context.Background()
	srv := etcdtest.Start(t)
	m := garbageTestMaster(t, cluster, srv)
	m.cli = srv.Client
	view, err := oplog.ClaimProducerView(ctx, srv.Client, m.ks)
	require.NoError(t, err)
	w, err := oplog.NewWriter(ctx, srv.Client, m.ks, view)
	require.NoError(t, err)
	seg := state.Segment{Endpoint: "10.0.0.1:1", Name: "s", Capacity: 1 << 30, Kind: state.ReplicaMemory}
	for range 2 {
		_, err = w.Append(ctx, []state.Entry{state.MountSegment(seg)})
		require.NoError(t, err)
		seg.Endpoint += "0"
	}
	_, err = srv.Client.Put(ctx, m.ks.CompactionFloor(), `{"batch_idx":1}`)
	require.NoError(t, err)
	return m, srv, view
}

// RFC "Standby cursor below floor → rebootstrap; never skip": a node that
// cannot read the floor cannot know it is not below it, so it is not
// promotable (it waits, and says so), and a promotion that meets an
// unreadable floor refuses before it claims a producer view.
func TestUnreadableFloorIsNotPromotable(t *testing.T) {
	t.Run("campaign", func(t *testing.T) {
		m, _, _ := floorTestMaster(t, "floor-wait")
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		err := m.waitPromotable(ctx)
		require.ErrorIs(t, err, context.DeadlineExceeded, "an unreadable floor must hold the node back")
		require.False(t, m.promotable)
	})
	t.Run("promotion", func(t *testing.T) {
		m, srv, view := floorTestMaster(t, "floor-promote")
		_, _, err := m.promote(context.Background(), nil)
		require.Error(t, err)
		got, err := oplog.ReadProducerView(context.Background(), srv.Client, m.ks)
		require.NoError(t, err)
		require.Equal(t, view, got, "no producer view claimed by a promotion that could not know its gap")
	})
}

// A candidate queued in the election leaves the queue once it stops being
// promotable: the watcher cancels its campaign with errNotPromotable when
// the floor moves past its cursor.
func TestQueuedCandidateBelowTheFloorLeavesTheQueue(t *testing.T) {
	m, srv, _ := floorTestMaster(t, "floor-queue")
	_, err := srv.Client.Put(context.Background(), m.ks.CompactionFloor(), string(oplog.Floor{BatchID: 0}.Encode()))
	require.NoError(t, err)
	ok, why := m.promotableNow(context.Background())
	require.True(t, ok, why)

	camp, stop := context.WithCancelCause(context.Background())
	defer stop(nil)
	go m.watchPromotable(camp, stop)
	_, err = srv.Client.Put(context.Background(), m.ks.CompactionFloor(), string(oplog.Floor{BatchID: 2}.Encode()))
	require.NoError(t, err)
	select {
	case <-camp.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the campaign of a node below the floor went on")
	}
	require.ErrorIs(t, context.Cause(camp), errNotPromotable)
	require.False(t, m.promotable)
}
