package masters

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/oplogha/oplogha/harness/client"
)

// Health polling: every node is polled on a goroutine of its own, so a node
// that does not answer (frozen by SIGSTOP, cut off, stuck) never delays
// what the harness sees of the others. A caller of Health never waits on a
// request either: it takes each node's first reading begun after its call,
// and a node whose request has gone unanswered for NoAnswer is reported
// "down" at once, with how long it has been silent.
const (
	// PollInterval is the pause between two health requests to one node.
	PollInterval = 50 * time.Millisecond
	// NoAnswer is how long a node's request may go unanswered before the
	// node is reported down (its request goes on, up to RequestTimeout).
	NoAnswer = 300 * time.Millisecond
	// RequestTimeout bounds one health request.
	RequestTimeout = 2 * time.Second
)

// Reading is one node's health as a poll found it.
type Reading struct {
	Health client.Health
	// Asked is when the request was sent, Answered when its answer (or its
	// failure) came back. A node not running is read without a request.
	Asked, Answered time.Time
}

// nodeMonitor is one node's poller state.
type nodeMonitor struct {
	mu   sync.Mutex
	last Reading
	// asking is when the request in flight was sent (zero: none).
	asking time.Time
	// silentSince is when the node stopped answering (a request failed or
	// timed out; zero: it answers).
	silentSince time.Time
	silentWhy   string
	// kick wakes the poller for a reading now (a caller wants one begun
	// after its call, and the next would come only at the next interval).
	kick chan struct{}
}

// monitor polls every node of a set.
type monitor struct {
	set   *Set
	nodes []*nodeMonitor
	stop  chan struct{}
	once  sync.Once
	// changed is closed (and replaced) at every new reading of any node.
	chMu    sync.Mutex
	changed chan struct{}
}

func newMonitor(s *Set) *monitor {
	m := &monitor{set: s, stop: make(chan struct{}), changed: make(chan struct{})}
	for range s.Nodes {
		m.nodes = append(m.nodes, &nodeMonitor{kick: make(chan struct{}, 1)})
	}
	for i, n := range s.Nodes {
		go m.poll(n, m.nodes[i])
	}
	return m
}

func (m *monitor) close() { m.once.Do(func() { close(m.stop) }) }

// poll reads n's health every PollInterval until the set is closed.
func (m *monitor) poll(n *Node, nm *nodeMonitor) {
	for {
		select {
		case <-m.stop:
			return
		default:
		}
		if m.set.group.Closing() {
			m.close()
			return
		}
		now := time.Now()
		if p, ok := m.set.group.Get(n.Name); ok && !p.Running() {
			// No request: on the docker runtime a dead node's address
			// answers nothing, and a request would wait out its timeout.
			nm.mu.Lock()
			nm.last = Reading{Health: client.Health{NodeID: n.Name, Role: "down", ApplyError: "process not running"}, Asked: now, Answered: now}
			nm.silentSince, nm.silentWhy = time.Time{}, ""
			nm.mu.Unlock()
		} else {
			nm.mu.Lock()
			nm.asking = now
			nm.mu.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), RequestTimeout)
			h, err := m.set.opts.Driver.Health(ctx, n)
			cancel()
			done := time.Now()
			nm.mu.Lock()
			nm.asking = time.Time{}
			if err != nil {
				h = client.Health{NodeID: n.Name, Role: "down", ApplyError: err.Error()}
				if nm.silentSince.IsZero() {
					nm.silentSince = now
				}
				nm.silentWhy = err.Error()
			} else {
				nm.silentSince, nm.silentWhy = time.Time{}, ""
			}
			nm.last = Reading{Health: h, Asked: now, Answered: done}
			nm.mu.Unlock()
		}
		m.notify()
		select {
		case <-m.stop:
			return
		case <-nm.kick:
		case <-time.After(PollInterval):
		}
	}
}

func (m *monitor) notify() {
	m.chMu.Lock()
	close(m.changed)
	m.changed = make(chan struct{})
	m.chMu.Unlock()
}

