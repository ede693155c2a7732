// Package masters runs master processes for a scenario: one config file per
// node, a client API port and a failpoint port allocated per run, logs under
// the run directory, and the health and role queries the harness needs, all
// through the master's external contract.
package masters

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/oplogha/oplogha/harness/client"
	"github.com/oplogha/oplogha/harness/ports"
	"github.com/oplogha/oplogha/harness/proc"
)

// Options shape a set of masters.
type Options struct {
	Binary        string
	Dir           string
	ClusterID     string
	EtcdEndpoints []string
	Count         int               // default 3
	Config        map[string]any    // extra config keys for every node
	Failpoints    map[string]string // set on every node at each start
	// Driver is the kind of master (nil: the reference master).
	Driver Driver
	// AdvertiseFor, when set, gives the client URL node i advertises (and
	// clients use) for its listen address, e.g. a toxiproxy link in front of it.
	AdvertiseFor func(i int, listen string) (string, error)
	// EtcdFor, when set, gives node i its own etcd endpoints (its links to
	// each member) instead of EtcdEndpoints.
	EtcdFor func(i int) ([]string, error)
	// ConfigFor, when set, adds node-specific config keys (e.g. its S3 link).
	ConfigFor func(i int) (map[string]any, error)
	// Env is extra environment for every node (credentials: never in args or config files).
	Env []string
	// Supervisor restarts nodes that exit (zero value: none does).
	Supervisor Supervisor
	// OnExit, when set, is told of every exit of a node's process the
	// harness did not ask for (no Kill, no Stop): the process ended on its
	// own. It is called before any supervisor restart.
	OnExit func(node string, p *proc.Process)
	// StartFirst, when set, names the node started alone first: the others
	// start once it serves as primary (or after FirstPrimaryWait), so a
	// replay's first election goes the way the original's went.
	StartFirst string
}

// FirstPrimaryWait bounds how long the others wait for StartFirst to serve.
const FirstPrimaryWait = 30 * time.Second

// Node is one master.
type Node struct {
	Name          string
	URL           string // client API as clients reach it (through its link when proxied)
	DirectURL     string // client API itself, for the harness's observations
	FailpointAddr string // gofail HTTP endpoint host:port
	ConfigPath    string
	Log           string
}

// Set is a running set of masters.
type Set struct {
	Nodes  []*Node
	opts   Options
	group  *proc.Group
	Client *client.Client

	mu   sync.Mutex
	held map[string]bool // stopped on purpose: not restarted by the supervisor
	// mon polls every node's health, each on its own (monitor.go).
	mon *monitor
}

// Start writes each node's config and starts every node.
func Start(ctx context.Context, group *proc.Group, opts Options) (*Set, error) {
	if opts.Count <= 0 {
		opts.Count = 3
	}
	ps, err := ports.Free(2 * opts.Count)
	if err != nil {
		return nil, err
	}
	if opts.Supervisor.Backoff <= 0 {
		opts.Supervisor.Backoff = 500 * time.Millisecond
	}
	s := &Set{opts: opts, group: group, Client: client.New(10 * time.Second), held: map[string]bool{}}
	if opts.Driver == nil {
		s.opts.Driver = &Reference{HTTP: s.Client}
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, err
	}
	for i := 0; i < opts.Count; i++ {
		name := fmt.Sprintf("master-%d", i)
		host := group.Host(name)
		listen := ports.On(host, ps[2*i])
		n := &Node{Name: name, URL: "http://" + listen, DirectURL: "http://" + listen, FailpointAddr: ports.On(host, ps[2*i+1])}
		n.ConfigPath = filepath.Join(opts.Dir, n.Name+".yaml")
		n.Log = filepath.Join(opts.Dir, n.Name+".log")
		if opts.AdvertiseFor != nil {
			if n.URL, err = opts.AdvertiseFor(i, listen); err != nil {
				return nil, err
			}
		}
		endpoints := opts.EtcdEndpoints
		if opts.EtcdFor != nil {
			if endpoints, err = opts.EtcdFor(i); err != nil {
				return nil, err
			}
		}
		cfg := map[string]any{}
		for k, v := range opts.Config {
			cfg[k] = v
		}
		if opts.ConfigFor != nil {
			extra, err := opts.ConfigFor(i)
			if err != nil {
				return nil, err
			}
			for k, v := range extra {
				cfg[k] = v
			}
		}
		if err := s.opts.Driver.Prepare(n, Settings{ClusterID: opts.ClusterID, Listen: listen, EtcdEndpoints: endpoints, Config: cfg}); err != nil {
			return nil, fmt.Errorf("%s: %w", n.Name, err)
		}
		s.Nodes = append(s.Nodes, n)
	}
	s.mon = newMonitor(s)
	for _, n := range s.Nodes {
		if n.Name != opts.StartFirst {
			continue
		}
		if err := s.StartNode(n); err != nil {
			return s, err
		}
		s.waitServing(ctx, n, FirstPrimaryWait)
	}
	for _, n := range s.Nodes {
		if n.Name == opts.StartFirst {
			continue
		}
		if err := s.StartNode(n); err != nil {
			return s, err
		}
	}
	return s, nil
}

