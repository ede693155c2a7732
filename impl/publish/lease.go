package publish

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/oplogha/oplogha/impl/keyspace"
)

// ErrLeaseHeld: another node owns the maintenance lease.
var ErrLeaseHeld = errors.New("maintenance lease held by another node")

// Lease is this node's ownership of the maintenance lease: /snapshot/writer
// holds a unique, never reused owner token attached to an etcd lease.
// Ownership reduces duplicate work; only the publication transaction's
// compare on the token makes a publication valid.
type Lease struct {
	ID    clientv3.LeaseID
	Token string
	cli   *clientv3.Client
	ks    keyspace.Keyspace
	lost  chan struct{}
	stop  context.CancelFunc
}

// AcquireLease grants an etcd lease of ttl seconds and claims the writer key
// with a fresh token if no one holds it. The lease is kept alive until
// Release; Lost is closed when it is not.
func AcquireLease(ctx context.Context, cli *clientv3.Client, ks keyspace.Keyspace, node string, ttl int64) (*Lease, error) {
	g, err := cli.Grant(ctx, ttl)
	if err != nil {
		return nil, fmt.Errorf("grant maintenance lease: %w", err)
	}
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	token := fmt.Sprintf("%s/%x/%s", node, int64(g.ID), hex.EncodeToString(b[:]))
	resp, err := cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(ks.SnapshotWriter()), "=", 0)).
		Then(clientv3.OpPut(ks.SnapshotWriter(), token, clientv3.WithLease(g.ID))).
		Else(clientv3.OpGet(ks.SnapshotWriter())).Commit()
	if err != nil {
		_, _ = cli.Revoke(context.WithoutCancel(ctx), g.ID)
		return nil, fmt.Errorf("claim %s: %w", ks.SnapshotWriter(), err)
	}
	if !resp.Succeeded {
		_, _ = cli.Revoke(context.WithoutCancel(ctx), g.ID)
		holder := ""
		if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
			holder = string(kvs[0].Value)
		}
		return nil, fmt.Errorf("%w: %s", ErrLeaseHeld, holder)
	}
	kctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	ka, err := cli.KeepAlive(kctx, g.ID)
	if err != nil {
		cancel()
		_, _ = cli.Revoke(context.WithoutCancel(ctx), g.ID)
		return nil, fmt.Errorf("keep maintenance lease alive: %w", err)
	}
	l := &Lease{ID: g.ID, Token: token, cli: cli, ks: ks, lost: make(chan struct{}), stop: cancel}
	go func() {
		for range ka {
		}
		close(l.lost)
	}()
	return l, nil
}

// Lost is closed when the lease can no longer be kept alive (or was released).
func (l *Lease) Lost() <-chan struct{} { return l.lost }

// Release revokes the lease; the writer key goes with it.
func (l *Lease) Release(ctx context.Context) error {
	l.stop()
	_, err := l.cli.Revoke(ctx, l.ID)
	return err
}
