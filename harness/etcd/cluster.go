// Package etcd runs a real etcd cluster as local processes: N members built
// from the version pinned in go.mod, each on ports allocated for the run, with
// data and logs under the run's directory. Peer and client URLs a member
// advertises can differ from those it listens on, so a proxy (toxiproxy) can
// sit in every link.
package etcd

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/oplogha/oplogha/etcdclient"
	"github.com/oplogha/oplogha/harness/pki"
	"github.com/oplogha/oplogha/harness/ports"
	"github.com/oplogha/oplogha/harness/proc"
)

// Options shape a cluster.
type Options struct {
	Members    int    // default 3
	Binary     string // etcd binary
	Dir        string // run directory: data in Dir/<name>/data, logs in Dir/<name>.log
	QuotaBytes int64  // --quota-backend-bytes; 0 = etcd's default
	// Token distinguishes clusters of parallel runs (--initial-cluster-token).
	Token string
	// PeerURLFor and ClientURLFor, when set, give the URL a member advertises
	// for its listening port (e.g. a toxiproxy listener in front of it).
	PeerURLFor, ClientURLFor func(member int, listenPort int) (string, error)
	ExtraArgs                []string
	// Security, when set, runs every client and peer link over mutual TLS
	// and lets EnableAuth turn etcd authentication on.
	Security *Security
}

// Security is a cluster's TLS material and root credentials.
type Security struct {
	CAFile string
	// Member is every member's certificate: it serves clients and peers
	// and dials peers (server and client usage).
	Member pki.Pair
	// ClientTLS is the harness's own client configuration (CA + a client
	// certificate); RootPassword its password once EnableAuth has run.
	ClientTLS    *tls.Config
	RootPassword string
}

// Member is one etcd process.
type Member struct {
	Name                     string
	Host                     string // its address: 127.0.0.1, or its own on the docker runtime
	ClientPort, PeerPort     int
	ClientURL, PeerURL       string // what it listens on
	AdvClientURL, AdvPeerURL string // what it advertises
	DataDir, Log             string
	args                     []string
}

// Cluster is a running etcd cluster.
type Cluster struct {
	Members []*Member
	opts    Options
	group   *proc.Group
	Boot    time.Duration // from first start to healthy
	authOn  bool
}

// Scheme is the URL scheme of the cluster's links: https with Security.
func (o Options) Scheme() string {
	if o.Security != nil {
		return "https"
	}
	return "http"
}

// Start starts the members and waits until the cluster is healthy.
func Start(ctx context.Context, group *proc.Group, opts Options) (*Cluster, error) {
	if opts.Members <= 0 {
		opts.Members = 3
	}
	if opts.Binary == "" {
		return nil, errors.New("etcd: no binary")
	}
	if opts.Token == "" {
		opts.Token = fmt.Sprintf("oplogha-%d", time.Now().UnixNano())
	}
	ps, err := ports.Free(2 * opts.Members)
	if err != nil {
		return nil, err
	}
	c := &Cluster{opts: opts, group: group}
	var initial []string
	for i := 0; i < opts.Members; i++ {
		m := &Member{Name: fmt.Sprintf("etcd-%d", i), ClientPort: ps[2*i], PeerPort: ps[2*i+1]}
		host := group.Host(m.Name)
		m.Host = host
		m.ClientURL, m.PeerURL = opts.Scheme()+"://"+ports.On(host, m.ClientPort), opts.Scheme()+"://"+ports.On(host, m.PeerPort)
		m.AdvClientURL, m.AdvPeerURL = m.ClientURL, m.PeerURL
		if opts.ClientURLFor != nil {
			if m.AdvClientURL, err = opts.ClientURLFor(i, m.ClientPort); err != nil {
				return nil, err
			}
		}
		if opts.PeerURLFor != nil {
			if m.AdvPeerURL, err = opts.PeerURLFor(i, m.PeerPort); err != nil {
				return nil, err
			}
		}
		m.DataDir = filepath.Join(opts.Dir, m.Name, "data")
		m.Log = filepath.Join(opts.Dir, m.Name+".log")
		c.Members = append(c.Members, m)
		initial = append(initial, m.Name+"="+m.AdvPeerURL)
	}
	for _, m := range c.Members {
		if err := os.MkdirAll(filepath.Dir(m.DataDir), 0o755); err != nil {
			return nil, err
		}
		m.args = []string{
			"--name", m.Name,
			"--data-dir", m.DataDir,
			"--listen-client-urls", m.ClientURL,
			"--advertise-client-urls", m.AdvClientURL,
			"--listen-peer-urls", m.PeerURL,
			"--initial-advertise-peer-urls", m.AdvPeerURL,
			"--initial-cluster", strings.Join(initial, ","),
			"--initial-cluster-state", "new",
			"--initial-cluster-token", opts.Token,
			"--listen-metrics-urls", "",
			"--logger", "zap", "--log-outputs", "stderr", "--log-level", "info",
		}
		if sec := opts.Security; sec != nil {
			m.args = append(m.args,
				"--cert-file", sec.Member.Cert, "--key-file", sec.Member.Key,
				"--client-cert-auth", "--trusted-ca-file", sec.CAFile,
				"--peer-cert-file", sec.Member.Cert, "--peer-key-file", sec.Member.Key,
				"--peer-client-cert-auth", "--peer-trusted-ca-file", sec.CAFile)
		}
		if opts.QuotaBytes > 0 {
			m.args = append(m.args, "--quota-backend-bytes", fmt.Sprint(opts.QuotaBytes))
		}
		m.args = append(m.args, opts.ExtraArgs...)
	}
	start := time.Now()
	for _, m := range c.Members {
		if err := c.StartMember(m); err != nil {
			return c, err
		}
	}
	if err := c.WaitHealthy(ctx, 60*time.Second); err != nil {
		return c, err
	}
	c.Boot = time.Since(start)
	return c, nil
}

