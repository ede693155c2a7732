package bench

import (
	"context"
	"fmt"
	"path"
	"sync"
	"sync/atomic"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/oplogha/oplogha/impl/contract/keyspace"
	"github.com/oplogha/oplogha/impl/oplog"
	"github.com/oplogha/oplogha/impl/publish"
	"github.com/oplogha/oplogha/impl/snapshot"
	"github.com/oplogha/oplogha/impl/state"
)

// entriesPerBatch: a busy primary's group commit gathers a few writes per
// batch.
const entriesPerBatch = 16

// logWorld is an OpLog of a given number of batches written by a real
// fenced writer, with the state it rebuilds and a capture of that state at
// its midpoint.
type logWorld struct {
	ks      keyspace.Keyspace
	view    uint64
	batches int
	want    *state.State
	mid     *state.Capture
}

var logs struct {
	sync.Mutex
	m map[string]*logWorld
}

// oplogOf writes (once per process, use and size) an OpLog of n batches:
// batch 1 mounts the synthetic segments, every later one puts
// entriesPerBatch objects. Uses that prune get their own.
func oplogOf(ctx context.Context, b *testing.B, w *world, use string, n int) *logWorld {
	b.Helper()
	logs.Lock()
	defer logs.Unlock()
	key := fmt.Sprintf("%s/%d", use, n)
	if lw, ok := logs.m[key]; ok {
		return lw
	}
	ks := freshKeyspace(fmt.Sprintf("oplog%d", n))
	view, err := oplog.ClaimProducerView(ctx, w.cli, ks)
	if err != nil {
		b.Fatal(err)
	}
	wr, err := oplog.NewWriter(ctx, w.cli, ks, view)
	if err != nil {
		b.Fatal(err)
	}
	lw := &logWorld{ks: ks, view: view, batches: n, want: state.New()}
	apply := func(entries []state.Entry) {
		bt, err := wr.Append(ctx, entries)
		if err != nil {
			b.Fatal(err)
		}
		if err := lw.want.Apply(bt); err != nil {
			b.Fatal(err)
		}
	}
	var mounts []state.Entry
	for i := range synthSegments {
		mounts = append(mounts, state.MountSegment(synthSegment(i)))
	}
	apply(append(mounts, state.MountSegment(synthDisk())))
	b.Logf("writing an OpLog of %d batches …", n)
	obj := 0
	for i := 2; i <= n; i++ {
		entries := make([]state.Entry, entriesPerBatch)
		for j := range entries {
			entries[j] = state.PutEnd(synthTenant(0, 1), fmt.Sprintf("replay/%08d", obj), synthObject(obj))
			obj++
		}
		apply(entries)
		if i == n/2 {
			lw.mid = lw.want.Capture()
		}
	}
	if logs.m == nil {
		logs.m = map[string]*logWorld{}
	}
	logs.m[key] = lw
	return lw
}

// writeSnapshot writes a complete snapshot group of c (not published).
func writeSnapshot(ctx context.Context, b *testing.B, w *world, ks keyspace.Keyspace, c snapshot.Source, view uint64) publish.Pointer {
	b.Helper()
	prep, err := snapshot.Prepare(c, snapshot.PrepareSpec{Root: path.Join("snapshots", path.Base(ks.Root())), ID: snapshot.NewID(c.Cursor().BatchID, 0x42),
		View: int64(view), WorkDir: b.TempDir(), ChunkObjects: snapshot.DefaultChunkObjects})
	if err != nil {
		b.Fatal(err)
	}
	defer prep.Close()
	written, err := snapshot.Write(ctx, w.store, w.trust, prep, snapshot.WriteOptions{})
	if err != nil {
		b.Fatal(err)
	}
	return written.Pointer
}

// counts are the etcd requests a countingKV saw.
type counts struct{ txn, get, put, del atomic.Int64 }

func (c *counts) reset() {
	for _, v := range []*atomic.Int64{&c.txn, &c.get, &c.put, &c.del} {
		v.Store(0)
	}
}

func (c *counts) total() int64 { return c.txn.Load() + c.get.Load() + c.put.Load() + c.del.Load() }

func (c *counts) String() string {
	return fmt.Sprintf("%d txn, %d range, %d put, %d delete", c.txn.Load(), c.get.Load(), c.put.Load(), c.del.Load())
}

// countingKV counts every request a real client sends.
type countingKV struct {
	clientv3.KV
	n *counts
}

func (c countingKV) Txn(ctx context.Context) clientv3.Txn { c.n.txn.Add(1); return c.KV.Txn(ctx) }
func (c countingKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	c.n.get.Add(1)
	return c.KV.Get(ctx, key, opts...)
}
func (c countingKV) Put(ctx context.Context, key, val string, opts ...clientv3.OpOption) (*clientv3.PutResponse, error) {
	c.n.put.Add(1)
	return c.KV.Put(ctx, key, val, opts...)
}
func (c countingKV) Delete(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.DeleteResponse, error) {
	c.n.del.Add(1)
	return c.KV.Delete(ctx, key, opts...)
}

// countingClient is a new client on w's etcd whose KV requests are counted.
func countingClient(b *testing.B, w *world) (*clientv3.Client, *counts) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: w.cli.Endpoints(), DialTimeout: 5e9})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cli.Close() })
	n := &counts{}
	cli.KV = countingKV{KV: cli.KV, n: n}
	return cli, n
}
