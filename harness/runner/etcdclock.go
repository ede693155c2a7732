package runner

import (
	"context"
	"fmt"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/oplogha/oplogha/impl/contract/batchlog"
	"github.com/oplogha/oplogha/impl/contract/keyspace"
)

// etcdClock is the runner's running view of etcd: its revision and the
// durable prefix's batch, read linearizably every clockInterval in the
// background. A step records where it acted from what the clock last read
// (before acting) or reads next (after acting), so no fault, heal, restart
// or wait blocks on an etcd that has lost its quorum: what the clock could
// not read within its bound is recorded as unknown, with why.
type etcdClock struct {
	mu sync.Mutex
	// last is the newest successful reading.
	last clockReading
	// failing is why the newest attempt failed (""); failingSince when
	// the attempts began to fail.
	failing      string
	failingSince time.Time
	// moved is when a reading first saw the durable prefix's batch of the
	// newest reading (the prefix's last move, as far as the clock saw).
	moved time.Time
	// waiters are told of every reading.
	changed chan struct{}
	stop    chan struct{}
	done    chan struct{}
}

// clockReading is one successful read.
type clockReading struct {
	Rev   int64
	Batch uint64 // the durable prefix's batch (0: none, or undecodable)
	// Asked and Answered bracket the read's linearization point.
	Asked, Answered time.Time
}

const (
	// clockInterval is the pause between two reads.
	clockInterval = 50 * time.Millisecond
	// clockReadTimeout bounds one read.
	clockReadTimeout = time.Second
	// clockFresh is how old the reading before an act may be and still
	// stand for etcd's revision as the act began.
	clockFresh = 500 * time.Millisecond
	// clockAfterWait is how long a step waits for the first reading begun
	// after its act before it records the revision as unknown.
	clockAfterWait = time.Second
)

// startClock reads etcd through cli until stop is called.
func startClock(cli *clientv3.Client, ks keyspace.Keyspace) *etcdClock {
	c := &etcdClock{changed: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	go c.run(cli, ks)
	return c
}

func (c *etcdClock) close() {
	select {
	case <-c.stop:
	default:
		close(c.stop)
	}
	<-c.done
}

func (c *etcdClock) run(cli *clientv3.Client, ks keyspace.Keyspace) {
	defer close(c.done)
	for {
		asked := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), clockReadTimeout)
		resp, err := cli.Get(ctx, ks.DurablePrefix())
		cancel()
		c.mu.Lock()
		if err != nil {
			if c.failing == "" {
				c.failingSince = asked
			}
			c.failing = err.Error()
		} else {
			rd := clockReading{Rev: resp.Header.Revision, Asked: asked, Answered: time.Now()}
			if len(resp.Kvs) > 0 {
				if p, derr := batchlog.DecodeDurablePrefix(resp.Kvs[0].Value); derr == nil {
					rd.Batch = p.BatchID
				}
			}
			if rd.Batch != c.last.Batch || c.moved.IsZero() {
				c.moved = rd.Answered
			}
			c.last, c.failing = rd, ""
		}
		close(c.changed)
		c.changed = make(chan struct{})
		c.mu.Unlock()
		select {
		case <-c.stop:
			return
		case <-time.After(clockInterval):
		}
	}
}

// lastMove is when the clock first saw the durable prefix at its batch now.
func (c *etcdClock) lastMove() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.moved
}

// now is the newest reading, and why the clock cannot read etcd now ("":
// it can).
func (c *etcdClock) now() (clockReading, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last, c.failingWhy()
}

func (c *etcdClock) failingWhy() string {
	if c.failing == "" {
		return ""
	}
	return fmt.Sprintf("etcd unreadable for %v: %s", time.Since(c.failingSince).Round(time.Millisecond), c.failing)
}

// before is the reading that stands for etcd as an act at t began: the
// newest one answered before t, when it is no older than clockFresh; else
// a zero reading and why. It never waits.
func (c *etcdClock) before(t time.Time) (clockReading, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	rd := c.last
	switch {
	case rd.Answered.IsZero():
		return clockReading{}, "etcd's revision unknown: not read yet" + suffix(c.failingWhy())
	case rd.Answered.After(t):
		return clockReading{}, "etcd's revision unknown: no reading before the act"
	case t.Sub(rd.Answered) > clockFresh:
		return clockReading{}, fmt.Sprintf("etcd's revision unknown: last read %v before the act (revision %d)%s",
			t.Sub(rd.Answered).Round(time.Millisecond), rd.Rev, suffix(c.failingWhy()))
	}
	return rd, ""
}

func suffix(why string) string {
	if why == "" {
		return ""
	}
	return "; " + why
}

// after is the first reading begun after t, waiting up to wait (or until
// ctx ends or the clock stops); ok is false when none came, and why says
// what the clock saw instead.
func (c *etcdClock) after(ctx context.Context, t time.Time, wait time.Duration) (rd clockReading, ok bool, why string) {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		c.mu.Lock()
		rd, ch := c.last, c.changed
		c.mu.Unlock()
		if rd.Asked.After(t) {
			return rd, true, ""
		}
		select {
		case <-ch:
			continue
		case <-timer.C:
		case <-ctx.Done():
		case <-c.stop:
		}
		c.mu.Lock()
		why = c.failingWhy()
		c.mu.Unlock()
		if why == "" {
			why = fmt.Sprintf("no reading of etcd within %v", wait)
		}
		return clockReading{}, false, why
	}
}
