package mooncake

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/oplogha/oplogha/harness/client"
	"github.com/oplogha/oplogha/harness/cororpc"
	"github.com/oplogha/oplogha/harness/traffic"
	wire "github.com/oplogha/oplogha/impl/contract/cororpc"
)

// Client is the load's client of upstream's master, speaking coro_rpc as
// upstream's MasterClient does: a put is PutStart then PutEnd from the
// same client id; a segment is mounted by the client that owns it, which
// then pings the primary under the client TTL and remounts its segments
// when a new primary answers NEED_REMOUNT (after a failover the objects
// in them answer REPLICA_IS_NOT_READY until it does). Every argument is
// sent, defaults included. A transport error closes the connection (as
// upstream's client does) and the call's outcome is unknown.
type Client struct {
	// Primary names the current primary's client URL, for the pinger.
	Primary func(ctx context.Context) (string, error)
	// Timeout bounds each call (default 10 s).
	Timeout time.Duration

	mu       sync.Mutex
	conns    map[string][]*cororpc.Conn // idle connections by address
	owned    map[wire.UUID][]wire.Segment
	pinging  bool
	stop     chan struct{}
	stopOnce sync.Once
}

var _ traffic.Client = (*Client)(nil)

// NewClient returns a client whose pinger asks primary where to ping.
func NewClient(primary func(ctx context.Context) (string, error)) *Client {
	return &Client{Primary: primary, Timeout: 10 * time.Second, conns: map[string][]*cororpc.Conn{},
		owned: map[wire.UUID][]wire.Segment{}, stop: make(chan struct{})}
}

// Close stops the pinger and closes every connection.
func (c *Client) Close() {
	c.stopOnce.Do(func() { close(c.stop) })
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cs := range c.conns {
		for _, conn := range cs {
			_ = conn.Close()
		}
	}
	c.conns = map[string][]*cororpc.Conn{}
}

// addr is the host:port of a client URL ("http://host:port" or "host:port").
func addr(u string) string {
	if p, err := url.Parse(u); err == nil && p.Host != "" {
		return p.Host
	}
	return u
}

// with runs f on an idle connection to url (dialling one if none), and
// keeps the connection for the next call unless the call closed it.
func (c *Client) with(ctx context.Context, u string, f func(ctx context.Context, conn *cororpc.Conn) error) error {
	a := addr(u)
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	c.mu.Lock()
	var conn *cororpc.Conn
	if cs := c.conns[a]; len(cs) > 0 {
		conn, c.conns[a] = cs[len(cs)-1], cs[:len(cs)-1]
	}
	c.mu.Unlock()
	if conn == nil {
		var err error
		if conn, err = cororpc.Dial(ctx, a, cororpc.Options{}); err != nil {
			return err
		}
	}
	err := f(ctx, conn)
	if conn.Err() == nil {
		c.mu.Lock()
		c.conns[a] = append(c.conns[a], conn)
		c.mu.Unlock()
	}
	return err
}

// ParseClientID reads the harness's "<first>-<second>" client id.
func ParseClientID(s string) (wire.UUID, error) {
	if s == "" {
		return wire.UUID{}, nil
	}
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		return wire.UUID{}, fmt.Errorf("client id %q: want <first>-<second>", s)
	}
	first, err1 := strconv.ParseUint(a, 10, 64)
	second, err2 := strconv.ParseUint(b, 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return wire.UUID{}, fmt.Errorf("client id %q: %w", s, err)
	}
	return wire.UUID{First: first, Second: second}, nil
}

// result turns a call's error into the harness's outcome: nil is ok, an
// application error code is failed (the master answered: nothing
// happened), anything else (no answer, a broken connection) is unknown.
func result(err error) client.Result {
	var code wire.ErrorCode
	switch {
	case err == nil:
		return client.Result{Outcome: client.OK}
	case errors.As(err, &code):
		return client.Result{Outcome: client.Failed, Code: code.String(), Error: err.Error()}
	}
	return client.Result{Outcome: client.Unknown, Code: "transport", Error: err.Error()}
}

// Put is PutStart and PutEnd from the request's client id, one memory
// replica of Size bytes (or ReplicaCount). A PutStart refused is failed; a
// PutEnd refused after a PutStart accepted is failed too, and is followed
// by a PutRevoke as upstream's client does; no answer is unknown.
func (c *Client) Put(ctx context.Context, u string, req client.PutRequest) client.Result {
	id, err := ParseClientID(req.ClientID)
	if err != nil {
		return client.Result{Outcome: client.Failed, Code: "request", Error: err.Error()}
	}
	n := uint64(req.ReplicaCount)
	if n == 0 {
		n = 1
	}
	var out client.Result
	err = c.with(ctx, u, func(ctx context.Context, conn *cororpc.Conn) error {
		if _, err := conn.PutStart(ctx, id, req.Key, req.Size, wire.ReplicateConfig{ReplicaNum: n, WithHardPin: req.HardPinned}, req.Tenant); err != nil {
			out = result(err)
			return nil
		}
		if err := conn.PutEnd(ctx, id, wire.ObjectMeta{Key: req.Key}, wire.ReplicaAll, req.Tenant); err != nil {
			out = result(err)
			if out.Outcome == client.Failed {
				_ = conn.PutRevoke(ctx, id, req.Key, wire.ReplicaAll, req.Tenant)
			}
			return nil
		}
		out = client.Result{Outcome: client.OK}
		return nil
	})
	if err != nil {
		return result(err)
	}
	return out
}

