package master

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/impl/contract/metadata"
	"github.com/oplogha/oplogha/impl/internal/etcdtest"
	"github.com/oplogha/oplogha/impl/objstore/localdir"
	"github.com/oplogha/oplogha/impl/oplog"
	"github.com/oplogha/oplogha/impl/publish"
	"github.com/oplogha/oplogha/impl/state"
)

// lockedBuffer is a log sink safe for the master's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A suffix replay that fails on an object's entry is logged with the
// batch and entry position, never with the object's tenant or key: the
// "snapshot unusable" warning and the failed bootstrap both name no key.
func TestBootstrapLogsNameNoTenantKey(t *testing.T) {
	ctx := context.Background()
	srv := etcdtest.Start(t)
	cfg := DefaultConfig()
	cfg.ClusterID, cfg.Listen, cfg.EtcdEndpoints = "leak", "127.0.0.1:0", []string{srv.Endpoint}
	cfg.Environment, cfg.ObjectStore, cfg.LocalStoreDir = "development", "local", t.TempDir()
	var logs lockedBuffer
	m, err := New(cfg, slog.New(slog.NewJSONHandler(&logs, nil)))
	require.NoError(t, err)
	store, err := localdir.New(cfg.LocalStoreDir)
	require.NoError(t, err)
	m.cli, m.store = srv.Client, store

	const tenant, key = "tenant-sekrit", "key-that-must-not-be-logged"
	view, err := oplog.ClaimProducerView(ctx, srv.Client, m.ks)
	require.NoError(t, err)
	w, err := oplog.NewWriter(ctx, srv.Client, m.ks, view)
	require.NoError(t, err)
	live := state.New()
	seg := state.Segment{Endpoint: "10.0.0.1:1", Name: "s", Capacity: 1 << 30, Kind: state.ReplicaMemory}
	obj := state.Object{ClientID: state.UUID{First: 1}, Size: 10,
		Replicas: []state.Replica{{ID: 1, Kind: state.ReplicaMemory, Segment: seg.Endpoint,
			Offset: 0, Length: 10, Status: state.ReplicaComplete}}}
	for _, e := range []state.Entry{state.MountSegment(seg), state.PutEnd(tenant, key, obj)} {
		b, err := w.Append(ctx, []state.Entry{e})
		require.NoError(t, err)
		require.NoError(t, live.Apply(b))
	}
	lease, err := publish.AcquireLease(ctx, srv.Client, m.ks, "test", 30)
	require.NoError(t, err)
	d := writeSnapshot(t, store, m.storePrefix(), live.Capture(), view, int64(lease.ID))
	o, err := publish.Observe(ctx, srv.Client, m.ks)
	require.NoError(t, err)
	plan, err := publish.PlanFor(o, d)
	require.NoError(t, err)
	_, err = publish.Publish(ctx, srv.Client, m.ks, lease.Token, o, plan)
	require.NoError(t, err)
	require.NoError(t, lease.Release(ctx))
	// Batch 3 puts the object with a replica status outside upstream's 0..5,
	// which this model cannot hold: the suffix after latest cannot apply.
	bad, err := metadata.EncodeMetadataPayload(metadata.MetadataPayload{Size: 10, Replicas: []metadata.ReplicaDescriptor{{ID: 1, Status: 9,
		Variant: metadata.MemoryDescriptor{Buffer: metadata.BufferDescriptor{Size: 10, TransportEndpoint: seg.Endpoint}}}}})
	require.NoError(t, err)
	_, err = w.Append(ctx, []state.Entry{{Op: state.OpPutEnd, Tenant: tenant, Key: key, Payload: bad}})
	require.NoError(t, err)

	_, err = m.bootstrap(ctx)
	require.Error(t, err, "neither latest + suffix nor the complete OpLog applies")
	m.log.Error("bootstrap failed closed", "err", err) // as bootstrapUntilDone logs it
	out := logs.String()
	require.Contains(t, out, "snapshot unusable", "the warning this test is about was logged")
	require.Contains(t, out, "batch 3 entry 0")
	require.NotContains(t, out, key)
	require.NotContains(t, out, tenant)
}
