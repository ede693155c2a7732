package runner

import (
	"context"

	"github.com/oplogha/oplogha/impl/contract/batchsnap"
	"github.com/oplogha/oplogha/impl/contract/keyspace"

	clientv3 "go.etcd.io/etcd/client/v3"

	"strings"
	"sync"
	"time"

	"github.com/oplogha/oplogha/harness/audit"
	"github.com/oplogha/oplogha/harness/cluster"
	"github.com/oplogha/oplogha/harness/objects"
)

// samples is the run's retention series, appended by sample.
type samples struct {
	mu sync.Mutex
	ss []audit.RetentionSample
}

func (s *samples) add(x audit.RetentionSample) {
	s.mu.Lock()
	s.ss = append(s.ss, x)
	s.mu.Unlock()
}

func (s *samples) all() []audit.RetentionSample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]audit.RetentionSample(nil), s.ss...)
}

// store opens the run's snapshot store from the harness side, with the
// harness's own client (nil: none).
func (r *run) store() (objects.Reader, error) {
	switch {
	case r.cluster.S3 != nil:
		tr, err := r.cluster.S3.Transport()
		if err != nil {
			return nil, err
		}
		s := r.cluster.S3
		return objects.S3(s.Endpoint, cluster.SnapshotBucket, s.AccessKey, s.SecretKey, tr)
	case r.cluster.StoreDir != "":
		return objects.Dir(r.cluster.StoreDir), nil
	}
	return nil, nil
}

// snapshotPrefix is where the cluster's snapshot groups live in the store.
func (r *run) snapshotPrefix() string {
	return cluster.SnapshotPrefix + "/" + r.sc.Cluster.ClusterID + "/"
}

// sample reads, once a second until ctx ends, what the cluster retains (see
// sampleOnce). A failed read (a member down, S3 cut off) skips that field's
// sample rather than the run.
func (r *run) sample(ctx context.Context) {
	st, _ := r.store()
	cli, ks, err := r.etcd()
	if err != nil {
		return
	}
	defer cli.Close()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		r.sampleOnce(rctx, cli, ks, st)
		cancel()
		kctx, kcancel := context.WithTimeout(ctx, 30*time.Second)
		r.keepNamed(kctx, cli, ks, st)
		kcancel()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// sampleOnce reads what the cluster retains and adds it to the series: the
// floor, the batch keys and the durable prefix in etcd, the snapshot groups
// under the cluster's prefix in st (nil: none), and the largest member's
// database size.
func (r *run) sampleOnce(ctx context.Context, cli *clientv3.Client, ks keyspace.Keyspace, st objects.Reader) {
	sh, err := r.oplogShape(ctx, cli, ks)
	if err != nil {
		return
	}
	prefix := r.snapshotPrefix()
	x := audit.RetentionSample{At: int64(time.Since(r.start)), Rev: sh.Rev, Floor: sh.Floor, Prefix: sh.Prefix, BatchKeys: sh.Count, Groups: -1}
	if st != nil {
		before, berr := readPointers(ctx, cli, ks)
		if list, err := st.List(ctx, prefix); err == nil {
			x.Groups = countGroups(list, prefix)
			if after, aerr := readPointers(ctx, cli, ks); berr == nil && aerr == nil {
				x.MissingTargets = missingTargets(before, after, list, r.keeper.keysOf)
			}
		}
	}
	for _, m := range r.cluster.Etcd.Status(ctx) {
		x.DBSize, x.DBInUse = max(x.DBSize, m.DBSize), max(x.DBInUse, m.InUse)
	}
	r.retention.add(x)
}

func countGroups(list []objects.Object, prefix string) int {
	groups := batchsnap.ArtifactRoot(prefix)
	ids := map[string]bool{}
	for _, o := range list {
		rest, under := strings.CutPrefix(o.Key, groups)
		if id, _, ok := strings.Cut(rest, "/"); under && ok {
			ids[id] = true
		}
	}
	return len(ids)
}

// readPointers reads both pointer slots' raw values in one request.
func readPointers(ctx context.Context, cli *clientv3.Client, ks keyspace.Keyspace) ([2][]byte, error) {
	return readPointersAt(ctx, cli, ks, 0)
}

// readPointersAt reads both pointer slots as they were at etcd revision rev
// (0: now).
func readPointersAt(ctx context.Context, cli *clientv3.Client, ks keyspace.Keyspace, rev int64) ([2][]byte, error) {
	var out [2][]byte
	var opts []clientv3.OpOption
	if rev > 0 {
		opts = append(opts, clientv3.WithRev(rev))
	}
	resp, err := cli.Txn(ctx).Then(clientv3.OpGet(ks.SnapshotLatest(), opts...), clientv3.OpGet(ks.SnapshotFallback(), opts...)).Commit()
	if err != nil {
		return out, err
	}
	for i := range out {
		if kvs := resp.Responses[i].GetResponseRange().Kvs; len(kvs) > 0 {
			out[i] = kvs[0].Value
		}
	}
	return out, nil
}

// keepNamed keeps (snapshotKeeper) the snapshots the pointers name now.
func (r *run) keepNamed(ctx context.Context, cli *clientv3.Client, ks keyspace.Keyspace, st objects.Reader) {
	r.keepNamedAt(ctx, cli, ks, st, 0)
}

// keepNamedAt keeps the snapshots the pointers named at etcd revision rev
// (0: now): collection keeps those of the revision its history ends at.
func (r *run) keepNamedAt(ctx context.Context, cli *clientv3.Client, ks keyspace.Keyspace, st objects.Reader, rev int64) {
	if st == nil || r.keeper == nil {
		return
	}
	live := func(ctx context.Context) ([2][]byte, error) { return readPointersAt(ctx, cli, ks, rev) }
	ptrs, err := live(ctx)
	if err != nil {
		return
	}
	for _, raw := range ptrs {
		r.keeper.note(ctx, st, raw, live)
	}
}

// missingTargets names each pointer that stayed the same across a listing
// (read before and after it) yet whose snapshot is not whole in it: its
// descriptor, or any object the keeper copied while a pointer named it
// (kept gives those keys by snapshot id), is gone from the store while the
// snapshot is authoritative.
func missingTargets(before, after [2][]byte, list []objects.Object, kept func(id string) []string) []string {
	have := map[string]bool{}
	for _, o := range list {
		have[o.Key] = true
	}
	var out []string
	for i, name := range []string{"latest", "fallback"} {
		if before[i] == nil || string(before[i]) != string(after[i]) {
			continue
		}
		p, err := batchsnap.DecodePointer(before[i])
		if err != nil {
			continue
		}
		if !have[p.DescriptorKey] {
			out = append(out, name+" "+p.SnapshotID)
			continue
		}
		for _, key := range kept(p.SnapshotID) {
			if !have[key] {
				out = append(out, name+" "+p.SnapshotID+" ("+key+")")
				break
			}
		}
	}
	return out
}
