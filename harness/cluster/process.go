// Package cluster brings up a whole cluster for one run on the process
// runtime: a toxiproxy, an etcd cluster whose every inbound peer link is a
// proxy (behind a peer switch that cuts pairs of members apart), and
// masters whose every etcd connection and whose client API is a proxy —
// all local processes on 127.0.0.1 with ports allocated for the run, data
// and logs under the run directory, stopped by PID at the end.
package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/oplogha/oplogha/harness/bin"
	"github.com/oplogha/oplogha/harness/etcd"
	"github.com/oplogha/oplogha/harness/masters"
	"github.com/oplogha/oplogha/harness/peerswitch"
	"github.com/oplogha/oplogha/harness/ports"
	"github.com/oplogha/oplogha/harness/proc"
	"github.com/oplogha/oplogha/harness/s3server"
	"github.com/oplogha/oplogha/harness/toxi"
)

// Shape is what to bring up.
type Shape struct {
	EtcdMembers    int
	Masters        int
	ClusterID      string
	MasterConfig   map[string]any
	EtcdQuotaBytes int64
	Failpoints     map[string]string // set on every master at each start
	Seed           int64
	// S3 is the snapshot store: versitygw, gofakes3, local, or "" for none.
	// With one, masters get object_store settings (each through its own link).
	S3 string
	// Security: TLS on every etcd and S3 link, authentication on etcd and
	// a scoped snapshot writer on the S3 server.
	Security Security
	// Supervisor restarts masters that exit (zero value: none).
	Supervisor masters.Supervisor
	// OnMasterExit is told of every master exit the harness did not ask
	// for (masters.Options.OnExit).
	OnMasterExit func(node string, p *proc.Process)
	// BeforeMasters, when set, runs once etcd and the store are up and
	// before any master starts (a scenario's cluster.etcd_keys).
	BeforeMasters func(ctx context.Context, ec *etcd.Cluster) error
	// Driver is the kind of master (nil: the reference master).
	Driver masters.Driver
	// FirstPrimary, when set, is started alone first (see masters.Options.StartFirst).
	FirstPrimary string
}

// Security is what links and identities a cluster runs with.
type Security struct {
	TLS  bool `json:"tls"`
	Auth bool `json:"auth"`
}

// Bucket and prefix the harness gives masters.
const (
	SnapshotBucket = "oplogha-snapshots"
	SnapshotPrefix = "snapshots"
)

// Binaries are the programs a run uses.
type Binaries struct {
	Etcd, Toxiproxy, Master, Versity, FakeS3 BinaryInfo
	// PeerSwitch is cmd/peerswitch, built from the tree beside the master.
	PeerSwitch BinaryInfo
}

// BinaryInfo identifies a binary for the bundle.
type BinaryInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Path    string `json:"path"`
	SHA256  string `json:"sha256"`
}

// PrepareBinaries builds or finds every binary: the pinned tools from the
// cache, the master from the project tree into dir (with build tags when
// given: a sabotaged master exists only in a build that asks for it).
func PrepareBinaries(ctx context.Context, cache *bin.Cache, dir string, masterTags ...string) (Binaries, error) {
	var b Binaries
	for _, t := range []struct {
		name string
		dst  *BinaryInfo
	}{{"etcd", &b.Etcd}, {"toxiproxy", &b.Toxiproxy}, {"versitygw", &b.Versity}, {"gofakes3", &b.FakeS3}} {
		tb, err := cache.Path(ctx, t.name)
		if err != nil {
			return b, err
		}
		*t.dst = BinaryInfo{Name: t.name, Version: tb.Version, Path: tb.Path}
	}
	b.Master = BinaryInfo{Name: "master", Version: "tree", Path: filepath.Join(dir, "master")}
	if len(masterTags) > 0 {
		b.Master.Version = "tree+" + strings.Join(masterTags, "+")
	}
	var err error
	if b.Master.SHA256, err = cache.BuildProject(ctx, "./cmd/master", b.Master.Path, masterTags...); err != nil {
		return b, err
	}
	b.PeerSwitch = BinaryInfo{Name: "peerswitch", Version: "tree", Path: filepath.Join(dir, "peerswitch")}
	if b.PeerSwitch.SHA256, err = cache.BuildProject(ctx, "./cmd/peerswitch", b.PeerSwitch.Path); err != nil {
		return b, err
	}
	for _, x := range []*BinaryInfo{&b.Etcd, &b.Toxiproxy, &b.Versity, &b.FakeS3} {
		if x.SHA256, err = cache.SHA256(x.Path); err != nil {
			return b, err
		}
	}
	return b, nil
}

