package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/oplogha/oplogha/faults"
	"github.com/oplogha/oplogha/harness/audit"
	"github.com/oplogha/oplogha/harness/browser"
	"github.com/oplogha/oplogha/harness/bundle"
	"github.com/oplogha/oplogha/harness/docker"
	"github.com/oplogha/oplogha/harness/masterkind"
	"github.com/oplogha/oplogha/harness/plan"
	"github.com/oplogha/oplogha/harness/runner"
	"github.com/oplogha/oplogha/harness/scenario"
)

// parseInterleaved parses flags that may come before or after the positional arguments.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func cmdRun(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	seed := fs.Int64("seed", 0, "override every scenario's seed")
	seeds := fs.Int("seeds", 1, "run each scenario this many times, with seeds seed, seed+1000, …")
	tier := fs.String("tier", "", "only scenarios of this tier: pr, or nightly (pr and nightly); default every file given")
	out := fs.String("out", "artifacts", "directory for bundles")
	parallel := fs.Int("parallel", 1, "runs at once")
	keep := fs.Bool("keep", false, "keep passing bundles uncompressed too")
	junit := fs.String("junit", "", "write a JUnit report here")
	rt := fs.String("runtime", "", "process or docker: where every scenario's cluster runs (default: each scenario's own, else process)")
	public := fs.Bool("public-images", false, "docker runtime: run etcd and toxiproxy from their public images (needs a registry) instead of local builds")
	shardSpec := fs.String("shard", "", "run only shard K/N of the plan (see chaos plan): every shard computes the same plan and keeps its own slice")
	screenshot := fs.Bool("screenshot", false, "open each report.html in headless Chromium and write report.png into the bundle; a broken page fails the run")
	master := fs.String("master", "", "master kind for every scenario: reference or mooncake (upstream's mooncake_master; a scenario needing what it lacks is skipped with the reason)")
	masterBinary := fs.String("master-binary", "", "mooncake_master binary (default: $"+masterkind.BinaryEnv+")")
	paths, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if *screenshot {
		// One clear line before anything runs, not one failed run each.
		if _, err := browser.Find(); err != nil {
			return fmt.Errorf("--screenshot: %w", err)
		}
	}
	if *master != "" {
		kind, err := masterkind.ByName(*master)
		if err != nil {
			return fmt.Errorf("--master: %w", err)
		}
		if kind.Name == masterkind.MooncakeName && *masterBinary == "" {
			// One clear line before anything runs, not one failed run each.
			if _, err := masterkind.MooncakeBinary(); err != nil {
				return fmt.Errorf("--master mooncake: %w", err)
			}
		}
	}
	shard, err := plan.ParseShard(*shardSpec)
	if err != nil {
		return err
	}
	if *rt != "" && *rt != "process" && *rt != "docker" {
		return fmt.Errorf("--runtime %q: want process or docker", *rt)
	}
	scs, err := planRuns(paths, runPlan{tier: *tier, seed: *seed, seeds: *seeds, runtime: *rt, seedStep: 1000})
	if err != nil {
		return err
	}
	scs = plan.Pick(shard, scs)
	if len(scs) == 0 {
		fmt.Printf("shard %v: nothing to run\n", shard)
		return nil
	}
	for _, sc := range scs {
		if sc.Runtime == "docker" {
			// One clear line before anything runs, not one failed run each.
			if err := docker.Available(ctx); err != nil {
				return fmt.Errorf("runtime docker: %w", err)
			}
			break
		}
	}
	_, err = runBatch(ctx, scs, batchOptions{out: *out, parallel: *parallel, keep: *keep, junit: *junit, publicImages: *public, screenshot: *screenshot,
		master: *master, masterBinary: *masterBinary})
	return err
}

// runPlan says how scenario files become runs.
type runPlan struct {
	tier     string // "", "pr" or "nightly"
	seed     int64  // 0: each scenario's own
	seeds    int    // runs per scenario
	seedStep int64  // seed of run k is base + k*seedStep
	runtime  string // "": each scenario's own
}

