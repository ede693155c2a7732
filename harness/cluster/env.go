package cluster

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"time"

	"github.com/oplogha/oplogha/impl/contract/keyspace"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/oplogha/oplogha/faults"
	"github.com/oplogha/oplogha/harness/docker"
	"github.com/oplogha/oplogha/harness/masters"
	"github.com/oplogha/oplogha/harness/objects"
	"github.com/oplogha/oplogha/harness/proc"
	"github.com/oplogha/oplogha/harness/s3server"
)

// CallTimeout bounds each call the harness makes to etcd through Env: a
// fault or heal against an etcd without quorum fails after it instead of
// waiting for the quorum its own heal would bring back.
const CallTimeout = 5 * time.Second

// bounded is ctx with CallTimeout.
func bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, CallTimeout)
}

// Env adapts a Cluster to faults.Env with the run's seeded choices.
type Env struct {
	C   *Cluster
	rng *rand.Rand
	ks  keyspace.Keyspace
	// BeforeCompact, when set, is called with the revision CompactDefrag is
	// about to compact at, so the run can keep the history etcd will forget.
	BeforeCompact func(ctx context.Context, rev int64) error
}

// NewEnv returns the fault environment of the cluster whose keys ks names.
func NewEnv(c *Cluster, ks keyspace.Keyspace, seed int64) *Env {
	return &Env{C: c, ks: ks, rng: rand.New(rand.NewPCG(uint64(seed), 0x0fa1175))}
}

// Keyspace names the cluster's etcd keys.
func (e *Env) Keyspace() keyspace.Keyspace { return e.ks }

var _ faults.Env = (*Env)(nil)

// Rand is the seeded source.
func (e *Env) Rand() *rand.Rand { return e.rng }

// Masters names the masters.
func (e *Env) Masters() []string {
	var out []string
	for _, n := range e.C.Masters.Nodes {
		out = append(out, n.Name)
	}
	return out
}

// EtcdMembers names the etcd members.
func (e *Env) EtcdMembers() []string {
	var out []string
	for _, m := range e.C.Etcd.Members {
		out = append(out, m.Name)
	}
	return out
}

// Node returns a master by name.
func (e *Env) Node(name string) (*masters.Node, bool) {
	for _, n := range e.C.Masters.Nodes {
		if n.Name == name {
			return n, true
		}
	}
	return nil, false
}

// Primary names the serving primary (waiting briefly for one).
func (e *Env) Primary(ctx context.Context) (string, error) {
	n, err := e.C.Masters.WaitPrimary(ctx, 10*time.Second)
	if err != nil {
		return "", err
	}
	return n.Name, nil
}

// Standbys names the running masters that are not serving.
func (e *Env) Standbys(ctx context.Context) ([]string, error) {
	var out []string
	for i, h := range e.C.Masters.Health(ctx) {
		if h.Role == "standby" && !h.Serving {
			out = append(out, e.C.Masters.Nodes[i].Name)
		}
	}
	return out, nil
}

