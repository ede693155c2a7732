package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/oplogha/oplogha/harness/audit"
	"github.com/oplogha/oplogha/harness/bin"
	"github.com/oplogha/oplogha/harness/bundle"
	"github.com/oplogha/oplogha/harness/plan"
	"github.com/oplogha/oplogha/harness/runner"
	"github.com/oplogha/oplogha/harness/scenario"
	"github.com/oplogha/oplogha/harness/shrink"
	"github.com/oplogha/oplogha/harness/swarm"
)

// cmdSwarm draws and runs random scenarios from one seed until the run
// count or the time budget is reached (no new run starts after the budget).
func cmdSwarm(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("swarm", flag.ContinueOnError)
	seed := fs.Int64("seed", 1, "swarm seed: run i draws from (seed, i)")
	runs := fs.Int("runs", 50, "how many runs")
	budget := fs.Duration("budget", 30*time.Minute, "start no new run after this long")
	out := fs.String("out", "artifacts/swarm", "directory for bundles")
	parallel := fs.Int("parallel", 1, "runs at once")
	first := fs.Int("from", 0, "first run index (to resume a swarm)")
	junit := fs.String("junit", "", "write a JUnit report here")
	dry := fs.Bool("dry-run", false, "print the drawn scenarios' shapes and moves, run nothing")
	shardSpec := fs.String("shard", "", "run only shard K/N of the runs (see chaos plan): every shard draws the same runs and keeps its own")
	if _, err := parseInterleaved(fs, args); err != nil {
		return err
	}
	shard, err := plan.ParseShard(*shardSpec)
	if err != nil {
		return err
	}
	if *runs < 1 {
		return fmt.Errorf("--runs must be at least 1")
	}
	var scs []*scenario.Scenario
	for i := *first; i < *first+*runs; i++ {
		if !shard.Owns(i - *first) {
			continue
		}
		sc, err := swarm.Draw(*seed, i)
		if err != nil {
			return err
		}
		scs = append(scs, sc)
		if *dry {
			fmt.Printf("%s seed %d: %s\n", sc.Name, sc.Seed, strings.TrimPrefix(sc.Description, fmt.Sprintf("drawn by chaos swarm --seed %d ", *seed)))
		}
	}
	if *dry {
		return nil
	}
	fmt.Printf("swarm seed %d: %d runs (shard %v of %d from %d), budget %v, %d at a time, bundles in %s\n", *seed, len(scs), shard, *runs,
		*first, *budget, *parallel, *out)
	_, err = runBatch(ctx, scs, batchOptions{out: *out, parallel: *parallel, budget: *budget, junit: *junit, swarmSeed: *seed})
	return err
}

// batchOptions configure a batch of runs (chaos run, chaos swarm).
type batchOptions struct {
	out       string
	parallel  int
	keep      bool
	replayed  string
	budget    time.Duration // 0: none
	junit     string
	swarmSeed int64 // for the replay hint
	// publicImages: the docker runtime runs etcd and toxiproxy from public images.
	publicImages bool
	// anchors and strict: a replay's faults land on the original's events.
	anchors      map[int]audit.Anchor
	strict       bool
	firstPrimary string
	// screenshot: each report.html is opened in Chromium and report.png written.
	screenshot bool
	// master overrides every scenario's master kind; masterBinary names
	// upstream's binary (default MOONCAKE_MASTER).
	master, masterBinary string
}

