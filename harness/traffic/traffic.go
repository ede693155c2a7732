// Package traffic is the seeded load generator: clients that put fresh keys,
// remove and read keys whose puts were acknowledged, against whichever master
// is primary (following 503 redirects), each op recorded in the history.
// Every run is bounded in count and time and stops by itself.
package traffic

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/oplogha/oplogha/harness/client"
	"github.com/oplogha/oplogha/harness/history"
)

// Config shapes the load.
type Config struct {
	Seed     int64         `yaml:"-"`
	Clients  int           `yaml:"clients"`  // concurrent clients (default 4)
	Rate     float64       `yaml:"rate"`     // total ops/s; 0 = as fast as answers come
	MaxOps   int           `yaml:"max_ops"`  // hard bound on ops (default 50000)
	Duration time.Duration `yaml:"duration"` // hard bound on time (default 10m)
	Put      float64       `yaml:"put"`      // mix weights (default 0.6/0.2/0.15/0.05)
	Remove   float64       `yaml:"remove"`
	Get      float64       `yaml:"get"`
	// Reput puts a key whose put was acknowledged again, as a client that
	// retries or a duplicate request does: the master must refuse it
	// (object_exists), which the linearizability model checks.
	Reput   float64 `yaml:"reput"`
	Tenants int     `yaml:"tenants"` // distinct tenants (default 3)
	// OneTenant, when set, is the only tenant every op names: the harness
	// sets it for a master kind without tenant namespaces (upstream's
	// without multi-tenancy files every key under "default").
	OneTenant string `yaml:"-"`
	Size      uint64 `yaml:"size"` // object size (default 4096)
	// Generation distinguishes restarts of the traffic in one run, so keys
	// stay unique across them.
	Generation int `yaml:"-"`
}

func (c *Config) defaults() {
	if c.Clients <= 0 {
		c.Clients = 4
	}
	if c.MaxOps <= 0 {
		c.MaxOps = 50_000
	}
	if c.Duration <= 0 {
		c.Duration = 10 * time.Minute
	}
	if c.Put+c.Remove+c.Get+c.Reput <= 0 {
		c.Put, c.Remove, c.Get, c.Reput = 0.6, 0.2, 0.15, 0.05
	}
	if c.Tenants <= 0 {
		c.Tenants = 3
	}
	if c.Size == 0 {
		c.Size = 4096
	}
}

// Target finds the master clients should talk to.
type Target interface {
	// PrimaryURL returns the node name and client URL of the current primary.
	PrimaryURL(ctx context.Context) (name, url string, err error)
	// NodeForURL names the node whose client URL is url ("" if none).
	NodeForURL(url string) string
}

// Client is how the load talks to a master: one implementation per
// master kind (the reference master's HTTP JSON client.Client; the
// mooncake package's coro_rpc client for upstream's). url is a node's
// client URL as Target gives it. A mutation's Result says ok, failed (it
// did not happen) or unknown (it may have).
type Client interface {
	Put(ctx context.Context, url string, req client.PutRequest) client.Result
	Remove(ctx context.Context, url, tenant, key string) client.Result
	Get(ctx context.Context, url, tenant, key string) (obj client.Object, found bool, err error)
	Mount(ctx context.Context, url string, seg client.Segment) client.Result
}

var _ Client = (*client.Client)(nil)

// Generator runs the load until Stop, its bounds, or ctx.
type Generator struct {
	cfg    Config
	target Target
	rec    *history.Recorder
	cli    Client

	done    chan struct{}
	cancel  context.CancelFunc
	ops     atomic.Int64
	okOps   atomic.Int64
	mu      sync.Mutex
	pool    []key // keys whose put was acknowledged and not yet removed-or-being-removed
	primary atomic.Value
}

type key struct{ tenant, key string }

// Start starts the clients.
// cli is the client of the run's master kind.
func Start(ctx context.Context, cfg Config, target Target, cli Client, rec *history.Recorder) *Generator {
	cfg.defaults()
	ctx, cancel := context.WithTimeout(ctx, cfg.Duration)
	g := &Generator{cfg: cfg, target: target, rec: rec, cli: cli, done: make(chan struct{}), cancel: cancel}
	g.primary.Store([2]string{})
	var wg sync.WaitGroup
	for i := 0; i < cfg.Clients; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g.client(ctx, i)
		}()
	}
	go func() {
		wg.Wait()
		cancel()
		close(g.done)
	}()
	return g
}

// Stop ends the load and waits for in-flight ops to complete.
func (g *Generator) Stop() {
	g.cancel()
	<-g.done
}

// Done is closed once every client has stopped.
func (g *Generator) Done() <-chan struct{} { return g.done }

// Ops is the number of ops issued so far, and how many were ok.
func (g *Generator) Ops() (all, ok int64) { return g.ops.Load(), g.okOps.Load() }