// Remove removes an object (not forced: one under a read lease is refused).
func (c *Client) Remove(ctx context.Context, u, tenant, key string) client.Result {
	var out client.Result
	if err := c.with(ctx, u, func(ctx context.Context, conn *cororpc.Conn) error {
		out = result(conn.Remove(ctx, key, false, tenant))
		return nil
	}); err != nil {
		return result(err)
	}
	return out
}

// Get reads an object's replica list: OBJECT_NOT_FOUND is not found; any
// other refusal (REPLICA_IS_NOT_READY after a failover) is an error, a
// read that says nothing.
func (c *Client) Get(ctx context.Context, u, tenant, key string) (client.Object, bool, error) {
	var res wire.GetReplicaListResponse
	err := c.with(ctx, u, func(ctx context.Context, conn *cororpc.Conn) error {
		var err error
		res, err = conn.GetReplicaList(ctx, key, tenant)
		return err
	})
	if errors.Is(err, wire.ObjectNotFound) {
		return client.Object{}, false, nil
	}
	if err != nil {
		return client.Object{}, false, err
	}
	obj := client.Object{}
	for _, r := range res.Replicas {
		rep := client.Replica{ID: r.ID, Status: fmt.Sprint(r.Status)}
		if m, ok := r.Variant.(wire.MemoryDescriptor); ok {
			rep.Kind, rep.Length, rep.Segment, rep.Protocol = "memory", m.Buffer.Size, m.Buffer.TransportEndpoint, m.Buffer.Protocol
			if obj.Size == 0 {
				obj.Size = m.Buffer.Size
			}
		}
		obj.Replicas = append(obj.Replicas, rep)
	}
	return obj, true, nil
}

// SegmentOwner is the client id that mounts the harness's segments.
var SegmentOwner = wire.UUID{First: 1, Second: 1}

// segmentBase is where the harness's segment i starts (any page-aligned
// address works: the master allocates offsets within it).
func segmentBase(i uint64) uint64 { return 0x7f0000000000 + i<<32 }

// Mount mounts a segment owned by SegmentOwner, which from then on pings
// the primary and remounts its segments when asked to.
func (c *Client) Mount(ctx context.Context, u string, seg client.Segment) client.Result {
	h := fnv.New64a()
	_, _ = h.Write([]byte(seg.Endpoint))
	c.mu.Lock()
	idx := uint64(len(c.owned[SegmentOwner]))
	c.mu.Unlock()
	s := wire.Segment{ID: wire.UUID{First: h.Sum64(), Second: idx + 1}, Name: seg.Endpoint, Base: segmentBase(idx),
		Size: seg.Capacity, TEEndpoint: seg.Endpoint, Protocol: "tcp"}
	var out client.Result
	if err := c.with(ctx, u, func(ctx context.Context, conn *cororpc.Conn) error {
		out = result(conn.MountSegment(ctx, s, SegmentOwner))
		return nil
	}); err != nil {
		return result(err)
	}
	if out.Outcome == client.OK {
		c.mu.Lock()
		c.owned[SegmentOwner] = append(c.owned[SegmentOwner], s)
		start := !c.pinging
		c.pinging = true
		c.mu.Unlock()
		if start {
			go c.ping()
		}
	}
	return out
}

// PingInterval is how often an owner pings (upstream's client pings every
// second; the master drops a client silent for client_ttl).
const PingInterval = time.Second

// ping pings the primary for every owner until Close, remounting an
// owner's segments when the primary answers NEED_REMOUNT.
func (c *Client) ping() {
	t := time.NewTicker(PingInterval)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), c.Timeout)
		u, err := c.Primary(ctx)
		if err == nil {
			c.mu.Lock()
			owners := map[wire.UUID][]wire.Segment{}
			for id, segs := range c.owned {
				owners[id] = append([]wire.Segment(nil), segs...)
			}
			c.mu.Unlock()
			for id, segs := range owners {
				_ = c.with(ctx, u, func(ctx context.Context, conn *cororpc.Conn) error {
					p, err := conn.Ping(ctx, id)
					if err == nil && p.ClientStatus == wire.ClientNeedRemount {
						return conn.ReMountSegment(ctx, segs, id)
					}
					return err
				})
			}
		}
		cancel()
	}
}