// StartMember (re)starts one member with its original arguments; its data dir
// is kept, so a restarted member rejoins.
func (c *Cluster) StartMember(m *Member) error {
	_, err := c.group.Start(proc.Spec{Name: m.Name, Path: c.opts.Binary, Args: m.args, Log: m.Log, Dir: c.opts.Dir})
	return err
}

// Process returns a member's current process.
func (c *Cluster) Process(m *Member) (*proc.Process, bool) { return c.group.Get(m.Name) }

// Endpoints are the client URLs the members advertise.
func (c *Cluster) Endpoints() []string {
	out := make([]string, len(c.Members))
	for i, m := range c.Members {
		out[i] = m.AdvClientURL
	}
	return out
}

// DirectEndpoints are the members' own client URLs, bypassing any proxy.
func (c *Cluster) DirectEndpoints() []string {
	out := make([]string, len(c.Members))
	for i, m := range c.Members {
		out[i] = m.ClientURL
	}
	return out
}

// Client opens a client to the given endpoints (nil: DirectEndpoints).
func (c *Cluster) Client(endpoints []string) (*clientv3.Client, error) {
	if endpoints == nil {
		endpoints = c.DirectEndpoints()
	}
	o := etcdclient.Options{Endpoints: endpoints}
	if sec := c.opts.Security; sec != nil {
		o.TLS = sec.ClientTLS.Clone()
		if c.authOn {
			o.Username, o.Password = RootUser, sec.RootPassword
		}
	}
	return clientv3.New(o.Config())
}

// RootUser is etcd's administrative user, the harness's identity once
// authentication is on.
const RootUser = "root"

// EnableAuth creates the root user (with Security.RootPassword) and turns
// etcd authentication on; from then on Client authenticates as root.
func (c *Cluster) EnableAuth(ctx context.Context) error {
	sec := c.opts.Security
	if sec == nil || sec.RootPassword == "" {
		return errors.New("etcd: authentication needs Security with a root password")
	}
	err := c.admin(ctx, func(ctx context.Context, cli *clientv3.Client) error {
		if _, err := cli.UserAdd(ctx, RootUser, sec.RootPassword); err != nil {
			return fmt.Errorf("etcd: add root user: %w", err)
		}
		if _, err := cli.RoleAdd(ctx, RootUser); err != nil {
			return fmt.Errorf("etcd: add root role: %w", err)
		}
		if _, err := cli.UserGrantRole(ctx, RootUser, RootUser); err != nil {
			return fmt.Errorf("etcd: grant root: %w", err)
		}
		if _, err := cli.AuthEnable(ctx); err != nil {
			return fmt.Errorf("etcd: enable authentication: %w", err)
		}
		return nil
	})
	if err == nil {
		c.authOn = true
	}
	return err
}

