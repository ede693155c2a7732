package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/oplogha/oplogha/harness/bin"
	"github.com/oplogha/oplogha/harness/cluster"
	"github.com/oplogha/oplogha/harness/proc"
	"github.com/oplogha/oplogha/harness/s3server"
	"github.com/oplogha/oplogha/impl/connect"
)

// upOptions is the shape of a dev cluster.
type upOptions struct {
	etcd, masters int
	s3            string // versitygw, gofakes3, or "none"
}

// devClusterID is the namespace a dev cluster's masters use.
const devClusterID = "dev"

// cmdUp starts a dev cluster (process runtime) and keeps it until Ctrl-C.
func cmdUp(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("up", flag.ContinueOnError)
	var o upOptions
	fs.IntVar(&o.etcd, "etcd", 3, "etcd members")
	fs.IntVar(&o.masters, "masters", 3, "masters")
	fs.StringVar(&o.s3, "s3", s3server.Versity, "snapshot store: versitygw, gofakes3, or none (no standby snapshots)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("up takes no arguments, got %q", fs.Args())
	}
	switch o.s3 {
	case s3server.Versity, s3server.FakeS3, "none":
	default:
		return fmt.Errorf("--s3 %q: want versitygw, gofakes3 or none", o.s3)
	}
	cache, err := bin.NewCache(".", os.Stderr)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "oplogha-up-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bins, err := cluster.PrepareBinaries(ctx, cache, dir)
	if err != nil {
		return err
	}
	group := proc.NewGroup()
	defer func() {
		if err := group.Close(10 * time.Second); err != nil {
			fmt.Fprintln(os.Stderr, "cleanup:", err)
		}
		fmt.Println("stopped every process")
	}()
	if _, err := upDevCluster(ctx, group, bins, o, dir, os.Stdout); err != nil {
		return err
	}
	fmt.Println("Ctrl-C to stop")
	<-ctx.Done()
	return nil
}

// upDevCluster boots the cluster into dir and prints where each part
// listens and how to point oplogctl at it. With a snapshot store the
// masters publish standby snapshots, and dir/oplogctl.env (mode 0600) holds
// the store's credentials in the variables oplogctl reads, so they are
// never printed.
func upDevCluster(ctx context.Context, group *proc.Group, bins cluster.Binaries, o upOptions, dir string, out io.Writer) (*cluster.Cluster, error) {
	cfg := map[string]any{"oplog_poll_interval_ms": 20, "leader_lease_seconds": 2}
	shape := cluster.Shape{EtcdMembers: o.etcd, Masters: o.masters, ClusterID: devClusterID, Seed: time.Now().UnixNano(), MasterConfig: cfg}
	if o.s3 != "none" {
		shape.S3 = o.s3
		cfg["enable_standby_snapshot"] = true
		cfg["snapshot_interval_seconds"] = 5
	}
	c, err := cluster.Up(ctx, group, bins, shape, dir)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "cluster up in %v (logs under %s)\n", c.Boot.Round(time.Millisecond), dir)
	var endpoints []string
	for _, m := range c.Etcd.Members {
		fmt.Fprintf(out, "  %-10s client %s (direct)\n", m.Name, m.ClientURL)
		endpoints = append(endpoints, m.ClientURL)
	}
	for _, n := range c.Masters.Nodes {
		fmt.Fprintf(out, "  %-10s api %s  (direct %s)  failpoints http://%s\n", n.Name, n.URL, n.DirectURL, n.FailpointAddr)
	}
	fmt.Fprintf(out, "  toxiproxy  http://%s (%d links)\n", c.Toxi.API, len(c.Toxi.Links()))
	verify := fmt.Sprintf("oplogctl verify --endpoints %s --cluster-id %s", strings.Join(endpoints, ","), devClusterID)
	if c.S3 != nil {
		env := filepath.Join(dir, "oplogctl.env")
		body := fmt.Sprintf("export %s=%s\nexport %s=%s\n", connect.EnvS3AccessKey, c.S3.AccessKey, connect.EnvS3SecretKey, c.S3.SecretKey)
		if err := os.WriteFile(env, []byte(body), 0o600); err != nil {
			return nil, fmt.Errorf("write %s: %w", env, err)
		}
		fmt.Fprintf(out, "  %-10s %s bucket %s prefix %s (credentials in %s)\n", c.S3.Kind, c.S3.Endpoint, cluster.SnapshotBucket, cluster.SnapshotPrefix, env)
		verify = fmt.Sprintf(". %s && %s --s3-endpoint %s --s3-bucket %s --s3-prefix %s", env, verify, c.S3.Endpoint, cluster.SnapshotBucket, cluster.SnapshotPrefix)
	}
	fmt.Fprintf(out, "check the namespace:\n  %s\n", verify)
	return c, nil
}
