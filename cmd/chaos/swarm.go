package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/oplogha/oplogha/harness/audit"
	"github.com/oplogha/oplogha/harness/bin"
	"github.com/oplogha/oplogha/harness/bundle"
	"github.com/oplogha/oplogha/harness/masterkind"
	"github.com/oplogha/oplogha/harness/plan"
	"github.com/oplogha/oplogha/harness/runner"
	"github.com/oplogha/oplogha/harness/scenario"
	"github.com/oplogha/oplogha/harness/shrink"
	"github.com/oplogha/oplogha/harness/signature"
	"github.com/oplogha/oplogha/harness/swarm"
)

// cmdSwarm draws and runs random scenarios from one seed until the run
// count or the time budget is reached (no new run starts after the budget),
// then groups the failures by signature; with --shrink, each signature is
// shrunk once and its shrunk scenario run again to see it reproduce.
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
	master := fs.String("master", masterkind.ReferenceName, "master kind to run: reference or mooncake (upstream's mooncake_master)")
	masterBinary := fs.String("master-binary", "", "mooncake_master binary (default: $"+masterkind.BinaryEnv+")")
	movesOf := fs.String("moves-of", "", "draw only what this master kind can take (default: --master): the same seed's draws for upstream's master can run against the reference master")
	shrinkRuns := fs.Int("shrink", 0, "shrink each failure signature's first run with at most this many candidate runs, then run the shrunk scenario again (0: no shrink)")
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
	runKind, err := masterkind.ByName(*master)
	if err != nil {
		return fmt.Errorf("--master: %w", err)
	}
	if *movesOf == "" {
		*movesOf = runKind.Name
	}
	drawKind, err := masterkind.ByName(*movesOf)
	if err != nil {
		return fmt.Errorf("--moves-of: %w", err)
	}
	if runKind.Name == masterkind.MooncakeName && *masterBinary == "" && !*dry {
		// One clear line before anything runs, not one failed run each.
		if _, err := masterkind.MooncakeBinary(); err != nil {
			return fmt.Errorf("--master mooncake: %w", err)
		}
	}
	var scs []*scenario.Scenario
	for i := *first; i < *first+*runs; i++ {
		if !shard.Owns(i - *first) {
			continue
		}
		sc, err := swarm.DrawFor(*seed, i, drawKind)
		if err != nil {
			return err
		}
		scs = append(scs, sc)
		if *dry {
			_, what, _ := strings.Cut(sc.Description, fmt.Sprintf("(run %d): ", i))
			fmt.Printf("%s seed %d: %s\n", sc.Name, sc.Seed, what)
		}
	}
	if *dry {
		return nil
	}
	fmt.Printf("swarm seed %d: %d runs (shard %v of %d from %d) of moves %s can take, against master %s, budget %v, %d at a time, bundles in %s\n",
		*seed, len(scs), shard, *runs, *first, drawKind.Name, runKind.Name, *budget, *parallel, *out)
	outcomes, err := runBatch(ctx, scs, batchOptions{out: *out, parallel: *parallel, budget: *budget, junit: *junit, swarmSeed: *seed,
		master: runKind.Name, masterBinary: *masterBinary})
	if len(outcomes) == 0 {
		return err
	}
	groups := groupBySignature(failedRuns(outcomes))
	if *shrinkRuns > 0 && len(groups) > 0 {
		cache, cerr := bin.NewCache(".", os.Stderr)
		if cerr != nil {
			return errors.Join(err, cerr)
		}
		for _, g := range groups {
			if ctx.Err() != nil {
				break
			}
			shrinkAndReplay(ctx, cache, g, shrinkOptions{out: filepath.Join(*out, "shrink"), maxRuns: *shrinkRuns, masterBinary: *masterBinary})
		}
	}
	title := fmt.Sprintf("Swarm seed %d: moves %s can take, run against %s", *seed, drawKind.Name, runKind.Name)
	if werr := writeSignatures(filepath.Join(*out, "signatures.md"), title, len(outcomes), groups); werr != nil {
		return errors.Join(err, werr)
	}
	printSignatures(groups)
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
// which the run still shows every part of the original's failure
// signature (harness/signature), and writes the smallest failing
// scenario next to the bundles.
func cmdShrink(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("shrink", flag.ContinueOnError)
	out := fs.String("out", "artifacts/shrink", "directory for candidate bundles and the result")
	maxRuns := fs.Int("max-runs", 30, "at most this many candidate runs")
	masterBinary := fs.String("master-binary", "", "mooncake_master binary for a bundle of upstream's master (default: $"+masterkind.BinaryEnv+")")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("shrink takes one failing bundle")
	}
	cache, err := bin.NewCache(".", os.Stderr)
	if err != nil {
		return err
	}
	_, err = shrinkBundle(ctx, cache, pos[0], shrinkOptions{out: *out, maxRuns: *maxRuns, masterBinary: *masterBinary})
	return err
}

