// Command master is oplogha's reference Mooncake Store master: primary or
// standby by etcd election. Usage: master --config FILE [--KEY VALUE …];
// --help lists every key. Invalid configuration exits 2 with one line per problem.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/oplogha/oplogha/impl/master"
)

func main() {
	for _, a := range os.Args[1:] {
		if a == "-h" || a == "--help" || a == "-help" {
			fmt.Print(master.FlagHelp())
			return
		}
	}
	cfg, err := master.LoadConfig(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "master:", err)
		os.Exit(2)
	}
	if errs := cfg.Validate(); len(errs) > 0 {
		for _, e := range errs {
			fmt.Fprintln(os.Stderr, "master: config:", e)
		}
		os.Exit(2)
	}
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.LogLevel))
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	m, err := master.New(cfg, log)
	if err != nil {
		var ce *master.ConfigError
		if errors.As(err, &ce) {
			for _, e := range ce.Errs {
				fmt.Fprintln(os.Stderr, "master: config:", e)
			}
			os.Exit(2)
		}
		fmt.Fprintln(os.Stderr, "master:", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := m.Run(ctx); err != nil {
		log.Error("exit", "code", master.ErrorCode(err), "err", err)
		fmt.Fprintln(os.Stderr, "master:", err)
		os.Exit(1)
	}
}
