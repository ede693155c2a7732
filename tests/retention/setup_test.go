// Package retention tests the retention cycle (impl/retention) against the
// real parts it runs on in production: an etcd process built from go.mod and
// versitygw as the S3 server, reached through the s3 backend (minio-go).
// Faults are injected by wrapping the real store, never by replacing it.
package retention

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/oplogha/oplogha/harness/bin"
	"github.com/oplogha/oplogha/harness/etcd"
	"github.com/oplogha/oplogha/harness/proc"
	"github.com/oplogha/oplogha/harness/s3server"
	"github.com/oplogha/oplogha/impl/contract/batchsnap"
	"github.com/oplogha/oplogha/impl/contract/keyspace"
	"github.com/oplogha/oplogha/impl/objstore"
	"github.com/oplogha/oplogha/impl/oplog"
	"github.com/oplogha/oplogha/impl/publish"
	"github.com/oplogha/oplogha/impl/retention"
	"github.com/oplogha/oplogha/impl/snapshot"
	"github.com/oplogha/oplogha/impl/state"
	"github.com/oplogha/oplogha/tests/s3store"
)

const storePrefix = "snaps/c1"

// world is one etcd process, one versitygw and a primary's writer whose
// every batch is also applied to want, the state the OpLog must rebuild.
type world struct {
	t     *testing.T
	cli   *clientv3.Client
	ks    keyspace.Keyspace
	st    objstore.Store
	trust objstore.Trust
	srv   *s3server.Server
	w     *oplog.Writer

	mu    sync.Mutex
	want  *state.State
	n     int
	lease int64 // the last maintenance lease a snapshot was made under: each its own
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func newWorld(t *testing.T) *world {
	t.Helper()
	ctx := ctxT(t)
	cache, err := bin.NewCache(".", nil)
	require.NoError(t, err)
	etcdBin, err := cache.Path(ctx, "etcd")
	require.NoError(t, err)
	gwBin, err := cache.Path(ctx, s3server.Versity)
	require.NoError(t, err)
	group := proc.NewGroup()
	t.Cleanup(func() { require.NoError(t, group.Close(5*time.Second)) })

	cluster, err := etcd.Start(ctx, group, etcd.Options{Members: 1, Binary: etcdBin.Path, Dir: t.TempDir()})
	require.NoError(t, err)
	cli, err := cluster.Client(nil)
	require.NoError(t, err)
	t.Cleanup(func() { cli.Close() })

	srv, err := s3server.Start(ctx, group, s3server.Versity, gwBin.Path, t.TempDir())
	require.NoError(t, err)
	st, trust, err := s3store.Open(ctx, srv, "snapshots", 5<<20, "_probe/checksum")
	require.NoError(t, err)

	ks := keyspace.Must("c1")
	view, err := oplog.ClaimProducerView(ctx, cli, ks)
	require.NoError(t, err)
	w, err := oplog.NewWriter(ctx, cli, ks, view)
	require.NoError(t, err)
	wd := &world{t: t, cli: cli, ks: ks, st: st, trust: trust, srv: srv, w: w, want: state.New()}
	wd.appendBatch(state.MountSegment(state.Segment{Endpoint: "10.0.0.1:7000", Name: "a", Capacity: 1 << 40, Kind: state.ReplicaMemory}))
	return wd
}

// appendBatch appends and applies under one lock, so a snapshot's capture
// and cursor (read together under it) always agree.
func (wd *world) appendBatch(entries ...state.Entry) state.Batch {
	wd.t.Helper()
	wd.mu.Lock()
	defer wd.mu.Unlock()
	b, err := wd.w.Append(ctxT(wd.t), entries)
	require.NoError(wd.t, err)
	require.NoError(wd.t, wd.want.Apply(b))
	return b
}

// puts appends n batches of one new object each.
func (wd *world) puts(n int) {
	for range n {
		wd.mu.Lock()
		wd.n++
		k := wd.n
		wd.mu.Unlock()
		wd.appendBatch(state.PutEnd("t", fmt.Sprintf("k%06d", k), state.Object{ClientID: state.UUID{First: 1}, Size: 4096,
			Replicas: []state.Replica{{ID: uint64(k), Kind: state.ReplicaMemory, Segment: "10.0.0.1:7000",
				Offset: uint64(k) * 4096, Length: 4096, Status: state.ReplicaComplete}}}))
	}
}

// snap writes a complete snapshot group of the current state (its cursor is
// the last appended batch) and returns the pointer that would publish it.
func (wd *world) snap() publish.Pointer {
	t := wd.t
	wd.mu.Lock()
	capture := wd.want.Capture()
	cur := wd.w.Prefix()
	wd.mu.Unlock()
	wd.mu.Lock()
	wd.lease++
	lease := wd.lease
	wd.mu.Unlock()
	p, err := snapshot.Prepare(capture, snapshot.PrepareSpec{Root: storePrefix, ID: snapshot.NewID(cur.BatchID, lease), View: int64(wd.w.View()),
		WorkDir: t.TempDir(), ChunkObjects: 64})
	require.NoError(t, err)
	defer p.Close()
	w, err := snapshot.Write(ctxT(t), wd.st, wd.trust, p, snapshot.WriteOptions{})
	require.NoError(t, err)
	return w.Pointer
}

// publish runs the dual-pointer CAS for p under a fresh maintenance lease.
func (wd *world) publish(p publish.Pointer) {
	t := wd.t
	l, err := publish.AcquireLease(ctxT(t), wd.cli, wd.ks, "standby-1", 10)
	require.NoError(t, err)
	defer l.Release(context.Background())
	o, err := publish.Observe(ctxT(t), wd.cli, wd.ks)
	require.NoError(t, err)
	plan, err := publish.PlanFor(o, p)
	require.NoError(t, err)
	_, err = publish.Publish(ctxT(t), wd.cli, wd.ks, l.Token, o, plan)
	require.NoError(t, err)
}

// published appends n batches, snapshots the state and publishes it.
// cycle runs one retention cycle on st under a maintenance lease taken
// for it (and released after, even when the cycle panics).
func (wd *world) cycle(t *testing.T, st objstore.Store, o retention.Options) (retention.Report, error) {
	t.Helper()
	l, err := publish.AcquireLease(ctxT(t), wd.cli, wd.ks, "maintainer", 10)
	require.NoError(t, err)
	defer l.Release(context.Background())
	o.Lease = l
	return retention.Run(ctxT(t), wd.cli, wd.ks, st, o)
}

func (wd *world) published(n int) publish.Pointer {
	wd.puts(n)
	p := wd.snap()
	wd.publish(p)
	return p
}

// groups lists the snapshot ids under the dedicated prefix.
func (wd *world) groups() map[string]int {
	groups := batchsnap.ArtifactRoot(storePrefix)
	list, err := wd.st.List(ctxT(wd.t), groups)
	require.NoError(wd.t, err)
	out := map[string]int{}
	for _, o := range list {
		rest := o.Key[len(groups):]
		if id, _, ok := strings.Cut(rest, "/"); ok {
			out[id]++
		}
	}
	return out
}

// batchRange is the lowest and highest batch key present, and how many.
func (wd *world) batchRange() (lo, hi uint64, n int) {
	t := wd.t
	resp, err := wd.cli.Get(ctxT(t), wd.ks.BatchPrefix(), clientv3.WithPrefix(), clientv3.WithKeysOnly())
	require.NoError(t, err)
	for i, kv := range resp.Kvs {
		id, ok := wd.ks.ParseBatch(string(kv.Key))
		require.True(t, ok, "batch key %q", kv.Key)
		if i == 0 {
			lo = id
		}
		hi = id
	}
	return lo, hi, len(resp.Kvs)
}

// floor reads compaction_floor (0 when absent).
func (wd *world) floor() uint64 {
	resp, err := wd.cli.Get(ctxT(wd.t), wd.ks.CompactionFloor())
	require.NoError(wd.t, err)
	if len(resp.Kvs) == 0 {
		return 0
	}
	f, err := oplog.DecodeFloor(resp.Kvs[0].Value)
	require.NoError(wd.t, err)
	return f.BatchID
}

// replayAll rebuilds the state from the complete OpLog, as a bootstrap with
// no usable pointer does, and returns it.
func (wd *world) replayAll() *state.State {
	got := state.New()
	_, err := (&oplog.Reader{KV: wd.cli, Keyspace: wd.ks}).ReadAll(ctxT(wd.t), got.Apply)
	require.NoError(wd.t, err)
	return got
}