// planRuns loads the scenario files under paths and expands them into the
// ordered list of runs p describes: the same list on every machine, which
// is what lets shards split it without talking to each other.
func planRuns(paths []string, p runPlan) ([]*scenario.Scenario, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("no scenario files (try scenarios/pr/*.yaml, or a directory)")
	}
	if p.seeds < 1 {
		return nil, fmt.Errorf("--seeds must be at least 1")
	}
	files, err := expandScenarioPaths(paths)
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	loaded, err := loadAll(files)
	if err != nil {
		return nil, err
	}
	var scs []*scenario.Scenario
	for _, sc := range loaded {
		switch p.tier {
		case "":
		case "pr":
			if sc.Tier != "pr" {
				continue
			}
		case "nightly":
			if sc.Tier != "pr" && sc.Tier != "nightly" {
				continue
			}
		default:
			return nil, fmt.Errorf("--tier %q: want pr or nightly", p.tier)
		}
		base := sc.Seed
		if p.seed != 0 {
			base = p.seed
		}
		if p.runtime != "" {
			sc.Runtime = p.runtime
		}
		for k := 0; k < p.seeds; k++ {
			c := *sc
			c.Seed = base + int64(k)*p.seedStep
			scs = append(scs, &c)
		}
	}
	if len(scs) == 0 {
		return nil, fmt.Errorf("no scenario of tier %q in %v", p.tier, paths)
	}
	return scs, nil
}

