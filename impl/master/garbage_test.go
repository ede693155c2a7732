package master

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/impl/internal/etcdtest"
	"github.com/oplogha/oplogha/impl/oplog"
	"github.com/oplogha/oplogha/impl/state"
)

func garbageTestMaster(t *testing.T, cluster string, srv *etcdtest.Server) *Master {
	t.Helper()
	cfg := DefaultConfig()
	cfg.ClusterID, cfg.Listen, cfg.EtcdEndpoints = cluster, "127.0.0.1:0", []string{srv.Endpoint}
	cfg.Environment, cfg.OplogPollIntervalMS, cfg.LeaderLeaseSeconds = "development", 20, 2
	m, err := New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	return m
}

// RFC "Complete OpLog Fallback": pure OpLog recovery needs valid producer
// view/fencing data. Garbage in the view (or no view beside a durable
// prefix) fails the recovery closed; the view restored, it succeeds.
func TestCompleteOplogRecoveryNeedsAValidProducerView(t *testing.T) {
	ctx := context.Background()
	srv := etcdtest.Start(t)
	m := garbageTestMaster(t, "fencing", srv)
	m.cli = srv.Client

	view, err := oplog.ClaimProducerView(ctx, srv.Client, m.ks)
	require.NoError(t, err)
	w, err := oplog.NewWriter(ctx, srv.Client, m.ks, view)
	require.NoError(t, err)
	seg := state.Segment{Endpoint: "10.0.0.1:1", Name: "s", Capacity: 1 << 30, Kind: state.ReplicaMemory}
	_, err = w.Append(ctx, []state.Entry{state.MountSegment(seg)})
	require.NoError(t, err)

	info, err := m.bootstrap(ctx)
	require.NoError(t, err)
	require.Equal(t, "oplog", info.Source)

	raw := string(oplog.EncodeProducerView(view))
	for _, garbage := range []string{`{"producer_view":1}`, "", "\xfe\x01", "01", "0"} {
		_, err = srv.Client.Put(ctx, m.ks.ProducerView(), garbage)
		require.NoError(t, err)
		info, err = m.bootstrap(ctx)
		require.Error(t, err, "view %q", garbage)
		require.Equal(t, "malformed_record", errorCode(err), "view %q: %v", garbage, err)
		require.Empty(t, info.Source, "nothing installed")
	}
	_, err = srv.Client.Delete(ctx, m.ks.ProducerView())
	require.NoError(t, err)
	_, err = m.bootstrap(ctx)
	require.ErrorIs(t, err, oplog.ErrMalformed, "a durable prefix without a view")

	_, err = srv.Client.Put(ctx, m.ks.ProducerView(), raw)
	require.NoError(t, err)
	info, err = m.bootstrap(ctx)
	require.NoError(t, err)
	require.Equal(t, "oplog", info.Source)
	require.Equal(t, state.Cursor{BatchID: 1, Seq: 1}, m.st.Cursor())
}

// A fresh namespace (no prefix, no view) still bootstraps empty.
func TestFreshNamespaceNeedsNoView(t *testing.T) {
	srv := etcdtest.Start(t)
	m := garbageTestMaster(t, "fresh", srv)
	m.cli = srv.Client
	info, err := m.bootstrap(context.Background())
	require.NoError(t, err)
	require.Equal(t, "empty", info.Source)
}

// A promotion that fails on garbage fails the same way until the record is
// repaired: the node must not campaign again at once. Garbage in the durable
// prefix under a serving primary: its next append is refused, and every
// later promotion claims a producer view before it meets the garbage, so the
// view's growth counts the attempts.
func TestFailedPromotionsBackOff(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := etcdtest.Start(t)
	m := garbageTestMaster(t, "backoff", srv)
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	require.Eventually(t, func() bool { r, _ := m.RoleGeneration(); return r == RolePrimary }, 20*time.Second, 20*time.Millisecond)
	seg := state.Segment{Endpoint: "10.0.0.1:1", Name: "s", Capacity: 1 << 30, Kind: state.ReplicaMemory}
	_, err := m.submit(ctx, state.MountSegment(seg))
	require.NoError(t, err)

	ks := m.ks
	_, err = srv.Client.Put(ctx, ks.DurablePrefix(), `{"schema_version":1,"batch`)
	require.NoError(t, err)
	_, err = m.submit(ctx, state.UnmountSegment(seg.Endpoint))
	require.ErrorIs(t, err, oplog.ErrPrefixMoved)
	before, err := oplog.ReadProducerView(ctx, srv.Client, ks)
	require.NoError(t, err)
	time.Sleep(3 * time.Second)
	after, err := oplog.ReadProducerView(ctx, srv.Client, ks)
	require.NoError(t, err)
	require.LessOrEqual(t, after-before, uint64(5), "promotion attempts in 3s while the prefix is garbage")
	require.NotEqual(t, RolePrimary, func() Role { r, _ := m.RoleGeneration(); return r }(), "never serving on garbage")

	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("master did not stop")
	}
}
