package verify

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/oplogha/oplogha/impl/contract/batchlog"
	"github.com/oplogha/oplogha/impl/contract/batchsnap"
	"github.com/oplogha/oplogha/impl/contract/keyspace"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/oplogha/oplogha/impl/internal/etcdtest"
	"github.com/oplogha/oplogha/impl/objstore"
	"github.com/oplogha/oplogha/impl/objstore/localdir"
	"github.com/oplogha/oplogha/impl/publish"
	"github.com/oplogha/oplogha/impl/snapshot"
	"github.com/oplogha/oplogha/impl/state"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// ns builds namespaces by writing records through the contract's encoders
// (never through the implementation's writers): batches of two entries,
// batch i holding seqs 2i-1 and 2i.
type ns struct {
	t     *testing.T
	cli   *clientv3.Client
	ks    keyspace.Keyspace
	st    *localdir.Store
	lease int64 // the last maintenance lease a snapshot was made under: each its own
}

func newNS(t *testing.T, cli *clientv3.Client, cluster string) *ns {
	st, err := localdir.New(t.TempDir())
	require.NoError(t, err)
	return &ns{t: t, cli: cli, ks: keyspace.Must(cluster), st: st}
}

func (n *ns) put(key, val string) {
	_, err := n.cli.Put(ctxT(n.t), key, val)
	require.NoError(n.t, err)
}

func (n *ns) del(key string) {
	_, err := n.cli.Delete(ctxT(n.t), key)
	require.NoError(n.t, err)
}

func batchRecord(t *testing.T, id, first uint64) string {
	b := batchlog.Batch{ID: id, FirstSeq: first, LastSeq: first + 1, Entries: []batchlog.Entry{
		{Op: batchlog.OpRemove, Tenant: "t", Key: "k1"}, {Op: batchlog.OpRemove, Tenant: "t", Key: "k2"}}}
	v, err := batchlog.EncodeBatch(b)
	require.NoError(t, err)
	return string(v)
}

// oplog writes batches 1..n, the prefix at n and producer view 1.
func (n *ns) oplog(batches uint64) {
	for i := uint64(1); i <= batches; i++ {
		n.put(n.ks.Batch(i), batchRecord(n.t, i, 2*i-1))
	}
	n.put(n.ks.DurablePrefix(), string(batchlog.EncodeDurablePrefix(batchlog.DurablePrefix{BatchID: batches, LastSeq: 2 * batches})))
	v, err := batchlog.EncodeProducerView(1)
	require.NoError(n.t, err)
	n.put(n.ks.ProducerView(), string(v))
}

// snapshot writes a real (empty-state) snapshot at batch b to the store
// and returns its pointer.
func (n *ns) snapshot(b uint64) publish.Pointer {
	t := n.t
	s, err := state.NewBuilder().Finish(state.Cursor{BatchID: b, Seq: 2 * b})
	require.NoError(t, err)
	p, err := snapshot.Prepare(s.Capture(), snapshot.PrepareSpec{Root: "snaps/" + n.ks.ClusterID(), ID: snapshot.NewID(b, n.nextLease()), View: 1,
		WorkDir: t.TempDir(), ChunkObjects: 8, CreatedAt: time.UnixMilli(1)})
	require.NoError(t, err)
	defer p.Close()
	w, err := snapshot.Write(ctxT(t), n.st, objstore.Trust{}, p, snapshot.WriteOptions{})
	require.NoError(t, err)
	return w.Pointer
}

func (n *ns) nextLease() int64 { n.lease++; return n.lease }

func (n *ns) pointer(key string, p publish.Pointer) {
	v, err := p.Encode()
	require.NoError(n.t, err)
	n.put(key, string(v))
}

// healthy is an OpLog of 6 batches, pointers at 4 (latest) and 2
// (fallback), the floor at 2 and batches 1..2 pruned: what a running
// cluster with retention leaves.
func (n *ns) healthy() {
	n.oplog(6)
	n.pointer(n.ks.SnapshotLatest(), n.snapshot(4))
	n.pointer(n.ks.SnapshotFallback(), n.snapshot(2))
	n.put(n.ks.CompactionFloor(), string(batchsnap.Floor{BatchID: 2}.Encode()))
	n.del(n.ks.Batch(1))
	n.del(n.ks.Batch(2))
}

func (n *ns) verify() *Report {
	rep, err := Namespace(ctxT(n.t), n.cli, n.ks, Options{Store: objstore.Getter(n.st), ObjectRoot: "snaps/" + n.ks.ClusterID() + "/", PageSize: 3})
	require.NoError(n.t, err)
	return rep
}

