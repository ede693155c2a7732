package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oplogha/oplogha/harness/benchreport"
	"github.com/oplogha/oplogha/harness/bin"
	"github.com/oplogha/oplogha/harness/client"
	"github.com/oplogha/oplogha/harness/cluster"
	"github.com/oplogha/oplogha/harness/history"
	"github.com/oplogha/oplogha/harness/proc"
	"github.com/oplogha/oplogha/impl/contract"
)

// failoverLease is the masters' leader lease TTL in these benchmarks.
const failoverLease = 2 * time.Second

// failoverRounds is how many times each fault is measured.
var failoverRounds = 20

// benchCluster boots the process runtime's cluster (toxiproxy on every link,
// etcd members, masters, no snapshot store) with one memory segment mounted.
type benchCluster struct {
	c   *cluster.Cluster
	env *cluster.Env
	api *client.Client
}

func bootBenchCluster(ctx context.Context, b *testing.B, id string, etcd, masters int) *benchCluster {
	b.Helper()
	cache, err := bin.NewCache("../..", os.Stderr)
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	bins, err := cluster.PrepareBinaries(ctx, cache, dir)
	if err != nil {
		b.Fatal(err)
	}
	g := proc.NewGroup()
	b.Cleanup(func() { g.Close(10 * time.Second) })
	c, err := cluster.Up(ctx, g, bins, cluster.Shape{EtcdMembers: etcd, Masters: masters, ClusterID: id, Seed: 1,
		MasterConfig: map[string]any{"leader_lease_seconds": int(failoverLease / time.Second), "oplog_poll_interval_ms": 10}}, filepath.Join(dir, "cluster"))
	if err != nil {
		b.Fatal(err)
	}
	bc := &benchCluster{c: c, env: cluster.NewEnv(c, contract.MustKeyspace(id), 1), api: client.New(5 * time.Second)}
	_, url, err := bc.env.PrimaryURL(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if res := bc.api.Mount(ctx, url, client.Segment{Endpoint: "10.0.0.1:7000", Name: "segment-a", Capacity: 1 << 40, Kind: "memory"}); res.Outcome != history.OK {
		b.Fatalf("mount: %s %s", res.Code, res.Error)
	}
	return bc
}

// ack is one acknowledged put: when, and which master served it.
type ack struct {
	at   time.Time
	node string
}

// ackLog holds every acknowledgement in time order (appended under its
// lock with the time taken there).
type ackLog struct {
	mu  sync.Mutex
	all []ack
}

func (l *ackLog) add(node string) {
	l.mu.Lock()
	l.all = append(l.all, ack{at: time.Now(), node: node})
	l.mu.Unlock()
}

// firstAfter is how long after t the first write acknowledged by a master
// other than old ("": any) came, waiting up to deadline for it.
func (l *ackLog) firstAfter(t time.Time, old string, deadline time.Duration) (time.Duration, bool) {
	for end := time.Now().Add(deadline); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		l.mu.Lock()
		i, _ := slices.BinarySearchFunc(l.all, t, func(a ack, t time.Time) int { return a.at.Compare(t) })
		for ; i < len(l.all); i++ {
			if a := l.all[i]; a.at.After(t) && a.node != old {
				l.mu.Unlock()
				return a.at.Sub(t), true
			}
		}
		l.mu.Unlock()
	}
	return 0, false
}

// writers keeps clients putting until stop, each finding the primary again
// (GET /healthz of every master) whenever a put is not acknowledged, and
// logs every acknowledgement.
func (bc *benchCluster) writers(ctx context.Context, clients int) (*ackLog, func()) {
	ctx, cancel := context.WithCancel(ctx)
	log := &ackLog{}
	var (
		wg  sync.WaitGroup
		seq atomic.Int64
	)
	for w := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name, url := "", ""
			for ctx.Err() == nil {
				if url == "" {
					n, err := bc.c.Masters.WaitPrimary(ctx, 500*time.Millisecond)
					if err != nil {
						continue
					}
					name, url = n.Name, n.URL
				}
				res := bc.api.Put(ctx, url, client.PutRequest{Tenant: "bench", Key: fmt.Sprintf("w%d-%d", w, seq.Add(1)), ClientID: "0-1", Size: 4096})
				if res.Outcome != history.OK {
					url = ""
					continue
				}
				log.add(name)
			}
		}()
	}
	return log, func() {
		cancel()
		wg.Wait()
	}
}