// EtcdLeader names the leading etcd member, waiting up to leaderWait for
// one: right after a member restarts, an election may be under way.
func (e *Env) EtcdLeader(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, leaderWait)
	defer cancel()
	for {
		for _, s := range e.C.Etcd.Status(ctx) {
			if s.Err == "" && s.ID == s.Leader && s.ID != 0 {
				return s.Name, nil
			}
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("%w: no etcd leader within %v", faults.ErrUnavailable, leaderWait)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// leaderWait bounds EtcdLeader's wait for an etcd leader.
const leaderWait = 5 * time.Second

func (e *Env) process(name string) (*proc.Process, error) {
	p, ok := e.C.Group.Get(name)
	if !ok {
		return nil, fmt.Errorf("no process %s", name)
	}
	return p, nil
}

// Kill SIGKILLs a node by PID.
func (e *Env) Kill(name string) error {
	p, err := e.process(name)
	if err != nil {
		return err
	}
	return p.Kill()
}

// Pause SIGSTOPs a node.
func (e *Env) Pause(name string) error {
	p, err := e.process(name)
	if err != nil {
		return err
	}
	return p.Pause()
}

// Resume SIGCONTs a node.
func (e *Env) Resume(name string) error {
	p, err := e.process(name)
	if err != nil {
		return err
	}
	return p.Resume()
}

// Stop stops a node gracefully; a supervised master stays down (held)
// until it is started again, as after `systemctl stop`.
func (e *Env) Stop(name string, grace time.Duration) error {
	p, err := e.process(name)
	if err != nil {
		return err
	}
	if _, ok := e.Node(name); ok {
		e.C.Masters.Hold(name)
	}
	return p.Stop(grace)
}

// Running reports whether a node's process is up.
func (e *Env) Running(name string) bool {
	p, err := e.process(name)
	return err == nil && p.Running()
}

// Paused reports whether a node's process is up but frozen.
func (e *Env) Paused(name string) bool {
	p, err := e.process(name)
	return err == nil && p.Paused()
}

// Start starts a stopped node again (same config, same data).
func (e *Env) Start(ctx context.Context, name string) error {
	if p, err := e.process(name); err == nil && p.Running() {
		if _, master := e.Node(name); master && e.C.Masters.Supervised() {
			return nil // its supervisor brought it back already
		}
		return fmt.Errorf("%s is still running (pid %d)", name, p.PID)
	}
	if n, ok := e.Node(name); ok {
		return e.C.Masters.StartNode(n)
	}
	for _, m := range e.C.Etcd.Members {
		if m.Name == name {
			return e.C.Etcd.StartMember(m)
		}
	}
	return fmt.Errorf("no node %s", name)
}

// Links names every link.
func (e *Env) Links() []string {
	var out []string
	for _, l := range e.C.Toxi.Links() {
		out = append(out, l.Name)
	}
	return out
}

// Link returns one link.
func (e *Env) Link(name string) (faults.Link, error) {
	l, ok := e.C.Toxi.Link(name)
	if !ok {
		return nil, fmt.Errorf("no link %s", name)
	}
	return l, nil
}

// Failpoint sets (term) or clears ("") a failpoint on a master, through
// its kind's driver.
func (e *Env) Failpoint(ctx context.Context, master, name, term string) error {
	n, ok := e.Node(master)
	if !ok {
		return fmt.Errorf("no master %s", master)
	}
	if err := e.C.Masters.Failpoint(ctx, n, name, term); err != nil {
		if p, perr := e.process(master); perr == nil && !p.Running() {
			return nil // the failpoint already crashed it: nothing left to clear
		}
		return err
	}
	return nil
}

// FailpointHits is how many times a failpoint's term has fired on a master
// since it was set: 0 when it is not set, or when the master is not
// running (a restart clears every failpoint).
func (e *Env) FailpointHits(ctx context.Context, master, name string) (int, error) {
	n, ok := e.Node(master)
	if !ok {
		return 0, fmt.Errorf("no master %s", master)
	}
	if p, err := e.process(master); err == nil && !p.Running() {
		return 0, nil
	}
	return e.C.Masters.FailpointHits(ctx, n, name)
}

// PrimaryURL is traffic.Target: the primary's client URL, as clients reach it.
func (e *Env) PrimaryURL(ctx context.Context) (string, string, error) {
	n, err := e.C.Masters.WaitPrimary(ctx, 2*time.Second)
	if err != nil {
		return "", "", err
	}
	return n.Name, n.URL, nil
}

// NodeForURL names the master whose client URL is url.
func (e *Env) NodeForURL(url string) string {
	for _, n := range e.C.Masters.Nodes {
		if n.URL == url || n.DirectURL == url {
			return n.Name
		}
	}
	return ""
}

// EtcdGet reads a key directly from the members (nil when absent).
func (e *Env) EtcdGet(ctx context.Context, key string) ([]byte, error) {
	cli, err := e.C.Etcd.Client(nil)
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	ctx, cancel := bounded(ctx)
	defer cancel()
	resp, err := cli.Get(ctx, key)
	if err != nil || len(resp.Kvs) == 0 {
		return nil, err
	}
	return resp.Kvs[0].Value, nil
}

// EtcdRevision is etcd's current revision (a linearizable read).
func (e *Env) EtcdRevision(ctx context.Context) (int64, error) {
	cli, err := e.C.Etcd.Client(nil)
	if err != nil {
		return 0, err
	}
	defer cli.Close()
	ctx, cancel := bounded(ctx)
	defer cancel()
	resp, err := cli.Get(ctx, e.ks.DurablePrefix())
	if err != nil {
		return 0, err
	}
	return resp.Header.Revision, nil
}

// EtcdPut writes a key directly and returns the revision.
func (e *Env) EtcdPut(ctx context.Context, key string, value []byte) (int64, error) {
	cli, err := e.C.Etcd.Client(nil)
	if err != nil {
		return 0, err
	}
	defer cli.Close()
	ctx, cancel := bounded(ctx)
	defer cancel()
	resp, err := cli.Put(ctx, key, string(value))
	if err != nil {
		return 0, err
	}
	return resp.Header.Revision, nil
}

// CutPeers drops every raft message from etcd member from to member to
// (faults.PeerPartitioner), where the cluster has a peer switch.
func (e *Env) CutPeers(ctx context.Context, from, to string) error {
	if e.C.Peers == nil {
		return fmt.Errorf("%w: no peer switch in this cluster (peer TLS)", faults.ErrUnavailable)
	}
	return e.C.Peers.Cut(ctx, from, to)
}

// RestorePeers lets raft messages from → to pass again.
func (e *Env) RestorePeers(ctx context.Context, from, to string) error {
	if e.C.Peers == nil {
		return fmt.Errorf("%w: no peer switch in this cluster (peer TLS)", faults.ErrUnavailable)
	}
	return e.C.Peers.Restore(ctx, from, to)
}

// EtcdSwap puts value at key if the key holds old (nil: is absent).
func (e *Env) EtcdSwap(ctx context.Context, key string, old, value []byte) (int64, bool, error) {
	cli, err := e.C.Etcd.Client(nil)
	if err != nil {
		return 0, false, err
	}
	defer cli.Close()
	ctx, cancel := bounded(ctx)
	defer cancel()
	cmp := clientv3.Compare(clientv3.CreateRevision(key), "=", 0)
	if old != nil {
		cmp = clientv3.Compare(clientv3.Value(key), "=", string(old))
	}
	resp, err := cli.Txn(ctx).If(cmp).Then(clientv3.OpPut(key, string(value))).Commit()
	if err != nil {
		return 0, false, err
	}
	return resp.Header.Revision, resp.Succeeded, nil
}

// StorePut writes an object through the store's API with the harness's
// own client.
func (e *Env) StorePut(ctx context.Context, key string, data []byte) error {
	var st objects.Reader
	switch {
	case e.C.S3 != nil:
		tr, err := e.C.S3.Transport()
		if err != nil {
			return err
		}
		if st, err = objects.S3(e.C.S3.Endpoint, SnapshotBucket, e.C.S3.AccessKey, e.C.S3.SecretKey, tr); err != nil {
			return err
		}
	case e.C.StoreDir != "":
		st = objects.Dir(e.C.StoreDir)
	default:
		return fmt.Errorf("%w: this cluster has no snapshot store", faults.ErrUnavailable)
	}
	p, ok := st.(objects.Putter)
	if !ok {
		return fmt.Errorf("%w: the store %s takes no writes from the harness", faults.ErrUnavailable, st.Name())
	}
	return p.PutObject(ctx, key, data)
}

// StoreFile maps an object key to the file the store keeps it in.
func (e *Env) StoreFile(key string) (string, error) {
	switch {
	case e.C.S3 != nil && e.C.S3.Kind == s3server.Versity:
		return filepath.Join(e.C.S3.Dir, "root", SnapshotBucket, filepath.FromSlash(key)), nil
	case e.C.StoreDir != "":
		return filepath.Join(e.C.StoreDir, filepath.FromSlash(key)), nil
	}
	return "", fmt.Errorf("%w: this store keeps no files the harness can reach", faults.ErrUnavailable)
}

// WorkDir is a master's snapshot work directory (set by the harness).
func (e *Env) WorkDir(master string) (string, error) {
	if _, ok := e.Node(master); !ok {
		return "", fmt.Errorf("no master %s", master)
	}
	return filepath.Join(e.C.Dir, "work", master), nil
}

// RevokeWriterLease waits for a maintenance-lease holder (node, when not
// empty: that master and no other) and revokes its lease; it says whose it
// was. A holder that lets its lease go between the read and the revocation
// ("lease not found") has not been fenced by this fault: it looks again for
// a holder until wait runs out.
func (e *Env) RevokeWriterLease(ctx context.Context, node string, wait time.Duration) (string, error) {
	cli, err := e.C.Etcd.Client(nil)
	if err != nil {
		return "", err
	}
	defer cli.Close()
	deadline := time.Now().Add(wait)
	seen := ""
	for {
		gctx, cancel := bounded(ctx)
		resp, err := cli.Get(gctx, e.ks.SnapshotMaintenance())
		cancel()
		if err != nil {
			return "", err
		}
		if len(resp.Kvs) > 0 && resp.Kvs[0].Lease != 0 {
			holder := string(resp.Kvs[0].Value)
			seen = holder
			if node == "" || strings.HasPrefix(holder, node+"/") {
				rctx, cancel := bounded(ctx)
				_, err := cli.Revoke(rctx, clientv3.LeaseID(resp.Kvs[0].Lease))
				cancel()
				if err == nil {
					return holder, nil
				}
				if !errors.Is(err, rpctypes.ErrLeaseNotFound) {
					return "", fmt.Errorf("revoke maintenance lease of %s: %w", holder, err)
				}
			}
		}
		if time.Now().After(deadline) {
			who := "no maintenance lease holder"
			if node != "" {
				who = fmt.Sprintf("%s held no maintenance lease (last holder seen: %q)", node, seen)
			}
			return "", fmt.Errorf("%w: %s within %v", faults.ErrUnavailable, who, wait)
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

var _ faults.Partitioner = (*Env)(nil)

// partitioner is the docker engine behind the cluster, if it runs on one.
func (e *Env) partitioner() (*docker.Engine, error) {
	eng, ok := e.C.Group.Launcher.(*docker.Engine)
	if !ok {
		return nil, fmt.Errorf("%w: a network disconnect needs the docker runtime (run with --runtime docker)", faults.ErrUnavailable)
	}
	return eng, nil
}

// Disconnect cuts a node's container off the run's network.
func (e *Env) Disconnect(ctx context.Context, name string) error {
	eng, err := e.partitioner()
	if err != nil {
		return err
	}
	return eng.Disconnect(ctx, name)
}

// Reconnect puts a node's container back on the network.
func (e *Env) Reconnect(ctx context.Context, name string) error {
	eng, err := e.partitioner()
	if err != nil {
		return err
	}
	return eng.Reconnect(ctx, name)
}
