// Command peerswitch is the harness's peer switch as a process of its own
// (harness/peerswitch): proxies in front of etcd members' peer links that
// cut pairs of members apart one direction at a time, driven over a
// control API. The harness starts it on either runtime — beside the
// members on the process runtime, as a container on the docker runtime's
// network — and stops it by its PID. Usage: peerswitch -listen HOST:PORT.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/oplogha/oplogha/harness/peerswitch"
)

func main() {
	listen := flag.String("listen", "", "host:port of the control API")
	flag.Parse()
	if *listen == "" {
		fmt.Fprintln(os.Stderr, "peerswitch: -listen HOST:PORT is required")
		os.Exit(2)
	}
	sw := peerswitch.New()
	srv := &http.Server{Addr: *listen, Handler: sw.ControlHandler(), ReadHeaderTimeout: 5 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	fmt.Fprintf(os.Stderr, "peerswitch: control API on %s\n", *listen)
	select {
	case err := <-errc:
		fmt.Fprintln(os.Stderr, "peerswitch:", err)
		os.Exit(1)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := errors.Join(srv.Shutdown(sctx), sw.Close())
	if err != nil {
		fmt.Fprintln(os.Stderr, "peerswitch:", err)
	}
}