// GrantPrefix creates user (password) with a role of the same name that may
// read and write keys under prefix and nothing else.
func (c *Cluster) GrantPrefix(ctx context.Context, user, password, prefix string) error {
	return c.admin(ctx, func(ctx context.Context, cli *clientv3.Client) error {
		if _, err := cli.UserAdd(ctx, user, password); err != nil {
			return fmt.Errorf("etcd: add user %s: %w", user, err)
		}
		if _, err := cli.RoleAdd(ctx, user); err != nil {
			return fmt.Errorf("etcd: add role %s: %w", user, err)
		}
		if _, err := cli.RoleGrantPermission(ctx, user, prefix, clientv3.GetPrefixRangeEnd(prefix), clientv3.PermissionType(clientv3.PermReadWrite)); err != nil {
			return fmt.Errorf("etcd: grant %s on %s: %w", user, prefix, err)
		}
		if _, err := cli.UserGrantRole(ctx, user, user); err != nil {
			return fmt.Errorf("etcd: grant role %s: %w", user, err)
		}
		return nil
	})
}

// admin runs f with a client of the harness's identity, bounded in time.
func (c *Cluster) admin(ctx context.Context, f func(context.Context, *clientv3.Client) error) error {
	cli, err := c.Client(nil)
	if err != nil {
		return err
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return f(ctx, cli)
}

// MemberStatus is one member's view of the cluster.
type MemberStatus struct {
	Name     string `json:"name"`
	Endpoint string `json:"endpoint"`
	ID       uint64 `json:"id"`
	Leader   uint64 `json:"leader"`
	RaftTerm uint64 `json:"raft_term"`
	Revision int64  `json:"revision"`
	DBSize   int64  `json:"db_size"`
	InUse    int64  `json:"db_size_in_use"`
	Alarms   string `json:"alarms,omitempty"`
	Err      string `json:"error,omitempty"`
}

// Healthy reports a member that answered and knows a leader.
func (s MemberStatus) Healthy() bool { return s.Err == "" && s.Leader != 0 }

// Status asks every member directly for its status.
func (c *Cluster) Status(ctx context.Context) []MemberStatus {
	out := make([]MemberStatus, len(c.Members))
	cli, err := c.Client(nil)
	if err != nil {
		for i, m := range c.Members {
			out[i] = MemberStatus{Name: m.Name, Endpoint: m.ClientURL, Err: err.Error()}
		}
		return out
	}
	defer cli.Close()
	// Every member at once: a frozen member costs the call its timeout
	// once, not once per member.
	var wg sync.WaitGroup
	for i, m := range c.Members {
		out[i] = MemberStatus{Name: m.Name, Endpoint: m.ClientURL}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			st, err := cli.Status(sctx, m.ClientURL)
			cancel()
			if err != nil {
				out[i].Err = err.Error()
				return
			}
			out[i].ID, out[i].Leader, out[i].RaftTerm = st.Header.MemberId, st.Leader, st.RaftTerm
			out[i].Revision, out[i].DBSize, out[i].InUse = st.Header.Revision, st.DbSize, st.DbSizeInUse
			if len(st.Errors) > 0 {
				out[i].Alarms = strings.Join(st.Errors, "; ")
			}
		}()
	}
	wg.Wait()
	return out
}

// WaitHealthy waits until every running member reports the same leader and a
// linearizable read through the cluster succeeds.
func (c *Cluster) WaitHealthy(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last []MemberStatus
	for {
		last = c.Status(ctx)
		if agreed(c.running(last)) && c.readOK(ctx) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("etcd cluster not healthy after %v: %s", timeout, describe(last))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// running keeps the statuses of members whose process is up.
func (c *Cluster) running(st []MemberStatus) []MemberStatus {
	var out []MemberStatus
	for _, s := range st {
		if p, ok := c.group.Get(s.Name); ok && p.Running() {
			out = append(out, s)
		}
	}
	return out
}

func agreed(st []MemberStatus) bool {
	if len(st) == 0 {
		return false
	}
	for _, s := range st {
		if !s.Healthy() || s.Leader != st[0].Leader {
			return false
		}
	}
	return true
}

func (c *Cluster) readOK(ctx context.Context) bool {
	cli, err := c.Client(nil)
	if err != nil {
		return false
	}
	defer cli.Close()
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, err = cli.Get(rctx, "/oplogha-health")
	return err == nil
}

func describe(st []MemberStatus) string {
	var parts []string
	for _, s := range st {
		if s.Err != "" {
			parts = append(parts, fmt.Sprintf("%s: %s", s.Name, s.Err))
		} else {
			parts = append(parts, fmt.Sprintf("%s: leader %x term %d", s.Name, s.Leader, s.RaftTerm))
		}
	}
	return strings.Join(parts, "; ")
}
