package masters

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/harness/bin"
	"github.com/oplogha/oplogha/harness/client"
	"github.com/oplogha/oplogha/harness/etcd"
	"github.com/oplogha/oplogha/harness/proc"
)

var masterBin, etcdBin string

func TestMain(m *testing.M) {
	os.Exit(func() int {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		cache, err := bin.NewCache(".", os.Stderr)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		e, err := cache.Path(ctx, "etcd")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		etcdBin = e.Path
		dir, err := os.MkdirTemp("", "oplogha-master-bin-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		masterBin = filepath.Join(dir, "master")
		if _, err := cache.BuildProject(ctx, "./cmd/master", masterBin); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return m.Run()
	}())
}

// cluster is one test's etcd + masters, torn down (and checked for leaks) at the end.
type cluster struct {
	t     *testing.T
	group *proc.Group
	etcd  *etcd.Cluster
	set   *Set
	cli   *client.Client
	dir   string
}

func startCluster(t *testing.T, masters int, cfg map[string]any) *cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	c := &cluster{t: t, group: proc.NewGroup(), dir: dir, cli: client.New(15 * time.Second)}
	t.Cleanup(func() { c.closeAndCheck() })
	ec, err := etcd.Start(ctx, c.group, etcd.Options{Members: 3, Binary: etcdBin, Dir: filepath.Join(dir, "etcd")})
	require.NoError(t, err)
	c.etcd = ec
	base := map[string]any{"oplog_poll_interval_ms": 20, "leader_lease_seconds": 2, "log_level": "debug"}
	for k, v := range cfg {
		base[k] = v
	}
	set, err := Start(ctx, c.group, Options{Binary: masterBin, Dir: filepath.Join(dir, "masters"), ClusterID: "test",
		EtcdEndpoints: ec.Endpoints(), Count: masters, Config: base})
	require.NoError(t, err)
	c.set = set
	return c
}

// closeAndCheck stops every process and proves by PID and port that nothing is left.
func (c *cluster) closeAndCheck() {
	t := c.t
	records := c.group.Records()
	if err := c.group.Close(5 * time.Second); err != nil {
		t.Errorf("close: %v", err)
	}
	for _, r := range records {
		if syscall.Kill(r.PID, 0) == nil {
			t.Errorf("%s (pid %d) left running", r.Name, r.PID)
		}
	}
	var addrs []string
	if c.etcd != nil {
		for _, m := range c.etcd.Members {
			addrs = append(addrs, "127.0.0.1:"+strconv.Itoa(m.ClientPort), "127.0.0.1:"+strconv.Itoa(m.PeerPort))
		}
	}
	if c.set != nil {
		for _, n := range c.set.Nodes {
			addrs = append(addrs, strings.TrimPrefix(n.URL, "http://"), n.FailpointAddr)
		}
	}
	for _, a := range addrs {
		l, err := net.Listen("tcp", a)
		if err != nil {
			t.Errorf("port %s still bound after the run", a)
			continue
		}
		l.Close()
	}
	if t.Failed() {
		for _, r := range records {
			if data, err := os.ReadFile(r.Log); err == nil {
				lines := strings.Split(strings.TrimSpace(string(data)), "\n")
				if len(lines) > 40 {
					lines = lines[len(lines)-40:]
				}
				t.Logf("--- last lines of %s (%s)\n%s", r.Name, r.Log, strings.Join(lines, "\n"))
			}
		}
	}
}

func (c *cluster) primary(timeout time.Duration) *Node {
	c.t.Helper()
	n, err := c.set.WaitPrimary(context.Background(), timeout)
	require.NoError(c.t, err)
	return n
}

func (c *cluster) mountSegments(url string, n int) {
	c.t.Helper()
	for i := 0; i < n; i++ {
		r := c.cli.Mount(context.Background(), url, client.Segment{Endpoint: fmt.Sprintf("10.0.0.%d:7000", i+1),
			Name: fmt.Sprintf("seg-%d", i), Capacity: 1 << 40, Kind: "memory"})
		require.Equal(c.t, client.OK, r.Outcome, "%+v", r)
	}
}

// history records the outcome of every put by key.
type history struct {
	mu      sync.Mutex
	acked   map[string]bool
	unknown map[string]bool
	failed  int
}

func newHistory() *history { return &history{acked: map[string]bool{}, unknown: map[string]bool{}} }

func (h *history) record(key string, r client.Result) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch r.Outcome {
	case client.OK:
		h.acked[key] = true
	case client.Unknown:
		h.unknown[key] = true
	default:
		h.failed++
	}
}

func (h *history) ackedCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.acked)
}