// shrinkOptions configure one shrink.
type shrinkOptions struct {
	out          string
	maxRuns      int
	masterBinary string
	// finding, when set, is the one part of the original's signature a
	// candidate must still show (else every part).
	finding string
}

// shrinkBundle shrinks the failing bundle at path and returns the path of
// the smallest failing scenario it wrote. Each candidate runs the master
// kind the bundle ran.
func shrinkBundle(ctx context.Context, cache *bin.Cache, path string, o shrinkOptions) (string, error) {
	b, err := bundle.Open(path)
	if err != nil {
		return "", err
	}
	want := signature.Of(b.Results, b.Meta.Error)
	if want == "" {
		return "", fmt.Errorf("%s passed: nothing to shrink", path)
	}
	if o.finding != "" {
		want = o.finding
	}
	fmt.Printf("shrinking %s (%d steps; keeping: %s), at most %d runs\n", b.Scenario.Name, len(b.Scenario.Steps), want, o.maxRuns)
	// Each candidate's faults land on their original's events, as a replay's
	// do, so a candidate fails the same way for the same reason.
	anchors, firstPrimary := b.Anchors()
	try := func(ctx context.Context, sc *scenario.Scenario, origin []int) (bool, error) {
		out, err := runner.Run(ctx, sc, runner.Options{Out: o.out, Cache: cache, Anchors: bundle.Reanchor(anchors, origin), FirstPrimary: firstPrimary,
			MasterBinary: o.masterBinary})
		if err != nil {
			return false, err
		}
		got := signature.Of(out.Results, errText(out.Err))
		same := signature.Covers(want, got)
		fmt.Printf("  candidate with %d steps: %s → %v\n", len(sc.Steps), orPassed(got), map[bool]string{true: "same failure", false: "not the same failure"}[same])
		return same, nil
	}
	res, err := shrink.Shrink(ctx, b.Scenario, try, o.maxRuns)
	if err != nil {
		return "", err
	}
	for _, l := range res.Log {
		fmt.Println("  " + l)
	}
	res.Scenario.Name = b.Scenario.Name + "-shrunk"
	res.Scenario.Description = fmt.Sprintf("shrunk by chaos shrink from %s (%d → %d steps in %d runs), keeping: %s. The original: %s",
		b.Scenario.Name, len(b.Scenario.Steps), len(res.Scenario.Steps), res.Runs, want, b.Scenario.Description)
	data, err := res.Scenario.Marshal()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return "", err
	}
	file := filepath.Join(o.out, res.Scenario.Name+".yaml")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		return "", err
	}
	fmt.Printf("shrunk %d → %d steps in %d runs: %s (run it with chaos run %s)\n", len(b.Scenario.Steps), len(res.Scenario.Steps), res.Runs, file, file)
	return file, nil
}

// orPassed is a signature, or "passed" for none.
func orPassed(sig string) string {
	if sig == "" {
		return "passed"
	}
	return sig
}

// errText is an error's text, "" for none.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
