// Command chaos runs oplogha's chaos and end-to-end scenarios and works with
// their artifact bundles:
//
//	chaos run FILE|DIR…    run scenarios (--tier, --seeds, --seed, --out, --parallel, --junit, --keep, --screenshot)
//	chaos stress FILE|DIR… each scenario many times: pass rate, failures grouped by first failing audit
//	chaos plan FILE|DIR…   how a batch splits into shards (--shard K/N on run, swarm, mutants)
//	chaos swarm            run scenarios drawn at random from a seed (swarm testing)
//	chaos shrink BUNDLE    reduce a failing bundle's scenario to a smaller one that fails the same way
//	chaos signatures DIR…  group failing bundles by failure signature (and shrink each once)
//	chaos list [DIR]       list scenarios with tier and what they cover
//	chaos replay BUNDLE    run a bundle's scenario again with its seed
//	chaos audit BUNDLE…    re-run the audits offline and compare with the recorded verdicts
//	chaos gate BUNDLE…     exit non-zero unless every audit of every bundle passed
//	chaos report BUNDLE    regenerate summary.md and report.html (--screenshot: and report.png)
//	chaos up               start a dev cluster (snapshots in versitygw) and keep it until Ctrl-C
//	chaos tools            build (or find) the pinned tool binaries; say whether Chromium is there
//	chaos mutants          run the mutant corpus (tests/mutants) against the scenarios each names
//
// The operator's commands (reset of a namespace, legacy snapshot
// inspection) are oplogctl's (cmd/oplogctl).
package main

import (
	"context"
	"errors"
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
		{"run", "run FILE|DIR… [--tier pr|nightly] [--seeds N] [--seed N] [--parallel N] [--junit FILE] [--out DIR] [--keep] " +
			"[--screenshot]   run scenarios, one bundle each", cmdRun},
		{"stress", "stress FILE|DIR… [--runs N] [--seed S] [--parallel N] [--table FILE]   each scenario N times on " +
			"consecutive seeds: pass rate, failures grouped", cmdStress},
		{"plan", "plan FILE|DIR… --shards N [--tier T] [--seeds S] [--swarm-runs R] [--swarm-seed X]   which shard runs what " +
			"(chaos run/swarm/mutants --shard K/N)", cmdPlan},
		{"swarm", "swarm --seed S --runs N --budget D [--master K] [--moves-of K] [--shrink N] [--parallel N] [--junit FILE] [--dry-run]   " +
			"random shapes, configs and faults drawn from S that master kind K can take; failures grouped by signature", cmdSwarm},
		{"signatures", "signatures DIR… [--reaudit] [--shrink N] [--only TEXT] [--out DIR]   failing bundles grouped by finding; --shrink shrinks each once and runs it again", cmdSignatures},
		{"shrink", "shrink BUNDLE [--max-runs N]                             remove steps while the run still shows its failure signature", cmdShrink},
		{"list", "list [DIR] [--coverage] [--faults] [--capabilities]      scenarios with tier and coverage; --faults the fault kinds; --capabilities the master kinds", cmdList},
		{"compare", "compare KIND=JUNIT… [--out FILE]                          the same scenarios' verdicts per master kind, side by side (markdown)", cmdCompare},
		{"replay", "replay BUNDLE [--out DIR] [--keep]                       same scenario, same seed, same steps; exit 0 both passed, 1 the failure reproduced, 3 not reproduced, 4 a pass that now fails, 2 could not replay", cmdReplay},
		{"audit", "audit BUNDLE…                                            re-run the audits offline", cmdAudit},
		{"gate", "gate BUNDLE…                                             fail unless every audit of every bundle passed", cmdGate},
		{"report", "report BUNDLE [--screenshot]                             regenerate summary.md and report.html (and report.png, checked in Chromium)", cmdReport},
		{"up", "up [--etcd N] [--masters N] [--s3 versitygw|gofakes3|none]  a dev cluster until Ctrl-C, and the oplogctl verify line for it", cmdUp},
		{"bench-report", "bench-report [--in FILE] [--out DIR] [--elapsed D]       results.md and results.json from make bench's figures", cmdBenchReport},
		{"mutants", "mutants [--dir tests/mutants] [--only A,B] [--out DIR]          apply each mutant to a copy of the tree " +
			"and run what it names; fail unless a scenario kills every one", cmdMutants},
		{"gremlins-report", "gremlins-report [--in DIR] [--min-efficacy P]               one table from make gremlins' per-package results", cmdGremlinsReport},
		{"tools", "tools [--path NAME]                                      build the pinned tool binaries; find Chromium", cmdTools},
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: chaos COMMAND [flags]")
	for _, c := range commands() {
		fmt.Fprintln(os.Stderr, "  "+c.usage)
	}
}

// errFailed is returned by commands whose verdict is a failure already printed.
var errFailed = errors.New("failed")

func main() {
	if len(os.Args) < 2 || os.Args[1] == "-h" || os.Args[1] == "--help" || os.Args[1] == "help" {
		usage()
		if len(os.Args) < 2 {
			os.Exit(2)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	for _, c := range commands() {
		if c.name == os.Args[1] {
			if err := c.run(ctx, os.Args[2:]); err != nil {
				if code := replayExitCode(err); code != 0 {
					if code == 2 {
						fmt.Fprintln(os.Stderr, "chaos "+c.name+": "+err.Error())
					}
					os.Exit(code)
				}
				if !errors.Is(err, errFailed) {
					fmt.Fprintln(os.Stderr, "chaos "+c.name+": "+err.Error())
				}
				os.Exit(1)
			}
			return
		}
	}
	if os.Args[1] == "reset" {
		fmt.Fprintln(os.Stderr, "chaos: reset moved to the operator's CLI: oplogctl reset (go build ./cmd/oplogctl)")
		os.Exit(2)
	}
	fmt.Fprintf(os.Stderr, "chaos: unknown command %q\n", os.Args[1])
	usage()
	os.Exit(2)
}