// Cluster is a running cluster.
type Cluster struct {
	Dir   string
	Group *proc.Group
	Toxi  *toxi.Server
	// Peers partitions etcd members pair by pair (nil with peer TLS).
	Peers    *peerswitch.Remote
	Etcd     *etcd.Cluster
	Masters  *masters.Set
	S3       *s3server.Server // nil without an S3 store
	StoreDir string           // the local store's directory (S3 "local")
	Boot     time.Duration
	// Sec holds the run's certificates and credentials (nil: plain links).
	Sec       *Secured
	s3Secrets []string
}

// Secrets are every secret of the run: the S3 server's secret keys and,
// with security on, the etcd passwords. None may appear in a log or in the
// bundle; the log audit looks for each.
func (c *Cluster) Secrets() []string {
	out := append([]string(nil), c.s3Secrets...)
	if c.Sec != nil {
		out = append(out, c.Sec.Secrets()...)
	}
	return out
}

// Up boots a cluster of shape into dir. On error the processes started so
// far stay in group; the caller's Close of the group stops them.
func Up(ctx context.Context, group *proc.Group, bins Binaries, shape Shape, dir string) (*Cluster, error) {
	start := time.Now()
	c := &Cluster{Dir: dir, Group: group}
	logs := filepath.Join(dir, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return nil, err
	}
	tx, err := toxi.Start(ctx, group, bins.Toxiproxy.Path, logs, shape.Seed)
	if err != nil {
		return nil, err
	}
	c.Toxi = tx
	scheme := "http"
	var etcdSec *etcd.Security
	if shape.Security.TLS || shape.Security.Auth {
		if c.Sec, err = secure(dir, shape, nodeHosts(group, shape)); err != nil {
			return c, err
		}
		etcdSec, scheme = c.Sec.etcd, "https"
	}
	if !shape.Security.TLS && bins.PeerSwitch.Path != "" {
		// Pairs of members partitioned one direction at a time: the switch
		// reads etcd's peer headers, so only over plain HTTP.
		if c.Peers, err = peerswitch.Start(ctx, group, bins.PeerSwitch.Path, logs); err != nil {
			return c, err
		}
	}
	ec, err := etcd.Start(ctx, group, etcd.Options{Security: etcdSec,
		Members: shape.EtcdMembers, Binary: bins.Etcd.Path, Dir: filepath.Join(dir, "etcd"), QuotaBytes: shape.EtcdQuotaBytes,
		Token: fmt.Sprintf("%s-%d-%d", shape.ClusterID, shape.Seed, time.Now().UnixNano()), // unique per run: clusters of parallel runs never join each other
		PeerURLFor: func(i, port int) (string, error) {
			l, err := tx.Add(fmt.Sprintf("etcd-%d.peer", i), ports.On(group.Host(fmt.Sprintf("etcd-%d", i)), port))
			if err != nil {
				return "", err
			}
			if c.Peers == nil {
				return scheme + "://" + l.Listen, nil
			}
			listen, err := c.Peers.Add(ctx, fmt.Sprintf("etcd-%d", i), l.Listen)
			if err != nil {
				return "", err
			}
			return scheme + "://" + listen, nil
		},
	})
	if err != nil {
		return c, err
	}
	c.Etcd = ec
	if c.Sec != nil {
		if err := c.Sec.authorize(ctx, ec, shape); err != nil {
			return c, err
		}
	}
	storeCfg, env, err := c.startStore(ctx, group, bins, shape)
	if err != nil {
		return c, err
	}
	if shape.BeforeMasters != nil {
		if err := shape.BeforeMasters(ctx, ec); err != nil {
			return c, fmt.Errorf("before the masters start: %w", err)
		}
	}
	withWorkDir := func(i int) (map[string]any, error) {
		cfg := map[string]any{"snapshot_work_dir": filepath.Join(dir, "work", fmt.Sprintf("master-%d", i))}
		if err := os.MkdirAll(cfg["snapshot_work_dir"].(string), 0o755); err != nil {
			return nil, err
		}
		if c.Sec != nil {
			for k, v := range c.Sec.masterConfig() {
				cfg[k] = v
			}
		}
		if storeCfg != nil {
			extra, err := storeCfg(i)
			if err != nil {
				return nil, err
			}
			for k, v := range extra {
				cfg[k] = v
			}
		}
		return cfg, nil
	}
	set, err := masters.Start(ctx, group, masters.Options{Env: env, ConfigFor: withWorkDir,
		Binary: bins.Master.Path, Dir: filepath.Join(dir, "masters"), ClusterID: shape.ClusterID, Count: shape.Masters,
		Config: shape.MasterConfig, Failpoints: shape.Failpoints, Driver: shape.Driver, Supervisor: shape.Supervisor, StartFirst: shape.FirstPrimary,
		OnExit: shape.OnMasterExit,
		AdvertiseFor: func(i int, listen string) (string, error) {
			l, err := tx.Add(fmt.Sprintf("master-%d.api", i), listen)
			if err != nil {
				return "", err
			}
			return "http://" + l.Listen, nil
		},
		EtcdFor: func(i int) ([]string, error) {
			var eps []string
			for j, m := range ec.Members {
				l, err := tx.Add(fmt.Sprintf("master-%d.etcd-%d", i, j), ports.On(m.Host, m.ClientPort))
				if err != nil {
					return nil, err
				}
				eps = append(eps, scheme+"://"+l.Listen)
			}
			return eps, nil
		},
	})
	if err != nil {
		return c, err
	}
	c.Masters = set
	if _, err := set.WaitPrimary(ctx, 60*time.Second); err != nil {
		return c, err
	}
	if err := set.WaitSettled(ctx, 60*time.Second); err != nil {
		return c, err
	}
	c.Boot = time.Since(start)
	return c, nil
}