func TestHealthyNamespacesPass(t *testing.T) {
	srv := etcdtest.Start(t)
	// Upstream's shape: an OpLog with no snapshot keys.
	up := newNS(t, srv.Client, "upstream")
	up.oplog(7)
	rep := up.verify()
	require.Empty(t, rep.Violations)
	require.EqualValues(t, 7, rep.Batches)
	require.EqualValues(t, 9, rep.Keys)

	h := newNS(t, srv.Client, "healthy")
	h.healthy()
	h.put(h.ks.Leader(), "node-a")
	h.put(h.ks.SnapshotMaintenance(), "token")
	rep = h.verify()
	require.Empty(t, rep.Violations)
	require.Len(t, rep.Pointers, 2)
	require.True(t, rep.Pointers[0].Opened && rep.Pointers[1].Opened, "%+v", rep.Pointers)
	require.EqualValues(t, 3, rep.FirstBatch)

	// A fresh namespace and an empty one verify.
	fresh := newNS(t, srv.Client, "fresh")
	require.Empty(t, fresh.verify().Violations)
	fresh.put(fresh.ks.DurablePrefix(), string(batchlog.EncodeDurablePrefix(batchlog.DurablePrefix{})))
	require.Empty(t, fresh.verify().Violations)
}

// Every rule fails on a namespace that breaks it, naming the key.
func TestEveryViolationIsNamed(t *testing.T) {
	srv := etcdtest.Start(t)
	cases := []struct {
		name   string
		break_ func(n *ns)
		key    func(ks keyspace.Keyspace) string
		reason string
	}{
		{"checksum", func(n *ns) {
			v := batchRecord(t, 5, 9)
			n.put(n.ks.Batch(5), strings.Replace(v, `"k1"`, `"k9"`, 1))
		}, func(ks keyspace.Keyspace) string { return ks.Batch(5) }, "checksum mismatch"},
		{"not json", func(n *ns) { n.put(n.ks.Batch(4), "garbage") }, func(ks keyspace.Keyspace) string { return ks.Batch(4) }, "batch record rejected: malformed"},
		{"id mismatch", func(n *ns) { n.put(n.ks.Batch(4), batchRecord(t, 40, 7)) },
			func(ks keyspace.Keyspace) string { return ks.Batch(4) }, "record says batch 40"},
		{"gap above the floor", func(n *ns) { n.del(n.ks.Batch(4)) }, func(ks keyspace.Keyspace) string { return ks.Batch(4) }, "batch 4 is missing"},
		{"gap at the floor's edge", func(n *ns) { n.del(n.ks.Batch(3)) }, func(ks keyspace.Keyspace) string { return ks.Batch(3) }, "batch 3 is missing"},
		{"seq discontinuity", func(n *ns) { n.put(n.ks.Batch(4), batchRecord(t, 4, 8)) },
			func(ks keyspace.Keyspace) string { return ks.Batch(4) }, "first_seq 8 does not follow batch 3's last_seq 6"},
		{"terminal missing", func(n *ns) { n.del(n.ks.Batch(6)) }, func(ks keyspace.Keyspace) string { return ks.Batch(6) }, "terminal batch 6 is missing"},
		{"terminal seq", func(n *ns) {
			n.put(n.ks.DurablePrefix(), string(batchlog.EncodeDurablePrefix(batchlog.DurablePrefix{BatchID: 6, LastSeq: 13})))
		}, func(ks keyspace.Keyspace) string { return ks.Batch(6) }, "ends at seq 12, the prefix says 13"},
		{"beyond the prefix", func(n *ns) { n.put(n.ks.Batch(7), batchRecord(t, 7, 13)) },
			func(ks keyspace.Keyspace) string { return ks.Batch(7) }, "beyond the durable prefix 6"},
		{"prefix absent", func(n *ns) { n.del(n.ks.DurablePrefix()) },
			func(ks keyspace.Keyspace) string { return ks.DurablePrefix() }, "absent while 4 batch keys exist"},
		{"zero prefix", func(n *ns) {
			n.put(n.ks.DurablePrefix(), string(batchlog.EncodeDurablePrefix(batchlog.DurablePrefix{})))
		}, func(ks keyspace.Keyspace) string { return ks.DurablePrefix() }, "zero durable prefix while 4 batch keys exist"},
		{"prefix half zero", func(n *ns) { n.put(n.ks.DurablePrefix(), `{"batch_id":6,"last_seq":0,"schema_version":1}`) },
			func(ks keyspace.Keyspace) string { return ks.DurablePrefix() }, "both zero or neither"},
		{"prefix garbage", func(n *ns) { n.put(n.ks.DurablePrefix(), `[]`) }, func(ks keyspace.Keyspace) string { return ks.DurablePrefix() }, "does not decode"},
		{"view garbage", func(n *ns) { n.put(n.ks.ProducerView(), "01") }, func(ks keyspace.Keyspace) string { return ks.ProducerView() }, "does not decode"},
		{"view absent beside snapshots", func(n *ns) { n.del(n.ks.ProducerView()) },
			func(ks keyspace.Keyspace) string { return ks.ProducerView() }, "absent while snapshot keys exist"},
		{"floor garbage", func(n *ns) { n.put(n.ks.CompactionFloor(), `{"batch_id":2}`) },
			func(ks keyspace.Keyspace) string { return ks.CompactionFloor() }, "does not decode"},
		{"floor above the fallback",
			func(n *ns) { n.put(n.ks.CompactionFloor(), string(batchsnap.Floor{BatchID: 3}.Encode())) },
			func(ks keyspace.Keyspace) string { return ks.CompactionFloor() }, "above the fallback snapshot's batch 2"},
		{"floor above the prefix", func(n *ns) { n.put(n.ks.CompactionFloor(), string(batchsnap.Floor{BatchID: 9}.Encode())) },
			func(ks keyspace.Keyspace) string { return ks.CompactionFloor() }, "above the durable prefix 6"},
		{"floor without pointers", func(n *ns) { n.del(n.ks.SnapshotLatest()); n.del(n.ks.SnapshotFallback()) },
			func(ks keyspace.Keyspace) string { return ks.CompactionFloor() }, "no readable snapshot pointer"},
		{"pointer garbage", func(n *ns) { n.put(n.ks.SnapshotFallback(), "{}") },
			func(ks keyspace.Keyspace) string { return ks.SnapshotFallback() }, "does not decode"},
		{"pointers out of order", func(n *ns) {
			l, f := n.snapshot(4), n.snapshot(5)
			n.pointer(n.ks.SnapshotLatest(), l)
			n.pointer(n.ks.SnapshotFallback(), f)
		}, func(ks keyspace.Keyspace) string { return ks.SnapshotLatest() }, "older than fallback"},
		{"pointer beyond the prefix", func(n *ns) { n.pointer(n.ks.SnapshotLatest(), n.snapshot(8)) },
			func(ks keyspace.Keyspace) string { return ks.SnapshotLatest() }, "beyond the durable prefix 6"},
		{"pointer seq", func(n *ns) {
			p := n.snapshot(4)
			p.LastIncludedSeq = 7
			n.pointer(n.ks.SnapshotLatest(), p)
		}, func(ks keyspace.Keyspace) string { return ks.SnapshotLatest() }, "ends at seq 8"},
		{"pointer view", func(n *ns) {
			v, _ := batchlog.EncodeProducerView(1)
			n.put(n.ks.ProducerView(), string(v))
			p := n.snapshot(4)
			p.ProducerViewVersion = 2
			n.pointer(n.ks.SnapshotLatest(), p)
		}, func(ks keyspace.Keyspace) string { return ks.SnapshotLatest() }, "newer than the current view 1"},
		{"pointer outside the root", func(n *ns) {
			p := n.snapshot(4)
			p.DescriptorKey = batchsnap.Artifacts("elsewhere", p.SnapshotID).Descriptor()
			n.pointer(n.ks.SnapshotLatest(), p)
		}, func(ks keyspace.Keyspace) string { return ks.SnapshotLatest() }, "outside the cluster's snapshot root"},
		{"snapshot object corrupt", func(n *ns) {
			p := n.snapshot(4)
			n.pointer(n.ks.SnapshotLatest(), p)
			var chunk string
			require.NoError(t, filepath.Walk(n.st.Root, func(path string, fi os.FileInfo, err error) error {
				if err == nil && strings.Contains(path, p.SnapshotID) && strings.HasSuffix(path, ".bin") {
					chunk = path
				}
				return err
			}))
			require.NotEmpty(t, chunk)
			data, err := os.ReadFile(chunk)
			require.NoError(t, err)
			data[len(data)/2] ^= 0xff
			require.NoError(t, os.WriteFile(chunk, data, 0o644))
		}, func(ks keyspace.Keyspace) string { return ks.SnapshotLatest() }, "does not verify"},
		{"snapshot objects gone", func(n *ns) { require.NoError(t, os.RemoveAll(filepath.Join(n.st.Root, "snaps"))) },
			func(ks keyspace.Keyspace) string { return ks.SnapshotLatest() }, "does not verify"},
		{"not a batch key", func(n *ns) { n.put(n.ks.BatchPrefix()+"12", batchRecord(t, 12, 1)) },
			func(ks keyspace.Keyspace) string { return ks.BatchPrefix() + "12" }, "not a batch record key"},
		{"first batch late", func(n *ns) {
			n.put(n.ks.Batch(1), batchRecord(t, 1, 7))
			n.put(n.ks.CompactionFloor(), string(batchsnap.Floor{BatchID: 0}.Encode()))
		}, func(ks keyspace.Keyspace) string { return ks.Batch(1) }, "the first batch starts at seq 7, not 1"},
		{"import batch that applies", func(n *ns) {
			n.put(n.ks.LegacyImport(), "{}")
			n.put(n.ks.Batch(1), batchRecord(t, 1, 1))
		}, func(ks keyspace.Keyspace) string { return ks.Batch(1) }, "a legacy import's batch 1 must be its single empty LEASE_RENEW entry"},
		{"legacy entry key", func(n *ns) { n.put(n.ks.Root()+"/00000000000000000001", "x") },
			func(ks keyspace.Keyspace) string { return ks.Root() + "/00000000000000000001" }, "legacy per-entry OpLog key"},
		{"legacy latest key", func(n *ns) { n.put(n.ks.Root()+"/latest", "x") },
			func(ks keyspace.Keyspace) string { return ks.Root() + "/latest" }, "legacy per-entry OpLog key"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := newNS(t, srv.Client, fmt.Sprintf("c%02d", i))
			n.healthy()
			require.Empty(t, n.verify().Violations, "the namespace before it is broken")
			c.break_(n)
			rep := n.verify()
			require.False(t, rep.OK())
			var hits []string
			for _, v := range rep.Violations {
				if v.Key == c.key(n.ks) && strings.Contains(v.Reason, c.reason) {
					hits = append(hits, v.Reason)
				}
			}
			require.NotEmpty(t, hits, "want %q at %s; got %+v", c.reason, c.key(n.ks), rep.Violations)
		})
	}
}

