package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/oplogha/oplogha/harness/bin"
	"github.com/oplogha/oplogha/harness/cluster"
	"github.com/oplogha/oplogha/harness/proc"
)

// cmdUp starts a dev cluster (process runtime) and keeps it until Ctrl-C.
func cmdUp(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("up", flag.ContinueOnError)
	etcdN := fs.Int("etcd", 3, "etcd members")
	mastersN := fs.Int("masters", 3, "masters")
	if err := fs.Parse(args); err != nil {
		return err
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
	c, err := cluster.Up(ctx, group, bins, cluster.Shape{EtcdMembers: *etcdN, Masters: *mastersN, ClusterID: "dev", Seed: time.Now().UnixNano(),
		MasterConfig: map[string]any{"oplog_poll_interval_ms": 20, "leader_lease_seconds": 2}}, dir)
	if err != nil {
		return err
	}
	fmt.Printf("cluster up in %v (logs under %s)\n", c.Boot.Round(time.Millisecond), dir)
	for _, m := range c.Etcd.Members {
		fmt.Printf("  %-10s client %s (direct)\n", m.Name, m.ClientURL)
	}
	for _, n := range c.Masters.Nodes {
		fmt.Printf("  %-10s api %s  (direct %s)  failpoints http://%s\n", n.Name, n.URL, n.DirectURL, n.FailpointAddr)
	}
	fmt.Printf("  toxiproxy  http://%s (%d links)\n", c.Toxi.API, len(c.Toxi.Links()))
	fmt.Println("Ctrl-C to stop")
	<-ctx.Done()
	return nil
}
