package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/oplogha/oplogha/harness/mutants"
	"github.com/oplogha/oplogha/harness/plan"
)

// cmdPlan prints how a batch splits over --shards machines: for each shard,
// the scenario runs (name and seed), the swarm run indices and the mutants
// it owns. Each machine of a CI matrix runs the same command lines with
// --shard K/N and so owns exactly its column.
func cmdPlan(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("plan", flag.ContinueOnError)
	shards := fs.Int("shards", 16, "how many shards")
	tier := fs.String("tier", "", "only scenarios of this tier: pr, or nightly (pr and nightly)")
	seeds := fs.Int("seeds", 1, "runs per scenario, with seeds seed, seed+1000, … (as chaos run --seeds)")
	swarmRuns := fs.Int("swarm-runs", 0, "swarm runs in the batch (as chaos swarm --runs)")
	mutantsDir := fs.String("mutants", "", "a mutant corpus in the batch (as chaos mutants --dir)")
	paths, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if *shards < 1 {
		return fmt.Errorf("--shards must be at least 1")
	}
	var runs []string
	if len(paths) > 0 {
		scs, err := planRuns(paths, runPlan{tier: *tier, seeds: *seeds, seedStep: 1000})
		if err != nil {
			return err
		}
		for _, sc := range scs {
			runs = append(runs, fmt.Sprintf("%s@%d", sc.Name, sc.Seed))
		}
	}
	var corpus []string
	if *mutantsDir != "" {
		ms, err := mutants.Load(*mutantsDir)
		if err != nil {
			return err
		}
		for _, m := range ms {
			corpus = append(corpus, m.Name)
		}
	}
	fmt.Printf("%d scenario runs, %d swarm runs, %d mutants over %d shards\n", len(runs), *swarmRuns, len(corpus), *shards)
	for k := 1; k <= *shards; k++ {
		sh := plan.Shard{K: k, N: *shards}
		mine := plan.Pick(sh, runs)
		swarmMine := 0
		for i := 0; i < *swarmRuns; i++ {
			if sh.Owns(i) {
				swarmMine++
			}
		}
		ms := plan.Pick(sh, corpus)
		fmt.Printf("shard %v: %d runs, %d swarm runs, %d mutants\n", sh, len(mine), swarmMine, len(ms))
		if len(mine) > 0 {
			fmt.Printf("  runs: %s\n", strings.Join(mine, " "))
		}
		if len(ms) > 0 {
			fmt.Printf("  mutants: %s\n", strings.Join(ms, " "))
		}
	}
	return nil
}
