package runner

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/oplogha/oplogha/harness/scenario"
	"github.com/oplogha/oplogha/impl/contract/batchlog"
)

// waitSuffixAbove waits until the durable prefix is w.Batches above the
// prefix at the last hit of the failpoint fault w.Above: a node held there
// (standbyBeforeApply) has applied no batch above that prefix, so it is
// then at least w.Batches behind, whatever pointers say.
func (r *run) waitSuffixAbove(ctx context.Context, w *scenario.Wait) error {
	rev := r.events.lastHitRevision(w.Above)
	if rev == 0 {
		return fmt.Errorf("wait for suffix above %s: no hit of it was seen (wait for the failpoint first)", w.Above)
	}
	cli, ks, err := r.etcd()
	if err != nil {
		return err
	}
	defer cli.Close()
	var base uint64
	resp, err := cli.Get(ctx, ks.DurablePrefix(), clientv3.WithRev(rev))
	if err != nil {
		return fmt.Errorf("durable prefix at revision %d (the hit of %s): %w", rev, w.Above, err)
	}
	if len(resp.Kvs) > 0 {
		p, err := batchlog.DecodeDurablePrefix(resp.Kvs[0].Value)
		if err != nil {
			return fmt.Errorf("durable prefix at revision %d (the hit of %s): %w", rev, w.Above, err)
		}
		base = p.BatchID
	}
	return r.pollShape(ctx, func(sh oplogShape) (bool, string) {
		above := uint64(0)
		if sh.Prefix > base {
			above = sh.Prefix - base
		}
		return above >= uint64(w.Batches), fmt.Sprintf("%d of %d batches above batch %d, the durable prefix when %s was hit (%s)",
			above, w.Batches, base, w.Above, sh)
	})
}

// waitLeader waits until the election's leader — the oldest candidate key
// under the leader prefix, as etcd's election decides — is w.Node's
// candidacy (its value the node's advertised client URL). The node may not
// have noticed yet: a node whose applier is held is elected before it can
// promote.
func (r *run) waitLeader(ctx context.Context, w *scenario.Wait) error {
	node := w.Node
	if n, ok := r.nodeOf(w.Node); ok {
		node = n
	}
	n, ok := r.env.Node(node)
	if !ok {
		return fmt.Errorf("wait for leader: no master %s", node)
	}
	url := n.URL
	cli, ks, err := r.etcd()
	if err != nil {
		return err
	}
	defer cli.Close()
	return poll(ctx, func() (bool, string) {
		resp, err := cli.Get(ctx, ks.LeaderCandidates(), clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortAscend),
			clientv3.WithLimit(1))
		if err != nil {
			return false, err.Error()
		}
		if len(resp.Kvs) == 0 {
			return false, "no candidate in the election"
		}
		lead := string(resp.Kvs[0].Value)
		return lead == url, fmt.Sprintf("the election's leader is %s, not %s (%s)", lead, node, url)
	})
}
