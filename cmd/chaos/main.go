// Command chaos runs oplogha's chaos and end-to-end scenarios and works with
// their artifact bundles. Subcommands: tools, demo (more arrive with the harness).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

type command struct {
	name, usage string
	run         func(ctx context.Context, args []string) error
}

func commands() []command {
	return []command{
		{"tools", "tools [--path NAME]  build (or find) the pinned tool binaries in the cache", cmdTools},
		{"demo", "demo [--members N]  start a real etcd cluster, kill its leader, show re-election, stop", cmdDemo},
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: chaos COMMAND [flags]")
	for _, c := range commands() {
		fmt.Fprintln(os.Stderr, "  "+c.usage)
	}
}

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	for _, c := range commands() {
		if c.name == os.Args[1] {
			if err := c.run(ctx, os.Args[2:]); err != nil {
				fmt.Fprintln(os.Stderr, "chaos "+c.name+": "+err.Error())
				os.Exit(1)
			}
			return
		}
	}
	fmt.Fprintf(os.Stderr, "chaos: unknown command %q\n", os.Args[1])
	usage()
	os.Exit(2)
}
