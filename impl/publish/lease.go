package publish

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/oplogha/oplogha/impl/contract/keyspace"
)

// ErrLeaseHeld: another node owns the maintenance lease.
var ErrLeaseHeld = errors.New("maintenance lease held by another node")

// Lease is this node's ownership of the maintenance lease: /snapshot/maintenance
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

// AcquireLease grants an etcd lease of ttl seconds and claims the maintenance key
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
	resp, err := cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(ks.SnapshotMaintenance()), "=", 0)).
		Then(clientv3.OpPut(ks.SnapshotMaintenance(), token, clientv3.WithLease(g.ID))).
		Else(clientv3.OpGet(ks.SnapshotMaintenance())).Commit()
	if err != nil {
		_, _ = cli.Revoke(context.WithoutCancel(ctx), g.ID)
		return nil, fmt.Errorf("claim %s: %w", ks.SnapshotMaintenance(), err)
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

// OwnerToken is the token the maintenance key holds while this lease owns it.
func (l *Lease) OwnerToken() string { return l.Token }

// Lost is closed when the lease can no longer be kept alive (or was released).
func (l *Lease) Lost() <-chan struct{} { return l.lost }

// Confirm proves, just before a step that destroys something, that this
// lease still fences it: Lost has not fired, the maintenance key holds this
// token, and the lease has at least margin left to live (so the step ends
// while the proof still holds). Any doubt is ErrLeaseLost.
func (l *Lease) Confirm(ctx context.Context, margin time.Duration) error {
	select {
	case <-l.lost:
		return fmt.Errorf("%w: the lease's keepalive ended", ErrLeaseLost)
	default:
	}
	resp, err := l.cli.Get(ctx, l.ks.SnapshotMaintenance())
	if err != nil {
		return fmt.Errorf("%w: read %s: %v", ErrLeaseLost, l.ks.SnapshotMaintenance(), err)
	}
	if len(resp.Kvs) == 0 || string(resp.Kvs[0].Value) != l.Token {
		return fmt.Errorf("%w: %s no longer holds this node's token", ErrLeaseLost, l.ks.SnapshotMaintenance())
	}
	ttl, err := l.cli.TimeToLive(ctx, l.ID)
	if err != nil {
		return fmt.Errorf("%w: lease time to live: %v", ErrLeaseLost, err)
	}
	if time.Duration(ttl.TTL)*time.Second < margin {
		return fmt.Errorf("%w: %ds left, a step needs %v", ErrLeaseLost, ttl.TTL, margin)
	}
	return nil
}

// Release revokes the lease; the maintenance key goes with it.
func (l *Lease) Release(ctx context.Context) error {
	l.stop()
	_, err := l.cli.Revoke(ctx, l.ID)
	return err
}