// runBatch runs scenarios up to parallel at a time, prints one verdict per
// run and a progress count, writes JUnit when asked, and fails if any run
// failed. After the budget no new run starts; those not started are listed.
func runBatch(ctx context.Context, scs []*scenario.Scenario, o batchOptions) ([]*runner.Outcome, error) {
	cache, err := bin.NewCache(".", os.Stderr)
	if err != nil {
		return nil, err
	}
	if _, err := cache.All(ctx); err != nil {
		return nil, err
	}
	o.parallel = max(o.parallel, 1)
	sem := make(chan struct{}, o.parallel)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var outcomes []*runner.Outcome
	var failed, unsupported []string
	skipped := 0
	start := time.Now()
	done := 0
	for _, sc := range scs {
		sem <- struct{}{}
		if ctx.Err() != nil || (o.budget > 0 && time.Since(start) > o.budget) {
			<-sem
			skipped++
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			opts := runner.Options{Out: o.out, Keep: o.keep, Cache: cache, Replayed: o.replayed, PublicImages: o.publicImages,
				Anchors: o.anchors, Strict: o.strict, FirstPrimary: o.firstPrimary, Screenshot: o.screenshot,
				Master: o.master, MasterBinary: o.masterBinary}
			if o.parallel == 1 {
				opts.Progress = os.Stderr
			}
			out, err := runner.Run(ctx, sc, opts)
			mu.Lock()
			defer mu.Unlock()
			done++
			if err != nil {
				failed = append(failed, fmt.Sprintf("%s seed %d: %v", sc.Name, sc.Seed, err))
				fmt.Printf("ERROR %s seed=%d: %v\n", sc.Name, sc.Seed, err)
				return
			}
			outcomes = append(outcomes, out)
			printOutcome(out)
			if out.Skipped != "" {
				unsupported = append(unsupported, fmt.Sprintf("%s seed %d: %s", sc.Name, sc.Seed, out.Skipped))
			}
			if !out.Pass {
				failed = append(failed, fmt.Sprintf("%s seed %d: %s (replay: chaos replay %s)", sc.Name, sc.Seed, failedAudits(out), out.Archive))
			}
			if len(scs) > 1 {
				fmt.Printf("[%d/%d done, %d failed, %.0fs]\n", done, len(scs), len(failed), time.Since(start).Seconds())
			}
		}()
	}
	wg.Wait()
	if o.junit != "" {
		if err := writeJUnit(o.junit, outcomes, time.Since(start)); err != nil {
			return outcomes, err
		}
	}
	if len(scs) > 1 {
		fmt.Printf("%d runs, %d failed, %d skipped (the master lacks what they need), %d not started (budget), %.1fs\n",
			done, len(failed), len(unsupported), skipped, time.Since(start).Seconds())
	}
	sort.Strings(unsupported)
	for _, u := range unsupported {
		fmt.Println("  SKIPPED " + u)
	}
	for _, f := range failed {
		fmt.Println("  FAILED " + f)
	}
	if len(failed) > 0 {
		return outcomes, errFailed
	}
	return outcomes, nil
}

func failedAudits(o *runner.Outcome) string {
	var names []string
	for _, r := range o.Results {
		if !r.Pass {
			names = append(names, r.Name)
		}
	}
	if o.Err != nil {
		names = append(names, "run error: "+o.Err.Error())
	}
	return strings.Join(names, ", ")
}

// cmdShrink reduces a failing bundle's scenario: it reruns candidates with
// a step (and the steps naming it) removed, keeping each removal after
// which the same audits still fail, and writes the smallest failing
// scenario next to the bundles.
func cmdShrink(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("shrink", flag.ContinueOnError)
	out := fs.String("out", "artifacts/shrink", "directory for candidate bundles and the result")
	maxRuns := fs.Int("max-runs", 30, "at most this many candidate runs")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("shrink takes one failing bundle")
	}
	b, err := bundle.Open(pos[0])
	if err != nil {
		return err
	}
	var want []string
	for _, r := range b.Results {
		if !r.Pass {
			want = append(want, r.Name)
		}
	}
	if b.Meta.Error != "" {
		want = append(want, "run-error")
	}
	if len(want) == 0 {
		return fmt.Errorf("%s passed: nothing to shrink", pos[0])
	}
	cache, err := bin.NewCache(".", os.Stderr)
	if err != nil {
		return err
	}
	fmt.Printf("shrinking %s (%d steps; failing: %s), at most %d runs\n", b.Scenario.Name, len(b.Scenario.Steps), strings.Join(want, ", "), *maxRuns)
	// Each candidate's faults land on their original's events, as a replay's
	// do, so a candidate fails the same way for the same reason.
	anchors, firstPrimary := b.Anchors()
	try := func(ctx context.Context, sc *scenario.Scenario, origin []int) (bool, error) {
		o, err := runner.Run(ctx, sc, runner.Options{Out: *out, Cache: cache, Anchors: bundle.Reanchor(anchors, origin), FirstPrimary: firstPrimary})
		if err != nil {
			return false, err
		}
		var got []string
		for _, r := range o.Results {
			if !r.Pass {
				got = append(got, r.Name)
			}
		}
		if o.Err != nil {
			got = append(got, "run-error")
		}
		same := false
		for _, g := range got {
			if slices.Contains(want, g) {
				same = true
			}
		}
		fmt.Printf("  candidate with %d steps: failing %v → %v\n", len(sc.Steps), got, map[bool]string{true: "same failure", false: "not the same failure"}[same])
		return same, nil
	}
	res, err := shrink.Shrink(ctx, b.Scenario, try, *maxRuns)
	if err != nil {
		return err
	}
	for _, l := range res.Log {
		fmt.Println("  " + l)
	}
	res.Scenario.Name = b.Scenario.Name + "-shrunk"
	data, err := res.Scenario.Marshal()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	path := filepath.Join(*out, res.Scenario.Name+".yaml")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return err
	}
	fmt.Printf("shrunk %d → %d steps in %d runs: %s (run it with chaos run %s)\n", len(b.Scenario.Steps), len(res.Scenario.Steps), res.Runs, path, path)
	return nil
}