// expandScenarioPaths turns directories into the .yaml files under them.
func expandScenarioPaths(paths []string) ([]string, error) {
	var files []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			files = append(files, p)
			continue
		}
		err = filepath.Walk(p, func(f string, fi os.FileInfo, err error) error {
			if err == nil && !fi.IsDir() && strings.HasSuffix(f, ".yaml") && !strings.Contains(f, "testdata") {
				files = append(files, f)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	return files, nil
}

// loadAll loads every file, printing each file's problems (with their
// lines); any problem fails the whole command before anything runs.
func loadAll(files []string) ([]*scenario.Scenario, error) {
	var scs []*scenario.Scenario
	bad := false
	for _, f := range files {
		sc, err := scenario.Load(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			bad = true
			continue
		}
		scs = append(scs, sc)
	}
	if bad {
		return scs, errFailed
	}
	return scs, nil
}

func printOutcome(o *runner.Outcome) {
	if o.Skipped != "" {
		fmt.Printf("SKIP %s seed=%d: %s\n", o.Scenario, o.Seed, o.Skipped)
		return
	}
	verdict := "PASS"
	if !o.Pass {
		verdict = "FAIL"
	}
	where := o.Archive
	if o.Dir != "" {
		where = o.Dir + " (and " + filepath.Base(o.Archive) + ")"
	}
	fmt.Printf("%s %s in %.1fs — bundle: %s\n", verdict, o.Scenario, o.Duration.Seconds(), where)
	if o.Err != nil {
		fmt.Printf("  run error: %v\n", o.Err)
	}
	for _, r := range o.Results {
		mark := "ok  "
		switch {
		case r.Skipped:
			mark = "skip"
		case !r.Pass:
			mark = "FAIL"
		}
		fmt.Printf("  %s %-18s %s\n", mark, r.Name, r.Summary)
		if !r.Pass {
			for _, e := range r.Evidence {
				fmt.Printf("       %s\n", e)
			}
		}
	}
	if o.Dir != "" {
		fmt.Printf("  report: %s\n", filepath.Join(o.Dir, bundle.ReportFile))
		if _, err := os.Stat(filepath.Join(o.Dir, bundle.ScreenshotFile)); err == nil {
			fmt.Printf("  picture: %s\n", filepath.Join(o.Dir, bundle.ScreenshotFile))
		}
	}
}

func cmdReplay(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	out := fs.String("out", "artifacts", "directory for the new bundle")
	keep := fs.Bool("keep", false, "keep a passing bundle uncompressed too")
	strict := fs.Bool("strict", false, "stop at the first fault that cannot land on the original's event")
	timing := fs.Bool("timing", false, "inject at the original's times only (no anchors: the old replay)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return fmt.Errorf("%w: %w", errCannotReplay, err)
	}
	if len(pos) != 1 {
		return fmt.Errorf("%w: replay takes one bundle (got %d arguments)", errCannotReplay, len(pos))
	}
	b, err := bundle.Open(pos[0])
	if err != nil {
		return fmt.Errorf("%w: %w", errCannotReplay, err)
	}
	anchors := map[int]audit.Anchor{}
	firstPrimary := ""
	if !*timing {
		anchors, firstPrimary = b.Anchors()
	}
	fmt.Printf("replaying %s seed %d from %s (%d faults anchored to the original's events)\n", b.Scenario.Name, b.Scenario.Seed, pos[0], len(anchors))
	outs, runErr := runBatch(ctx, []*scenario.Scenario{b.Scenario},
		batchOptions{out: *out, parallel: 1, keep: *keep, replayed: pos[0], anchors: anchors, strict: *strict, firstPrimary: firstPrimary})
	if len(outs) != 1 {
		if runErr == nil || errors.Is(runErr, errFailed) {
			runErr = errors.New("the run did not finish")
		}
		return fmt.Errorf("%w: %w", errCannotReplay, runErr)
	}
	if errors.Is(outs[0].Err, runner.ErrCannotRun) {
		return fmt.Errorf("%w: %w", errCannotReplay, outs[0].Err)
	}
	landed := 0
	for _, c := range outs[0].Replay {
		mark := "same "
		if c.Same {
			landed++
		} else {
			mark = "DIFF "
		}
		fmt.Printf("  %s step %d %s: %s\n", mark, c.Step, c.Fault, c.Detail)
	}
	if len(anchors) > 0 {
		fmt.Printf("%d of %d faults landed on the original's event\n", landed, len(anchors))
	}
	wasFail, nowFail := firstFailed(b.Results, b.Meta.Error), firstFailed(outs[0].Results, errString(outs[0].Err))
	verdict := replayVerdict(wasFail, nowFail)
	switch verdict {
	case errReplayPassed:
		fmt.Println("the original passed, and so did the replay")
	case errReplayFailedAfterPass:
		fmt.Printf("the original passed; the replay FAILED first on %s\n", nowFail)
	case errReproduced:
		fmt.Printf("REPRODUCED: the replay fails first on %s, as the original did\n", nowFail)
	default:
		fmt.Printf("NOT reproduced: the original failed first on %s, the replay on %q\n", wasFail, nowFail)
	}
	again, err := bundle.Open(outs[0].Archive)
	if err != nil {
		return err
	}
	defer again.Close()
	was, now := bundle.FaultTimeline(b.Input.Events), bundle.FaultTimeline(again.Input.Events)
	if diff := bundle.DiffTimelines(was, now); diff != "" {
		fmt.Printf("fault timeline DIFFERS from the original:\n%s", diff)
		if verdict == errReproduced {
			verdict = errNotReproduced
		}
	} else {
		fmt.Printf("fault timeline: the same %d fault and heal events as the original\n", len(now))
	}
	if verdict == errReplayPassed {
		return nil
	}
	return verdict
}

// The replay's verdicts, each with its exit status (replayExitCode): 0 the
// original and the replay passed; 1 the original's first failure
// reproduced; 3 it did not (the replay passed, failed first elsewhere, or
// its faults did not land as the original's did); 4 the original passed
// and the replay failed; 2 the replay could not run (no bundle, bad
// arguments, a binary missing or a build that failed): no verdict at all.
// A script bisecting a failure branches on 1 and 3, and stops on 2.
var (
	errReplayPassed          = errors.New("the original and the replay passed")
	errReproduced            = errors.New("reproduced")
	errNotReproduced         = errors.New("not reproduced")
	errReplayFailedAfterPass = errors.New("the original passed, the replay failed")
	errCannotReplay          = errors.New("could not replay")
)

// replayVerdict compares the first failures of the original and the replay.
func replayVerdict(wasFail, nowFail string) error {
	switch {
	case wasFail == "" && nowFail == "":
		return errReplayPassed
	case wasFail == "":
		return errReplayFailedAfterPass
	case wasFail == nowFail:
		return errReproduced
	}
	return errNotReproduced
}

// replayExitCode is the exit status of a replay verdict (0: not one).
func replayExitCode(err error) int {
	switch {
	case errors.Is(err, errReproduced):
		return 1
	case errors.Is(err, errNotReproduced):
		return 3
	case errors.Is(err, errReplayFailedAfterPass):
		return 4
	case errors.Is(err, errCannotReplay):
		return 2
	}
	return 0
}

// firstFailed names what failed first in a run: a step that did not
// complete (the run error names it: "step N (line L) what") comes before
// every audit, since the run stopped short of the windows the audits after
// it were meant to judge; else the first failing audit; else the run error.
func firstFailed(rs []audit.Result, runErr string) string {
	if step, ok := failedStep(runErr); ok {
		return step
	}
	for _, r := range rs {
		if !r.Pass {
			return r.Name
		}
	}
	if runErr != "" {
		return "run error"
	}
	return ""
}

// failedStep is "step N what" of a run error about a step ("step N (line
// L) what: why"): the line is left out, since a replay runs the bundle's
// resolved copy of the scenario, whose lines differ from the original's.
func failedStep(runErr string) (string, bool) {
	if !strings.HasPrefix(runErr, "step ") {
		return "", false
	}
	if i := strings.Index(runErr, ":"); i > 0 {
		runErr = runErr[:i]
	}
	return stepLine.ReplaceAllString(runErr, ""), true
}

// stepLine is the "(line L) " of a step's name in a run error.
var stepLine = regexp.MustCompile(`\(line \d+\) `)

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func cmdList(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	coverage := fs.Bool("coverage", false, "map every RFC failure row and crash window to the scenarios that cover it")
	strict := fs.Bool("strict", false, "with --coverage: exit non-zero if any row is uncovered")
	bundles := fs.String("bundles", "", "with --coverage: also show, per invariant, the scenarios whose bundles (*.tar.gz "+
		"under this directory) exercised it, and how often")
	kinds := fs.Bool("faults", false, "list the fault kinds a step can name (the registry), with what each does")
	markdown := fs.Bool("markdown", false, "with --faults: print the table of docs/faults.md")
	caps := fs.Bool("capabilities", false, "list the master kinds with their capabilities, and per scenario what it requires and which kinds run it")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if *kinds {
		printKinds(*markdown)
		return nil
	}
	dir := "scenarios"
	if len(pos) > 0 {
		dir = pos[0]
	}
	var files []string
	err = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() && strings.HasSuffix(p, ".yaml") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		return err
	}
	scs, loadErr := loadAll(files)
	if *coverage {
		var ex *exercised
		if *bundles != "" {
			if ex, err = readExercised(*bundles); err != nil {
				return err
			}
			printInvariantCoverage(ex)
		}
		if err := printCoverage(scs, *strict, loadErr); err != nil {
			return err
		}
		return printWindowCoverage(scs, ex, *strict)
	}
	if *caps {
		printCapabilities(scs)
		return loadErr
	}
	for _, sc := range scs {
		fmt.Printf("%-13s %-24s %s\n", sc.Tier, sc.Name, sc.Path)
		for _, c := range sc.Covers {
			fmt.Printf("%-13s %-24s   covers: %s\n", "", "", c)
		}
	}
	return loadErr
}

// printCoverage prints the RFC rows with their scenarios and the uncovered ones.
func printCoverage(scs []*scenario.Scenario, strict bool, loadErr error) error {
	cov := scenario.Coverage(scs)
	uncovered := 0
	section := ""
	for _, r := range scenario.RFCRows {
		if r.Section != section {
			section = r.Section
			fmt.Printf("\n%s\n", section)
		}
		names := cov[r]
		mark := "  ✓"
		if by, ok := scenario.MeasuredBy[r]; ok && len(names) == 0 {
			names = []string{by}
		}
		if len(names) == 0 {
			mark, uncovered = "  ✗", uncovered+1
		}
		fmt.Printf("%s %-70s %s\n", mark, r.Row, strings.Join(names, ", "))
	}
	fmt.Printf("\n%d of %d rows covered by %d scenarios\n", len(scenario.RFCRows)-uncovered, len(scenario.RFCRows), len(scs))
	if loadErr != nil {
		return loadErr
	}
	if strict && uncovered > 0 {
		return errFailed
	}
	return nil
}

// printKinds lists the registered fault kinds.
func printKinds(markdown bool) {
	if markdown {
		fmt.Print(faults.Markdown())
		return
	}
	for _, k := range faults.Kinds() {
		var tags []string
		if k.Heals {
			tags = append(tags, "heals")
		}
		if k.Damages {
			tags = append(tags, "damages records")
		}
		if k.NotDrawn != "" {
			tags = append(tags, "not in the swarm")
		}
		fmt.Printf("%-17s %-9s %s\n%-17s %-9s   %s\n", k.Name, k.Family, strings.Join(tags, ", "), "", "", k.Doc)
	}
}