// A batch gap at or below the floor is pruning, not a violation; the
// terminal batch must be present even there.
func TestFloorCoversPrunedBatches(t *testing.T) {
	srv := etcdtest.Start(t)
	n := newNS(t, srv.Client, "floor")
	n.healthy()
	n.put(n.ks.Batch(1), batchRecord(t, 1, 1)) // range delete left one behind: capacity, not loss
	require.Empty(t, n.verify().Violations)
}

// A legacy import's batch 1 starts at the import's sequence.
func TestImportBatchOne(t *testing.T) {
	srv := etcdtest.Start(t)
	n := newNS(t, srv.Client, "imported")
	v, err := batchlog.EncodeBatch(batchlog.Batch{ID: 1, FirstSeq: 5000, LastSeq: 5000, Entries: []batchlog.Entry{{Op: batchlog.OpLeaseRenew}}})
	require.NoError(t, err)
	n.put(n.ks.Batch(1), string(v))
	n.put(n.ks.Batch(2), batchRecord(t, 2, 5001))
	n.put(n.ks.DurablePrefix(), string(batchlog.EncodeDurablePrefix(batchlog.DurablePrefix{BatchID: 2, LastSeq: 5002})))
	n.put(n.ks.ProducerView(), "1")
	n.put(n.ks.LegacyImport(), "{}")
	require.Empty(t, n.verify().Violations)
	n.del(n.ks.LegacyImport())
	require.Equal(t, []Violation{{Key: n.ks.Batch(1), Reason: "the first batch starts at seq 5000, not 1 (only a " +
		"legacy import's batch 1 may start later)"}}, n.verify().Violations)
}

// Unknown keys are listed, not judged.
func TestUnknownKeysAreListed(t *testing.T) {
	srv := etcdtest.Start(t)
	n := newNS(t, srv.Client, "unknown")
	n.oplog(2)
	n.put(n.ks.Root()+"/zzz", "x")
	rep := n.verify()
	require.Empty(t, rep.Violations)
	require.Equal(t, []string{n.ks.Root() + "/zzz"}, rep.Unknown)
}