// writeUntil puts unique keys from several writers against whichever node is
// primary until target puts are acknowledged (or the deadline passes).
func (c *cluster) writeUntil(h *history, prefix string, target int, deadline time.Duration) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	var wg sync.WaitGroup
	var mu sync.Mutex
	url := ""
	next := 0
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil && h.ackedCount() < target {
				mu.Lock()
				if url == "" {
					mu.Unlock()
					n, err := c.set.WaitPrimary(ctx, 30*time.Second)
					if err != nil {
						return
					}
					mu.Lock()
					url = n.URL
				}
				u := url
				key := fmt.Sprintf("%s-%06d", prefix, next)
				next++
				mu.Unlock()
				r := c.cli.Put(ctx, u, client.PutRequest{Tenant: "t", Key: key, ClientID: "0-2", Size: 4096})
				h.record(key, r)
				if r.Outcome != client.OK {
					mu.Lock()
					if url == u {
						url = "" // find the primary again
					}
					mu.Unlock()
					time.Sleep(20 * time.Millisecond)
				}
			}
		}()
	}
	wg.Wait()
	require.GreaterOrEqual(c.t, h.ackedCount(), target, "acknowledged puts before the deadline")
}

// checkAcknowledged proves on node n: every acknowledged put is present and
// nothing is present that was neither acknowledged nor of unknown outcome.
func (c *cluster) checkAcknowledged(n *Node, h *history) client.State {
	c.t.Helper()
	st, err := c.cli.State(context.Background(), n.URL, true)
	require.NoError(c.t, err)
	present := map[string]bool{}
	for _, o := range st.Dump {
		present[o.Key] = true
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	missing := 0
	for k := range h.acked {
		if !present[k] {
			missing++
			if missing < 5 {
				c.t.Errorf("acknowledged put %s missing on %s", k, n.Name)
			}
		}
	}
	require.Zero(c.t, missing, "acknowledged puts missing")
	for k := range present {
		if !h.acked[k] && !h.unknown[k] {
			c.t.Errorf("%s present on %s but was never acknowledged nor in doubt", k, n.Name)
		}
	}
	return st
}

func (c *cluster) waitSameState(nodes []*Node, timeout time.Duration) client.State {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	var states []client.State
	for time.Now().Before(deadline) {
		states = states[:0]
		for _, n := range nodes {
			st, err := c.cli.State(context.Background(), n.URL, false)
			if err == nil {
				states = append(states, st)
			}
		}
		same := len(states) == len(nodes)
		for _, s := range states {
			same = same && s.Cursor == states[0].Cursor && s.Digest == states[0].Digest
		}
		if same {
			return states[0]
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.t.Fatalf("nodes did not converge: %+v", states)
	return client.State{}
}

func TestFailoverKeepsEveryAcknowledgedWrite(t *testing.T) {
	c := startCluster(t, 3, nil)
	p := c.primary(30 * time.Second)
	c.mountSegments(p.URL, 3)
	h := newHistory()
	// 5000 acknowledged puts from 8 writers; the primary is killed under them at 2500.
	writing := make(chan struct{})
	go func() {
		defer close(writing)
		c.writeUntil(h, "put", 5000, 3*time.Minute)
	}()
	require.Eventually(t, func() bool { return h.ackedCount() >= 2500 }, 2*time.Minute, 5*time.Millisecond)
	proc, _ := c.set.Process(p)
	killedAt := time.Now()
	require.NoError(t, proc.Kill())
	newP := c.primary(30 * time.Second)
	failover := time.Since(killedAt)
	require.NotEqual(t, p.Name, newP.Name)
	t.Logf("SIGKILL %s at %d acks → %s serving after %v", p.Name, h.ackedCount(), newP.Name, failover)
	require.Less(t, failover, 20*time.Second, "promotion is bounded by the election lease plus catch-up")
	<-writing
	h.mu.Lock()
	t.Logf("acked %d, unknown %d, failed %d", len(h.acked), len(h.unknown), h.failed)
	require.NotZero(t, len(h.unknown)+h.failed, "the kill hit writes in flight")
	h.mu.Unlock()
	st := c.checkAcknowledged(newP, h)

	var running []*Node
	for _, n := range c.set.Nodes {
		if n != p {
			running = append(running, n)
		}
	}
	conv := c.waitSameState(running, 30*time.Second)
	require.Equal(t, st.Digest, conv.Digest)

	// The old primary restarts, bootstraps from the OpLog, and comes back as a standby.
	require.NoError(t, c.set.StartNode(p))
	all := c.waitSameState(c.set.Nodes, 60*time.Second)
	require.Equal(t, st.Digest, all.Digest)
	hs, err := c.cli.Health(context.Background(), p.URL)
	require.NoError(t, err)
	require.Equal(t, "standby", hs.Role)
	require.False(t, hs.Serving)
	require.Equal(t, "oplog", hs.Bootstrap.Source)
	c.checkAcknowledged(p, h)
	// Writes go on after the restart, and the rejoined standby follows them.
	c.writeUntil(h, "rejoined", 5100, time.Minute)
	c.waitSameState(c.set.Nodes, 30*time.Second)

	// A standby answers 503 with the leader's address.
	r := c.cli.Put(context.Background(), p.URL, client.PutRequest{Tenant: "t", Key: "to-standby", Size: 1})
	require.Equal(t, client.Failed, r.Outcome)
	require.Equal(t, http.StatusServiceUnavailable, r.Status)
	require.Equal(t, "not_primary", r.Code)
	require.Equal(t, newP.URL, r.Leader)
}

func setFailpoint(t *testing.T, n *Node, name, term string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, "http://"+n.FailpointAddr+"/"+name, strings.NewReader(term))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Less(t, resp.StatusCode, 300, "failpoint %s=%s", name, term)
}

func TestStalePausedPrimaryIsFenced(t *testing.T) {
	c := startCluster(t, 2, nil)
	p := c.primary(30 * time.Second)
	c.mountSegments(p.URL, 1)
	ok := c.cli.Put(context.Background(), p.URL, client.PutRequest{Tenant: "t", Key: "first", Size: 1})
	require.Equal(t, client.OK, ok.Outcome, "%+v", ok)

	// A write enters p's commit loop, which then stalls before its append …
	setFailpoint(t, p, "primaryBeforeAppend", "1*sleep(1500)")
	stale := make(chan client.Result, 1)
	go func() {
		stale <- c.cli.Put(context.Background(), p.URL, client.PutRequest{Tenant: "t", Key: "stale", Size: 1})
	}()
	time.Sleep(300 * time.Millisecond)
	// … and p is frozen long enough for its election lease to expire.
	pp, _ := c.set.Process(p)
	require.NoError(t, pp.Pause())
	var other *Node
	for _, n := range c.set.Nodes {
		if n != p {
			other = n
		}
	}
	require.Eventually(t, func() bool {
		h, err := c.cli.Health(context.Background(), other.URL)
		return err == nil && h.Serving
	}, 30*time.Second, 50*time.Millisecond, "the other node takes over while p is paused")
	fresh := c.cli.Put(context.Background(), other.URL, client.PutRequest{Tenant: "t", Key: "fresh", Size: 1})
	require.Equal(t, client.OK, fresh.Outcome, "%+v", fresh)

	require.NoError(t, pp.Resume())
	r := <-stale
	require.Equal(t, client.Failed, r.Outcome, "%+v", r)
	require.Equal(t, "fenced", r.Code, "the stale primary's append was refused by the producer-view compare: %+v", r)
	// Its next request is refused too, and it steps down.
	next := c.cli.Put(context.Background(), p.URL, client.PutRequest{Tenant: "t", Key: "stale-2", Size: 1})
	require.NotEqual(t, client.OK, next.Outcome, "%+v", next)
	require.Eventually(t, func() bool {
		h, err := c.cli.Health(context.Background(), p.URL)
		return err == nil && h.Role == "standby" && !h.Serving
	}, 30*time.Second, 50*time.Millisecond)

	st := c.waitSameState(c.set.Nodes, 30*time.Second)
	dump, err := c.cli.State(context.Background(), other.URL, true)
	require.NoError(t, err)
	require.Equal(t, st.Digest, dump.Digest)
	keys := map[string]bool{}
	for _, o := range dump.Dump {
		keys[o.Key] = true
	}
	require.True(t, keys["first"] && keys["fresh"])
	require.False(t, keys["stale"] || keys["stale-2"], "a refused write is nowhere")
}

func TestInvalidConfigExitsNonZeroWithOneLineEach(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(path, []byte("cluster_id: c\nlisten: 127.0.0.1:0\netcd_endpoints: [http://127.0.0.1:1]\nenable_oplog_pruning: true\n"), 0o644))
	out, err := exec.Command(masterBin, "--config", path).CombinedOutput()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	require.Equal(t, 2, ee.ExitCode())
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.Len(t, lines, 2, "%s", out)
	require.Contains(t, lines[0], "enable_oplog_pruning: requires a shared object store")
	require.Contains(t, lines[1], "enable_oplog_pruning: requires enable_standby_snapshot")
}