func (g *Generator) client(ctx context.Context, id int) {
	rng := rand.New(rand.NewPCG(uint64(g.cfg.Seed), uint64(g.cfg.Generation)<<32|uint64(id)+1))
	var interval time.Duration
	if g.cfg.Rate > 0 {
		interval = time.Duration(float64(time.Second) * float64(g.cfg.Clients) / g.cfg.Rate)
	}
	next := time.Now()
	n := 0
	for ctx.Err() == nil {
		if g.ops.Add(1) > int64(g.cfg.MaxOps) {
			return
		}
		if interval > 0 {
			next = next.Add(interval)
			if d := time.Until(next); d > 0 {
				select {
				case <-ctx.Done():
					return
				case <-time.After(d):
				}
			} else if d < -time.Second {
				next = time.Now() // far behind: do not burst
			}
		}
		name, url, err := g.primaryURL(ctx)
		if err != nil {
			continue
		}
		op := g.pick(rng, id, &n)
		op.Node = name
		g.do(ctx, url, &op)
		if op.Outcome == history.OK {
			g.okOps.Add(1)
		}
		if op.Code == "not_primary" || op.Code == "not_serving" || op.Code == "fenced" || op.Code == "transport" {
			g.primary.Store([2]string{})
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func (g *Generator) primaryURL(ctx context.Context) (string, string, error) {
	if p := g.primary.Load().([2]string); p[1] != "" {
		return p[0], p[1], nil
	}
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	name, url, err := g.target.PrimaryURL(pctx)
	if err != nil {
		sleepCtx(ctx, 100*time.Millisecond)
		return "", "", err
	}
	g.primary.Store([2]string{name, url})
	return name, url, nil
}

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// pick draws the next op: a put of a fresh key, or a remove, get or second
// put of an acknowledged key. Removes and second puts take the key out of
// the pool first (a second put gives it back when it completes), so no two
// removes race on one key and no second put races a remove: the history's
// checks take a key's second put to find it present.
func (g *Generator) pick(rng *rand.Rand, id int, n *int) history.Op {
	total := g.cfg.Put + g.cfg.Remove + g.cfg.Get + g.cfg.Reput
	x := rng.Float64() * total
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.pool) > 0 && x >= g.cfg.Put {
		i := rng.IntN(len(g.pool))
		k := g.pool[i]
		switch {
		case x < g.cfg.Put+g.cfg.Remove:
			g.pool[i] = g.pool[len(g.pool)-1]
			g.pool = g.pool[:len(g.pool)-1]
			return history.Op{Client: id, Kind: history.Remove, Tenant: k.tenant, Key: k.key}
		case x < g.cfg.Put+g.cfg.Remove+g.cfg.Get:
			return history.Op{Client: id, Kind: history.Get, Tenant: k.tenant, Key: k.key}
		}
		g.pool[i] = g.pool[len(g.pool)-1]
		g.pool = g.pool[:len(g.pool)-1]
		return history.Op{Client: id, Kind: history.Put, Tenant: k.tenant, Key: k.key, Size: g.cfg.Size, Reput: true}
	}
	*n++
	tenant := fmt.Sprintf("tenant-%d", rng.IntN(g.cfg.Tenants))
	if g.cfg.OneTenant != "" {
		tenant = g.cfg.OneTenant
	}
	return history.Op{Client: id, Kind: history.Put, Tenant: tenant,
		Key: fmt.Sprintf("g%d-c%d-%06d", g.cfg.Generation, id, *n), Size: g.cfg.Size}
}

func (g *Generator) do(ctx context.Context, url string, op *history.Op) {
	op.Invoke = g.rec.Now()
	switch op.Kind {
	case history.Put:
		r := g.cli.Put(ctx, url, client.PutRequest{Tenant: op.Tenant, Key: op.Key, ClientID: fmt.Sprintf("0-%d", op.Client), Size: op.Size})
		FillMutation(op, r)
		if op.Outcome == history.OK || op.Reput { // a second put returns its key, whatever it met
			g.mu.Lock()
			g.pool = append(g.pool, key{op.Tenant, op.Key})
			g.mu.Unlock()
		}
	case history.Remove:
		FillMutation(op, g.cli.Remove(ctx, url, op.Tenant, op.Key))
	case history.Get:
		obj, found, err := g.cli.Get(ctx, url, op.Tenant, op.Key)
		FillRead(op, obj, found, err)
	}
	op.Complete = g.rec.Now()
	if ctx.Err() != nil && op.Outcome == history.Unknown && op.Kind == history.Get {
		op.Outcome = history.Failed
	}
	g.rec.Add(*op)
}

// FillMutation records a mutation's answer in its op: outcome, code, and
// the batch and sequence it was acknowledged from.
func FillMutation(op *history.Op, r client.Result) {
	op.Outcome, op.Code, op.BatchID, op.Seq = r.Outcome, r.Code, r.BatchID, r.Seq
}

// FillRead records a read's answer in its op: found and size when served;
// failed with the master's refusal code (or get_failed when no master
// answered) when not — a read changes nothing, so a failed one is dropped
// from the checks.
func FillRead(op *history.Op, obj client.Object, found bool, err error) {
	if err != nil {
		op.Outcome, op.Code = history.Failed, client.ReadCode(err)
		return
	}
	op.Outcome, op.Found, op.GotSize = history.OK, found, obj.Size
}
