// Package toxi runs a toxiproxy server for one run and names its links. Every
// link of a cluster (each etcd member's inbound peer traffic, each master's
// connection to each etcd member and to S3, each master's client API) is a
// proxy, so any of them can be cut, slowed, reset or throttled.
package toxi

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"

	"github.com/oplogha/oplogha/harness/ports"
	"github.com/oplogha/oplogha/harness/proc"
)

// Server is a running toxiproxy.
type Server struct {
	API    string // host:port of the control API
	client *toxiproxy.Client

	host string // where the proxies listen
	// freePort draws a listen port for a new proxy (freePort; a test's own).
	freePort func() (int, error)
	mu       sync.Mutex
	links    map[string]*Link
}

// Start runs the toxiproxy binary with its API on a free port; seed makes its
// random toxics (toxicity < 1) reproducible.
func Start(ctx context.Context, group *proc.Group, binary, dir string, seed int64) (*Server, error) {
	ps, err := ports.Free(1)
	if err != nil {
		return nil, err
	}
	host := group.Host("toxiproxy")
	api := ports.On(host, ps[0])
	_, err = group.Start(proc.Spec{Name: "toxiproxy", Path: binary, Log: filepath.Join(dir, "toxiproxy.log"), Dir: dir,
		Args: []string{"-host", host, "-port", fmt.Sprint(ps[0]), "-seed", fmt.Sprint(seed)}})
	if err != nil {
		return nil, err
	}
	s := &Server{API: api, host: host, client: toxiproxy.NewClient(api), links: map[string]*Link{}, freePort: freePort}
	deadline := time.Now().Add(15 * time.Second)
	for {
		if _, err := s.client.Version(); err == nil {
			return s, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, fmt.Errorf("toxiproxy API %s not answering", api)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// freePort draws one port from ports.Free.
func freePort() (int, error) {
	ps, err := ports.Free(1)
	if err != nil {
		return 0, err
	}
	return ps[0], nil
}

// addAttempts bounds the ports Add tries for one proxy.
const addAttempts = 4

// Link is one proxied connection path.
type Link struct {
	Name     string `json:"name"`
	Listen   string `json:"listen"`   // what clients dial
	Upstream string `json:"upstream"` // the real endpoint
	proxy    *toxiproxy.Proxy
}

// Add creates a proxy named name in front of upstream, on a free port.
//
// A port is free to the kernel when it is drawn and bound by toxiproxy a
// moment later; another process on the machine may bind it in between. A
// proxy refused with "address already in use" is created again on another
// port (up to addAttempts in all), so such a race costs a retry, not a run.
func (s *Server) Add(name, upstream string) (*Link, error) {
	var (
		p      *toxiproxy.Proxy
		listen string
	)
	for attempt := 1; ; attempt++ {
		port, err := s.freePort()
		if err != nil {
			return nil, err
		}
		listen = ports.On(s.host, port)
		p, err = s.client.CreateProxy(name, listen, upstream)
		if err == nil {
			break
		}
		if attempt == addAttempts || !strings.Contains(err.Error(), "address already in use") {
			return nil, fmt.Errorf("create proxy %s → %s: %w", name, upstream, err)
		}
	}
	l := &Link{Name: name, Listen: listen, Upstream: upstream, proxy: p}
	s.mu.Lock()
	s.links[name] = l
	s.mu.Unlock()
	return l, nil
}

// Link returns the link called name.
func (s *Server) Link(name string) (*Link, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.links[name]
	return l, ok
}

// Links lists every link by name.
func (s *Server) Links() []*Link {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Link, 0, len(s.links))
	for _, l := range s.links {
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Down cuts the link: existing connections close and new ones are refused.
func (l *Link) Down() error {
	if err := l.proxy.Disable(); err != nil {
		return fmt.Errorf("link %s down: %w", l.Name, err)
	}
	return nil
}

// Up restores a link cut by Down.
func (l *Link) Up() error {
	if err := l.proxy.Enable(); err != nil {
		return fmt.Errorf("link %s up: %w", l.Name, err)
	}
	return nil
}

// AddToxic adds a toxic (latency, timeout, reset_peer, bandwidth, slicer,
// limit_data, …) on one stream ("upstream" or "downstream").
func (l *Link) AddToxic(name, kind, stream string, toxicity float32, attrs map[string]any) error {
	if _, err := l.proxy.AddToxic(name, kind, stream, toxicity, toxiproxy.Attributes(attrs)); err != nil {
		return fmt.Errorf("link %s: add %s toxic: %w", l.Name, kind, err)
	}
	return nil
}

// RemoveToxic removes a toxic by name.
func (l *Link) RemoveToxic(name string) error {
	if err := l.proxy.RemoveToxic(name); err != nil {
		return fmt.Errorf("link %s: remove toxic %s: %w", l.Name, name, err)
	}
	return nil
}

// Reset removes every toxic and re-enables every link.
func (s *Server) Reset() error { return s.client.ResetState() }