// waitServing waits, up to timeout, until n says it is the primary.
func (s *Set) waitServing(ctx context.Context, n *Node, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for ctx.Err() == nil {
		for i, h := range s.Health(ctx) {
			if s.Nodes[i] == n && h.Role == "primary" {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// NodeHealth reads one node's health through its kind's driver.
func (s *Set) NodeHealth(ctx context.Context, n *Node) (client.Health, error) {
	return s.opts.Driver.Health(ctx, n)
}

// State reads n's applied state (ErrNotExposed: its kind exposes none).
func (s *Set) State(ctx context.Context, n *Node, dump bool) (client.State, error) {
	return s.opts.Driver.State(ctx, n, dump)
}

// MetricsURL is where n's metrics are read.
func (s *Set) MetricsURL(n *Node) string { return s.opts.Driver.MetricsURL(n) }

// CallTimeout bounds each call the harness makes to a master beyond its
// health (a failpoint set, cleared or counted, a metric scraped): a frozen
// master costs the step that much, not the step's whole bound.
const CallTimeout = 5 * time.Second

// Failpoint sets (term) or clears ("") a failpoint on n.
func (s *Set) Failpoint(ctx context.Context, n *Node, name, term string) error {
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	return s.opts.Driver.Failpoint(ctx, n, name, term)
}

// FailpointHits says how often n's failpoint fired since it was set.
func (s *Set) FailpointHits(ctx context.Context, n *Node, name string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	return s.opts.Driver.FailpointHits(ctx, n, name)
}

// Reconfigure merges overrides into every node's config file; the next
// start of each node reads it (a configuration rollout).
func (s *Set) Reconfigure(overrides map[string]any) error {
	for _, n := range s.Nodes {
		data, err := os.ReadFile(n.ConfigPath)
		if err != nil {
			return err
		}
		cfg := map[string]any{}
		if err := yaml.Unmarshal(data, &cfg); err != nil {
			return fmt.Errorf("%s: %w", n.ConfigPath, err)
		}
		for k, v := range overrides {
			cfg[k] = v
		}
		if data, err = yaml.Marshal(cfg); err != nil {
			return err
		}
		if err := os.WriteFile(n.ConfigPath, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// StartNode (re)starts one node with its config; a held node is released.
func (s *Set) StartNode(n *Node) error {
	s.mu.Lock()
	delete(s.held, n.Name)
	s.mu.Unlock()
	return s.start(n, s.opts.Supervisor.Backoff)
}

// start starts n's process and, when supervised, its watcher, which waits
// delay before restarting it.
func (s *Set) start(n *Node, delay time.Duration) error {
	args, env := s.opts.Driver.Command(n)
	env = append(env, s.opts.Env...)
	fpEnv, err := s.opts.Driver.StartFailpoints(n, s.opts.Failpoints)
	if err != nil {
		return err
	}
	env = append(env, fpEnv...)
	p, err := s.group.Start(proc.Spec{Name: n.Name, Path: s.opts.Binary, Args: args, Env: env, Log: n.Log, Dir: s.opts.Dir})
	if err != nil {
		return err
	}
	if s.opts.OnExit != nil {
		go func() {
			<-p.Done()
			if !p.EndedByHarness() && !s.group.Closing() {
				s.opts.OnExit(n.Name, p)
			}
		}()
	}
	if s.Supervised() {
		go s.supervise(n, p, delay)
	}
	return nil
}

// Process is a node's current process.
func (s *Set) Process(n *Node) (*proc.Process, bool) { return s.group.Get(n.Name) }

// Health is every node's health: each node's first reading begun after
// the call (monitor.go). A node whose process is not running is "down"
// without a request (on the docker runtime a dead node's address answers
// nothing), and so is a node that has gone silent (no answer for NoAnswer):
// a frozen node never holds the call up past NoAnswer, and once it is
// known to be silent not at all.
func (s *Set) Health(ctx context.Context) []client.Health {
	return s.healthBy(ctx, s.mon.fresh)
}

// HealthAnswered is every node's health as its first request begun after
// the call answered (or failed, at RequestTimeout): a node slow to answer
// is not called down. An assert judges from it; it returns within
// RequestTimeout and a poll interval.
func (s *Set) HealthAnswered(ctx context.Context) []client.Health {
	return s.healthBy(ctx, s.mon.answered)
}

// healthBy reads every node at once with read, from the moment of the
// call; a node whose process is not running is down without a request.
func (s *Set) healthBy(ctx context.Context, read func(ctx context.Context, i int, from time.Time) Reading) []client.Health {
	from := time.Now()
	out := make([]client.Health, len(s.Nodes))
	var wg sync.WaitGroup
	for i, n := range s.Nodes {
		if p, ok := s.group.Get(n.Name); ok && !p.Running() {
			out[i] = client.Health{NodeID: n.Name, Role: "down", ApplyError: "process not running"}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = read(ctx, i, from).Health
		}()
	}
	wg.Wait()
	return out
}

// Latest is every node's newest reading, without waiting for any: what the
// harness knows of each node now (a silent node down). A node not yet read
// has a zero reading.
func (s *Set) Latest() []Reading {
	now := time.Now()
	out := make([]Reading, len(s.Nodes))
	for i := range s.Nodes {
		out[i], _ = s.mon.now(i, now)
	}
	return out
}

// Changed is closed at the next new reading of any node.
func (s *Set) Changed() <-chan struct{} { return s.mon.Changed() }

// Close stops the health polling (it stops by itself once the process
// group closes).
func (s *Set) Close() { s.mon.close() }

// ErrNoPrimary: no node became the serving primary in time.
var ErrNoPrimary = errors.New("no serving primary")

// WaitPrimary waits until exactly one node serves as primary and returns it.
func (s *Set) WaitPrimary(ctx context.Context, timeout time.Duration) (*Node, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last []client.Health
	for {
		last = s.Health(ctx)
		var primaries []*Node
		for i, h := range last {
			if h.Serving && h.Role == "primary" {
				primaries = append(primaries, s.Nodes[i])
			}
		}
		if len(primaries) == 1 {
			return primaries[0], nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w after %v: %s", ErrNoPrimary, timeout, Describe(last))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// WaitSettled waits until every running node answers with a role past
// starting (primary, standby or failed): a booted cluster has every node in
// the game, on any runtime, before the first step picks one.
func (s *Set) WaitSettled(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		hs := s.Health(ctx)
		settled := true
		for i, h := range hs {
			if p, ok := s.group.Get(s.Nodes[i].Name); ok && !p.Running() {
				continue // exited (a failpoint armed at start crashed it): nothing to wait for
			}
			if h.Role == "down" || h.Role == "starting" || h.Role == "" {
				settled = false
			}
		}
		if settled {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("masters not settled after %v: %s", timeout, Describe(hs))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// WaitCaughtUp waits until every running node has applied through batch id.
func (s *Set) WaitCaughtUp(ctx context.Context, batchID uint64, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		hs := s.Health(ctx)
		ok := true
		for i, h := range hs {
			if p, running := s.Process(s.Nodes[i]); !running || !p.Running() {
				continue
			}
			if h.Cursor.BatchID < batchID {
				ok = false
			}
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("nodes not caught up to batch %d after %v: %s", batchID, timeout, Describe(hs))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Describe is a one-line summary of node health.
func Describe(hs []client.Health) string {
	parts := make([]string, len(hs))
	for i, h := range hs {
		parts[i] = fmt.Sprintf("%s=%s(serving=%v cursor=%d view=%d)", h.NodeID, h.Role, h.Serving, h.Cursor.BatchID, h.ProducerView)
	}
	return strings.Join(parts, " ")
}

// Refusal is how a master started by TryConfig ended.
type Refusal struct {
	Name     string
	Exited   bool   // false: it was still running at the deadline (and was stopped)
	ExitCode int    // when Exited
	Line     string // its last line that starts with "master: " (the one-line reason)
	Log      string
}

// TryConfig starts one extra master, named name, with node 0's settings
// plus overrides (its own listen port), and waits up to timeout for it to
// exit: the way to show that a configuration is refused at startup against
// the live cluster. It is stopped by PID if it is still running then.
func (s *Set) TryConfig(ctx context.Context, name string, overrides map[string]any, timeout time.Duration) (Refusal, error) {
	out := Refusal{Name: name, Log: filepath.Join(s.opts.Dir, name+".log")}
	data, err := os.ReadFile(s.Nodes[0].ConfigPath)
	if err != nil {
		return out, err
	}
	cfg := map[string]any{}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		return out, err
	}
	ps, err := ports.Free(1)
	if err != nil {
		return out, err
	}
	cfg["node_id"], cfg["listen"] = name, ports.On(s.group.Host(name), ps[0])
	cfg["advertise_url"] = "http://" + cfg["listen"].(string)
	for k, v := range overrides {
		cfg[k] = v
	}
	if data, err = yaml.Marshal(cfg); err != nil {
		return out, err
	}
	path := filepath.Join(s.opts.Dir, name+".yaml")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return out, err
	}
	p, err := s.group.Start(proc.Spec{Name: name, Path: s.opts.Binary, Args: []string{"--config", path}, Env: s.opts.Env, Log: out.Log, Dir: s.opts.Dir})
	if err != nil {
		return out, err
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-p.Done():
		out.Exited = true
	case <-t.C:
		_ = p.Stop(2 * time.Second)
	case <-ctx.Done():
		_ = p.Stop(2 * time.Second)
		return out, ctx.Err()
	}
	if out.Exited {
		var ee interface{ ExitCode() int }
		if errors.As(p.ExitErr(), &ee) {
			out.ExitCode = ee.ExitCode()
		}
	}
	if log, err := os.ReadFile(out.Log); err == nil {
		for _, l := range strings.Split(string(log), "\n") {
			if strings.HasPrefix(l, "master: ") {
				out.Line = l
			}
		}
	}
	return out, nil
}