// startStore starts the snapshot store of the shape and returns each
// master's store settings and the credentials' environment.
func (c *Cluster) startStore(ctx context.Context, group *proc.Group, bins Binaries, shape Shape) (func(int) (map[string]any, error), []string, error) {
	switch shape.S3 {
	case "":
		return nil, nil, nil
	case "local":
		dir := filepath.Join(c.Dir, "store")
		c.StoreDir = dir
		return func(int) (map[string]any, error) {
			return map[string]any{"object_store": "local", "local_store_dir": dir}, nil
		}, nil, nil
	case s3server.Versity, s3server.FakeS3:
	default:
		return nil, nil, fmt.Errorf("s3 %q: want versitygw, gofakes3, local or nothing", shape.S3)
	}
	binary := bins.Versity.Path
	if shape.S3 == s3server.FakeS3 {
		binary = bins.FakeS3.Path
	}
	opts := s3server.Options{Kind: shape.S3, Binary: binary, Dir: filepath.Join(c.Dir, "s3")}
	scheme := "http"
	if c.Sec != nil && shape.S3 == s3server.Versity {
		opts.TLS, opts.CAFile, opts.IAM, scheme = &c.Sec.s3Cert, c.Sec.CA.CAFile, shape.Security.Auth, "https"
	}
	srv, err := s3server.StartWith(ctx, group, opts)
	if err != nil {
		return nil, nil, err
	}
	c.S3 = srv
	if err := srv.EnsureBucket(ctx, SnapshotBucket); err != nil {
		return nil, nil, err
	}
	access, secretKey := srv.AccessKey, srv.SecretKey
	if opts.IAM {
		w, err := srv.CreateWriter(ctx, SnapshotBucket, SnapshotPrefix)
		if err != nil {
			return nil, nil, err
		}
		access, secretKey = w.AccessKey, w.SecretKey
		c.s3Secrets = append(c.s3Secrets, w.SecretKey)
	}
	c.s3Secrets = append(c.s3Secrets, srv.SecretKey)
	upstream := strings.TrimPrefix(strings.TrimPrefix(srv.Endpoint, "http://"), "https://")
	env := []string{"OPLOGHA_S3_ACCESS_KEY_ID=" + access, "OPLOGHA_S3_SECRET_ACCESS_KEY=" + secretKey}
	return func(i int) (map[string]any, error) {
		l, err := c.Toxi.Add(fmt.Sprintf("master-%d.s3", i), upstream)
		if err != nil {
			return nil, err
		}
		cfg := map[string]any{"object_store": "s3", "s3_endpoint": scheme + "://" + l.Listen, "s3_bucket": SnapshotBucket, "s3_prefix": SnapshotPrefix}
		if srv.CAFile != "" {
			cfg["s3_ca_file"] = srv.CAFile
		}
		return cfg, nil
	}, env, nil
}
