package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/oplogha/oplogha/harness/bin"
	"github.com/oplogha/oplogha/harness/etcd"
	"github.com/oplogha/oplogha/harness/proc"
)

// cmdDemo starts a real etcd cluster from the pinned binary, shows its health,
// kills the leader by PID, shows the re-election, and stops every process.
// It stands in for `chaos run scenarios/pr/smoke.yaml` until the harness lands.
func cmdDemo(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	members := fs.Int("members", 3, "etcd members")
	out := fs.String("out", "artifacts", "where the run directory goes")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cache, err := bin.NewCache(".", os.Stderr)
	if err != nil {
		return err
	}
	etcdBin, err := cache.Path(ctx, "etcd")
	if err != nil {
		return err
	}
	dir := filepath.Join(*out, "demo-"+time.Now().UTC().Format("20060102T150405Z"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	group := proc.NewGroup()
	defer func() {
		if err := group.Close(5 * time.Second); err != nil {
			fmt.Fprintln(os.Stderr, "cleanup:", err)
		}
		fmt.Printf("stopped every process; logs in %s\n", dir)
	}()
	fmt.Printf("starting a %d-member etcd %s cluster in %s …\n", *members, etcdBin.Version, dir)
	c, err := etcd.Start(ctx, group, etcd.Options{Members: *members, Binary: etcdBin.Path, Dir: dir})
	if err != nil {
		return err
	}
	fmt.Printf("healthy in %v\n", c.Boot.Round(time.Millisecond))
	st := c.Status(ctx)
	printStatus(c, st)

	var leader *etcd.Member
	for i, s := range st {
		if s.ID == s.Leader {
			leader = c.Members[i]
		}
	}
	if leader == nil || *members < 3 {
		return nil
	}
	p, _ := c.Process(leader)
	fmt.Printf("\nSIGKILL leader %s (pid %d) …\n", leader.Name, p.PID)
	if err := p.Kill(); err != nil {
		return err
	}
	start := time.Now()
	if err := c.WaitHealthy(ctx, 30*time.Second); err != nil {
		return err
	}
	fmt.Printf("new leader elected in %v\n", time.Since(start).Round(time.Millisecond))
	printStatus(c, c.Status(ctx))
	return nil
}

func printStatus(c *etcd.Cluster, st []etcd.MemberStatus) {
	fmt.Printf("%-8s %-7s %-24s %-17s %-5s %-9s %s\n", "member", "pid", "endpoint", "leader", "term", "revision", "state")
	for i, s := range st {
		pid := "-"
		if p, ok := c.Process(c.Members[i]); ok && p.Running() {
			pid = fmt.Sprint(p.PID)
		}
		state := "follower"
		switch {
		case s.Err != "":
			state = "down"
		case s.ID == s.Leader:
			state = "LEADER"
		}
		fmt.Printf("%-8s %-7s %-24s %-17x %-5d %-9d %s\n", s.Name, pid, s.Endpoint, s.Leader, s.RaftTerm, s.Revision, state)
	}
}
