// Package ports hands out free TCP ports on 127.0.0.1 for one run, so runs
// can go in parallel and nothing ever binds a fixed port or a non-loopback
// address.
package ports

import (
	"fmt"
	"net"
)

// Host is the only address the harness binds.
const Host = "127.0.0.1"

// Free returns n distinct ports that were free a moment ago. All n listeners
// are held open together before any is closed, so the n ports differ.
func Free(n int) ([]int, error) {
	ls := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	out := make([]int, 0, n)
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", net.JoinHostPort(Host, "0"))
		if err != nil {
			return nil, fmt.Errorf("allocate port: %w", err)
		}
		ls = append(ls, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}

// Addr is "127.0.0.1:port".
func Addr(port int) string { return net.JoinHostPort(Host, fmt.Sprint(port)) }

// On is "host:port": a node's own address on the docker runtime, where
// every container has one (the port numbers still come from Free, so a
// node's ports are the same on both runtimes' shapes).
func On(host string, port int) string { return net.JoinHostPort(host, fmt.Sprint(port)) }
