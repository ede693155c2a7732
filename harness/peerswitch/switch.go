// Package peerswitch partitions etcd members from each other one pair and
// one direction at a time, where every member's inbound peer traffic
// arrives through one proxy shared by all its peers and a toxiproxy link
// cannot tell which peer a connection comes from. It runs as a process of
// its own (cmd/peerswitch, a container on the docker runtime), driven over
// its control API (control.go, Remote).
//
// A Switch puts an HTTP proxy in front of each member's peer link. etcd's
// peer requests (rafthttp) name their sender: X-PeerURLs carries the peer
// URLs the sender advertises, which are this switch's own listeners, so
// every attributed request maps to a member. Which way a request's raft
// messages flow follows from its kind: a pipeline or snapshot POST from A
// to B carries A→B messages; a stream GET from A to B is how B sends to A
// (B writes its messages into the response). Cutting A→B refuses and
// closes, at once and from then on, every connection that carries A→B
// messages; the other direction is untouched.
//
// Requests without a sender (etcd's RTT probes and version checks) pass:
// they carry no raft message. Peer TLS hides the headers, so a switch only
// works on plain-HTTP peer links (Available in the fault kind says so).
package peerswitch

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Switch is the peer proxies of one etcd cluster.
type Switch struct {
	mu      sync.Mutex
	members map[string]*member // by name
	byAddr  map[string]string  // listener host:port → member name
	cut     map[pair]bool      // messages from → to are dropped
	active  map[*flow]struct{}
}

type pair struct{ from, to string }

type member struct {
	listen string
	srv    *http.Server
}

// flow is one request in progress at a member's proxy: the raft messages
// it carries go from → to; cancel ends it.
type flow struct {
	p      pair
	cancel context.CancelFunc
}

// New is an empty switch.
func New() *Switch {
	return &Switch{members: map[string]*member{}, byAddr: map[string]string{}, cut: map[pair]bool{}, active: map[*flow]struct{}{}}
}

// Add puts a proxy for member name in front of target (host:port, plain
// HTTP), listening on listen (host:port); it returns the address to
// advertise as the member's peer URL.
func (s *Switch) Add(name, listen, target string) (string, error) {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return "", fmt.Errorf("peer switch for %s: %w", name, err)
	}
	up := &url.URL{Scheme: "http", Host: target}
	rp := httputil.NewSingleHostReverseProxy(up)
	rp.FlushInterval = -1 // stream responses: each raft message as written
	rp.Transport = &http.Transport{
		DialContext:           (&net.Dialer{Timeout: 2 * time.Second}).DialContext,
		ResponseHeaderTimeout: 10 * time.Second,
		MaxIdleConnsPerHost:   16,
	}
	rp.ErrorHandler = func(w http.ResponseWriter, r *http.Request, err error) {
		w.WriteHeader(http.StatusBadGateway)
	}
	m := &member{listen: ln.Addr().String()}
	m.srv = &http.Server{Handler: s.handler(name, rp), ReadHeaderTimeout: 5 * time.Second}
	s.mu.Lock()
	s.members[name] = m
	s.byAddr[m.listen] = name
	s.mu.Unlock()
	go func() { _ = m.srv.Serve(ln) }()
	return m.listen, nil
}

// handler serves member to's proxy.
func (s *Switch) handler(to string, rp *httputil.ReverseProxy) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sender := s.senderOf(r)
		if sender == "" {
			rp.ServeHTTP(w, r)
			return
		}
		p := pair{sender, to}
		if strings.HasPrefix(r.URL.Path, "/raft/stream/") {
			p = pair{to, sender} // the receiver writes its messages into the response
		}
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		f := &flow{p: p, cancel: cancel}
		s.mu.Lock()
		if s.cut[p] {
			s.mu.Unlock()
			panic(http.ErrAbortHandler) // the connection closes: nothing passes
		}
		s.active[f] = struct{}{}
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			delete(s.active, f)
			s.mu.Unlock()
		}()
		rp.ServeHTTP(w, r.WithContext(ctx))
		if ctx.Err() != nil && r.Context().Err() == nil {
			panic(http.ErrAbortHandler) // cut while in progress: close, do not finish the response
		}
	})
}

// senderOf is the member whose advertised peer URL a request names ("": none).
func (s *Switch) senderOf(r *http.Request) string {
	urls := r.Header.Get("X-PeerURLs")
	if urls == "" {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, raw := range strings.Split(urls, ",") {
		u, err := url.Parse(strings.TrimSpace(raw))
		if err != nil {
			continue
		}
		if name, ok := s.byAddr[u.Host]; ok {
			return name
		}
	}
	return ""
}

// ErrUnknownMember: a cut names a member the switch has no proxy for.
var ErrUnknownMember = errors.New("no such etcd member behind the peer switch")

// Cut drops every raft message from → to, from now on: connections that
// carry them are closed now and refused while the cut stands.
func (s *Switch) Cut(from, to string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.known(from, to); err != nil {
		return err
	}
	p := pair{from, to}
	s.cut[p] = true
	for f := range s.active {
		if f.p == p {
			f.cancel()
		}
	}
	return nil
}

// Restore lets messages from → to pass again.
func (s *Switch) Restore(from, to string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.known(from, to); err != nil {
		return err
	}
	delete(s.cut, pair{from, to})
	return nil
}

func (s *Switch) known(names ...string) error {
	for _, n := range names {
		if _, ok := s.members[n]; !ok {
			return fmt.Errorf("%w: %s", ErrUnknownMember, n)
		}
	}
	return nil
}

// Cuts lists the directions cut now, "a→b", sorted.
func (s *Switch) Cuts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for p := range s.cut {
		out = append(out, p.from+"→"+p.to)
	}
	sort.Strings(out)
	return out
}

// Members names the members behind the switch, sorted.
func (s *Switch) Members() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.members))
}

// Close stops every proxy and ends every request in progress.
func (s *Switch) Close() error {
	s.mu.Lock()
	ms := make([]*member, 0, len(s.members))
	for _, m := range s.members {
		ms = append(ms, m)
	}
	for f := range s.active {
		f.cancel()
	}
	s.mu.Unlock()
	var errs []error
	for _, m := range ms {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		if err := m.srv.Shutdown(ctx); err != nil {
			errs = append(errs, m.srv.Close())
		}
		cancel()
	}
	return errors.Join(errs...)
}