// Changed is closed at the next new reading of any node.
func (m *monitor) Changed() <-chan struct{} {
	m.chMu.Lock()
	defer m.chMu.Unlock()
	return m.changed
}

// now is node i's reading as things stand, without waiting: its newest
// answer, or down when it has gone silent.
func (m *monitor) now(i int, at time.Time) (Reading, bool) {
	nm := m.nodes[i]
	nm.mu.Lock()
	defer nm.mu.Unlock()
	name := m.set.Nodes[i].Name
	if !nm.silentSince.IsZero() {
		return silent(name, nm.silentSince, nm.silentWhy, at), true
	}
	if !nm.asking.IsZero() && at.Sub(nm.asking) >= NoAnswer {
		return silent(name, nm.asking, "", at), true
	}
	return nm.last, !nm.last.Asked.IsZero()
}

func silent(name string, since time.Time, why string, at time.Time) Reading {
	detail := fmt.Sprintf("no answer for %v", at.Sub(since).Round(time.Millisecond))
	if why != "" {
		detail += ": " + why
	}
	return Reading{Health: client.Health{NodeID: name, Role: "down", ApplyError: detail}, Asked: since, Answered: at}
}

// fresh is node i's first reading begun at or after from, waiting for it
// only while the node answers: a node silent since before from, or whose
// request goes unanswered for NoAnswer, is down at once.
func (m *monitor) fresh(ctx context.Context, i int, from time.Time) Reading {
	for {
		ch := m.Changed()
		nm := m.nodes[i]
		nm.mu.Lock()
		last, asking, silentSince, why := nm.last, nm.asking, nm.silentSince, nm.silentWhy
		nm.mu.Unlock()
		name := m.set.Nodes[i].Name
		now := time.Now()
		switch {
		case !last.Asked.Before(from):
			return last
		case !silentSince.IsZero():
			return silent(name, silentSince, why, now)
		case !asking.IsZero() && now.Sub(asking) >= NoAnswer:
			return silent(name, asking, "", now)
		}
		wait := PollInterval + NoAnswer
		if !asking.IsZero() {
			wait = NoAnswer - now.Sub(asking)
		} else {
			// no request in flight: ask now rather than at the next interval
			select {
			case nm.kick <- struct{}{}:
			default:
			}
		}
		t := time.NewTimer(wait)
		select {
		case <-ch:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			if last.Asked.IsZero() {
				return Reading{Health: client.Health{NodeID: name, Role: "down", ApplyError: ctx.Err().Error()}, Asked: now, Answered: now}
			}
			return last
		case <-m.stop:
			t.Stop()
			return Reading{Health: client.Health{NodeID: name, Role: "down", ApplyError: "no longer polled"}, Asked: now, Answered: now}
		}
		t.Stop()
	}
}

// answered is node i's first reading begun at or after from whose request
// came back (an answer, or its failure at RequestTimeout): no node is
// called down for being slow to answer. A judgement — an assert — reads
// this; a wait or the timeline reads fresh, which never waits on a silent
// node. It is bounded by RequestTimeout and a poll interval.
func (m *monitor) answered(ctx context.Context, i int, from time.Time) Reading {
	deadline := time.NewTimer(RequestTimeout + PollInterval + NoAnswer)
	defer deadline.Stop()
	for {
		ch := m.Changed()
		nm := m.nodes[i]
		nm.mu.Lock()
		last, asking := nm.last, nm.asking
		nm.mu.Unlock()
		if !last.Asked.Before(from) {
			return last
		}
		if asking.IsZero() {
			select {
			case nm.kick <- struct{}{}:
			default:
			}
		}
		select {
		case <-ch:
		case <-deadline.C:
			return m.fresh(ctx, i, from)
		case <-ctx.Done():
			return m.fresh(ctx, i, from)
		case <-m.stop:
			now := time.Now()
			return Reading{Health: client.Health{NodeID: m.set.Nodes[i].Name, Role: "down", ApplyError: "no longer polled"}, Asked: now, Answered: now}
		}
	}
}
