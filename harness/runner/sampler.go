package runner

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/oplogha/oplogha/harness/audit"
	"github.com/oplogha/oplogha/harness/runtime"
	"github.com/oplogha/oplogha/impl/objstore"
	"github.com/oplogha/oplogha/impl/objstore/localdir"
	"github.com/oplogha/oplogha/impl/objstore/s3"
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

// store opens the run's snapshot store from the harness side (nil: none).
func (r *run) store() (objstore.Store, error) {
	switch {
	case r.cluster.S3 != nil:
		cfg, err := r.cluster.S3.Config(runtime.SnapshotBucket)
		if err != nil {
			return nil, err
		}
		return s3.New(cfg)
	case r.cluster.StoreDir != "":
		return localdir.New(r.cluster.StoreDir)
	}
	return nil, nil
}

// snapshotPrefix is where the cluster's snapshot groups live in the store.
func (r *run) snapshotPrefix() string {
	return runtime.SnapshotPrefix + "/" + r.sc.Cluster.ClusterID + "/"
}

// sample reads, once a second until ctx ends, what the cluster retains: the
// floor, the batch keys and the durable prefix in etcd, the snapshot groups
// under the cluster's prefix, and the largest member's database size. A
// failed read (a member down, S3 cut off) skips that field's sample rather
// than the run.
func (r *run) sample(ctx context.Context) {
	st, _ := r.store()
	prefix := r.snapshotPrefix()
	cli, ks, err := r.etcd()
	if err != nil {
		return
	}
	defer cli.Close()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		if sh, err := r.oplogShape(rctx, cli, ks); err == nil {
			x := audit.RetentionSample{At: int64(time.Since(r.start)), Floor: sh.Floor, Prefix: sh.Prefix, BatchKeys: sh.Count, Groups: -1}
			if st != nil {
				if list, err := st.List(rctx, prefix); err == nil {
					x.Groups = countGroups(list, prefix)
				}
			}
			for _, m := range r.cluster.Etcd.Status(rctx) {
				x.DBSize, x.DBInUse = max(x.DBSize, m.DBSize), max(x.DBInUse, m.InUse)
			}
			r.retention.add(x)
		}
		cancel()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func countGroups(list []objstore.Info, prefix string) int {
	ids := map[string]bool{}
	for _, o := range list {
		if id, _, ok := strings.Cut(strings.TrimPrefix(o.Key, prefix), "/"); ok && id != "_probe" {
			ids[id] = true
		}
	}
	return len(ids)
}
