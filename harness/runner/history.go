package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/oplogha/oplogha/impl/contract/batchlog"
	"github.com/oplogha/oplogha/impl/contract/keyspace"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/oplogha/oplogha/harness/bundle"
	"github.com/oplogha/oplogha/harness/etcddump"
)

// keepHistory appends the namespace's MVCC history from the last kept
// revision through upto to the bundle's etcd history. The run calls it at
// the end, and before every MVCC compaction it performs (compact-defrag),
// so the keyspace-order audit still sees every revision from 1.
func (r *run) keepHistory(ctx context.Context, cli *clientv3.Client, ks keyspace.Keyspace, upto int64) error {
	r.histMu.Lock()
	defer r.histMu.Unlock()
	path := filepath.Join(r.dir, bundle.EtcdHistoryFile)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := etcddump.ReadHistory(ctx, cli, ks, r.histFrom, upto, f); err != nil {
		return fmt.Errorf("etcd history %d..%d: %w", r.histFrom, upto, err)
	}
	r.histFrom = max(r.histFrom, upto+1)
	return f.Close()
}

// keyspace names the cluster's etcd keys (impl/contract).
func (r *run) keyspace() (keyspace.Keyspace, error) {
	return keyspace.New(r.sc.Cluster.ClusterID)
}

// etcd dials the run's etcd members directly (no link) and returns the
// cluster's keyspace; the caller closes the client.
func (r *run) etcd() (*clientv3.Client, keyspace.Keyspace, error) {
	ks, err := r.keyspace()
	if err != nil {
		return nil, ks, err
	}
	cli, err := r.cluster.Etcd.Client(nil)
	return cli, ks, err
}

// durableBatchOf reads the durable prefix's batch id through cli, linearizably:
// a poll dials once and reads with this.
func durableBatchOf(ctx context.Context, cli *clientv3.Client, ks keyspace.Keyspace) (uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := cli.Get(ctx, ks.DurablePrefix())
	if err != nil {
		return 0, err
	}
	if len(resp.Kvs) == 0 {
		return 0, nil
	}
	p, err := batchlog.DecodeDurablePrefix(resp.Kvs[0].Value)
	if err != nil {
		return 0, err
	}
	return p.BatchID, nil
}

// beforeCompact keeps the history through rev before etcd forgets it.
func (r *run) beforeCompact(ctx context.Context, rev int64) error {
	cli, ks, err := r.etcd()
	if err != nil {
		return err
	}
	defer cli.Close()
	return r.keepHistory(ctx, cli, ks, rev)
}