// BenchmarkFailover: from a fault on the primary to the first write its
// successor acknowledges, under 4 writing clients that look for the primary
// again after any failed put: SIGKILL of the primary, SIGSTOP of the
// primary, and SIGKILL of the etcd leader (where the time runs to the first
// write acknowledged after it by any master). failoverRounds faults each,
// p50 and p99 beside the leader lease TTL; target p99 ≤ TTL + 300 ms.
func BenchmarkFailover(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	bc := bootBenchCluster(ctx, b, "failover", 3, 3)
	acks, stop := bc.writers(ctx, 4)
	defer stop()
	// fault picks its node and returns how to strike it and how to undo it.
	measure := func(kind string, fault func() (node string, strike, undo func() error, err error), successor bool) {
		var took []time.Duration
		for round := range failoverRounds {
			if _, ok := acks.firstAfter(time.Now(), "", 30*time.Second); !ok {
				b.Fatalf("%s round %d: no write acknowledged before the fault", kind, round)
			}
			node, strike, undo, err := fault()
			if err != nil {
				b.Fatalf("%s round %d: %v", kind, round, err)
			}
			t := time.Now()
			if err := strike(); err != nil {
				b.Fatalf("%s round %d: %v", kind, round, err)
			}
			old := ""
			if successor {
				old = node
			}
			d, ok := acks.firstAfter(t, old, 60*time.Second)
			if err := undo(); err != nil {
				b.Fatalf("%s round %d: undo on %s: %v", kind, round, node, err)
			}
			if !ok {
				b.Fatalf("%s round %d: no write acknowledged within 60 s of the fault on %s", kind, round, node)
			}
			took = append(took, d)
			if _, err := bc.c.Masters.WaitPrimary(ctx, 60*time.Second); err != nil {
				b.Fatal(err)
			}
		}
		slices.Sort(took)
		p50, p99 := took[len(took)/2], took[min(len(took)-1, len(took)*99/100)]
		limit := failoverLease + 300*time.Millisecond
		record(b, benchreport.Figure{Group: "failover", Name: "failover, " + kind + ": to the first acknowledged write, p99", Value: p99.Seconds() * 1000, Unit: "ms", LowerIsBetter: true,
			Note: fmt.Sprintf("%d faults: p50 %v, p99 %v, max %v; 4 clients writing, finding the primary by /healthz", len(took), p50.Round(time.Millisecond), p99.Round(time.Millisecond), took[len(took)-1].Round(time.Millisecond))}.
			WithBaseline("leader lease TTL", failoverLease.Seconds()*1000).
			WithTarget("≤ TTL + 300 ms", p99 <= limit))
	}
	primary := func() (string, error) {
		n, err := bc.c.Masters.WaitPrimary(ctx, 30*time.Second)
		if err != nil {
			return "", err
		}
		return n.Name, nil
	}
	measure("SIGKILL of the primary", func() (string, func() error, func() error, error) {
		n, err := primary()
		return n, func() error { return bc.env.Kill(n) }, func() error { return bc.env.Start(ctx, n) }, err
	}, true)
	measure("SIGSTOP of the primary", func() (string, func() error, func() error, error) {
		n, err := primary()
		return n, func() error { return bc.env.Pause(n) }, func() error { return bc.env.Resume(n) }, err
	}, true)
	measure("SIGKILL of the etcd leader", func() (string, func() error, func() error, error) {
		n, err := bc.env.EtcdLeader(ctx)
		return n, func() error { return bc.env.Kill(n) }, func() error { return bc.env.Start(ctx, n) }, err
	}, false)
}
