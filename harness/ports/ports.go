// Package ports hands out free TCP ports on 127.0.0.1 for one run, so runs
// can go in parallel and nothing ever binds a fixed port or a non-loopback
// address.
package ports

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Host is the only address the harness binds.
const Host = "127.0.0.1"

// Free returns n distinct ports that were free a moment ago. All n listeners
// are held open together before any is closed, so the n ports differ.
//
// The ports are drawn at random below the kernel's ephemeral range, not
// from it (port 0): the kernel hands ephemeral ports to every outgoing
// connection as its source port, so a port from that range, free when
// drawn, is often taken by some client's connection before the process it
// was meant for binds it ("address already in use" under a busy CI).
//
// A port is free only until its process binds it, and a node that is down
// for a while (killed, restarted later) leaves its port unbound meanwhile.
// Runs in one process (chaos stress --parallel, the swarm) would draw each
// other's ports in those gaps, so Free never hands out a port it handed out
// before in this process, until most of the range has been handed out.
func Free(n int) ([]int, error) {
	ls := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	lo, hi := drawRange()
	out := make([]int, 0, n)
	handedOut.mu.Lock()
	defer handedOut.mu.Unlock()
	for i := 0; i < n; i++ {
		l, err := listenBelowEphemeral(lo, hi, handedOut.has)
		if err != nil {
			return nil, fmt.Errorf("allocate port: %w", err)
		}
		ls = append(ls, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	for _, p := range out {
		handedOut.add(p, (hi-lo)*3/4)
	}
	return out, nil
}

// handedOut is every port Free returned in this process, oldest first: the
// port space is the kernel's, one per process like this set, not a run's.
var handedOut = &portLog{set: map[int]bool{}}

type portLog struct {
	mu    sync.Mutex
	set   map[int]bool
	order []int
}

func (l *portLog) has(p int) bool { return l.set[p] }

// add records p, forgetting the oldest ports once more than limit are held
// (limit < 1: keep at most 1).
func (l *portLog) add(p, limit int) {
	l.set[p] = true
	l.order = append(l.order, p)
	for len(l.order) > max(limit, 1) {
		delete(l.set, l.order[0])
		l.order = l.order[1:]
	}
}

// drawRange is [10000, first ephemeral port), or nothing (0, 0) when the
// ephemeral range starts too low to leave room.
func drawRange() (lo, hi int) {
	lo, hi = 10000, 32768
	if data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(data)); len(f) == 2 {
			if v, err := strconv.Atoi(f[0]); err == nil {
				hi = v
			}
		}
	}
	if hi-lo < 2000 {
		return 0, 0
	}
	return lo, hi
}

// listenBelowEphemeral binds a random free port of [lo, hi) that taken
// does not hold, falling back to one the kernel picks.
func listenBelowEphemeral(lo, hi int, taken func(int) bool) (net.Listener, error) {
	if hi > lo {
		for try := 0; try < 64; try++ {
			port := lo + rand.IntN(hi-lo)
			if taken(port) {
				continue
			}
			if l, err := net.Listen("tcp", net.JoinHostPort(Host, strconv.Itoa(port))); err == nil {
				return l, nil
			}
		}
	}
	return net.Listen("tcp", net.JoinHostPort(Host, "0"))
}

// Addr is "127.0.0.1:port".
func Addr(port int) string { return net.JoinHostPort(Host, fmt.Sprint(port)) }

// On is "host:port": a node's own address on the docker runtime, where
// every container has one (the port numbers still come from Free, so a
// node's ports are the same on both runtimes' shapes).
func On(host string, port int) string { return net.JoinHostPort(host, fmt.Sprint(port)) }
