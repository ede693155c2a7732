package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/oplogha/oplogha/harness/audit"
	"github.com/oplogha/oplogha/harness/bin"
	"github.com/oplogha/oplogha/harness/bundle"
	"github.com/oplogha/oplogha/harness/masterkind"
	"github.com/oplogha/oplogha/harness/runner"
	"github.com/oplogha/oplogha/harness/scenario"
	"github.com/oplogha/oplogha/harness/signature"
)

// failureGroup is one finding of a batch's failures (a part of their
// signatures, signature.Findings): the runs that showed it and, once
// shrunk, its smallest scenario and whether that scenario, run again,
// showed it again.
type failureGroup struct {
	signature string
	runs      []failedRun
	shrunk    string // path of the shrunk scenario ("" when not shrunk)
	shrunkErr string // why it was not shrunk
	replay    string // the shrunk scenario's own run: reproduced, … ("" when not run)
}

// failedRun is one failing run of a group: its scenario and its bundle.
type failedRun struct {
	Scenario, Archive string
}

// failedRuns are the failing runs of a batch with their signatures.
func failedRuns(outcomes []*runner.Outcome) (runs []failedRun, sigs []string) {
	for _, o := range outcomes {
		if o.Pass || o.Skipped != "" {
			continue
		}
		runs = append(runs, failedRun{o.Scenario, o.Archive})
		sigs = append(sigs, signature.Of(o.Results, errText(o.Err)))
	}
	return runs, sigs
}

// groupBySignature groups failing runs by the findings of their
// signatures (sigs[i] is runs[i]'s): a run shows under each of its
// findings; the most frequent first (ties by finding).
func groupBySignature(runs []failedRun, sigs []string) []*failureGroup {
	by := map[string]*failureGroup{}
	for i, run := range runs {
		findings := signature.Findings(sigs[i])
		if len(findings) == 0 {
			findings = []string{"failed without a failing audit"}
		}
		for _, f := range findings {
			if by[f] == nil {
				by[f] = &failureGroup{signature: f}
			}
			by[f].runs = append(by[f].runs, run)
		}
	}
	out := make([]*failureGroup, 0, len(by))
	for _, g := range by {
		sort.Slice(g.runs, func(i, j int) bool { return g.runs[i].Scenario < g.runs[j].Scenario })
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool {
		if len(out[i].runs) != len(out[j].runs) {
			return len(out[i].runs) > len(out[j].runs)
		}
		return out[i].signature < out[j].signature
	})
	return out
}

// shrinkAndReplay shrinks the group's first run, then runs the shrunk
// scenario once more and says whether it showed the signature again.
func shrinkAndReplay(ctx context.Context, cache *bin.Cache, g *failureGroup, o shrinkOptions) {
	first := g.runs[0]
	fmt.Printf("finding %q (%d runs): shrinking %s\n", g.signature, len(g.runs), first.Scenario)
	o.finding = g.signature
	path, err := shrinkBundle(ctx, cache, first.Archive, o)
	if err != nil {
		g.shrunkErr = err.Error()
		return
	}
	g.shrunk = path
	sc, err := scenario.Load(path)
	if err != nil {
		g.replay = "could not load: " + err.Error()
		return
	}
	out, err := runner.Run(ctx, sc, runner.Options{Out: filepath.Join(o.out, "replays"), Cache: cache, MasterBinary: o.masterBinary})
	switch {
	case err != nil:
		g.replay = "could not run: " + err.Error()
	default:
		got := signature.Of(out.Results, errText(out.Err))
		switch {
		case signature.Covers(g.signature, got):
			g.replay = "reproduced"
		case out.Pass:
			g.replay = "not reproduced (passed)"
		default:
			g.replay = "not reproduced: " + got
		}
		g.replay += " — " + out.Archive
	}
}

// writeSignatures writes the batch's signature table, in Markdown, under
// the title given.
func writeSignatures(path, title string, runs int, groups []*failureGroup) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n%d runs, %d failed, %d findings (a run shows under each of its findings).\n\n", title, runs, distinct(groups), len(groups))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if len(groups) == 0 {
		return os.WriteFile(path, []byte(b.String()), 0o644)
	}
	b.WriteString("| # | finding | runs | first bundle | shrunk scenario | shrunk, run again |\n|---|---|---|---|---|---|\n")
	for i, g := range groups {
		names := make([]string, len(g.runs))
		for k, o := range g.runs {
			names[k] = o.Scenario
		}
		shrunk := g.shrunk
		if shrunk == "" {
			shrunk = g.shrunkErr
		}
		fmt.Fprintf(&b, "| %d | %s | %d (%s) | %s | %s | %s |\n", i+1, md(g.signature), len(g.runs), strings.Join(names, " "),
			filepath.Base(g.runs[0].Archive), md(shrunk), md(g.replay))
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// distinct counts the runs of the groups, each once.
func distinct(groups []*failureGroup) int {
	seen := map[string]bool{}
	for _, g := range groups {
		for _, r := range g.runs {
			seen[r.Archive] = true
		}
	}
	return len(seen)
}

func md(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

// printSignatures prints the signature table's gist.
func printSignatures(groups []*failureGroup) {
	if len(groups) == 0 {
		return
	}
	fmt.Printf("%d findings:\n", len(groups))
	for _, g := range groups {
		fmt.Printf("  %3d× %s\n", len(g.runs), g.signature)
		if g.shrunk != "" {
			fmt.Printf("        shrunk: %s; run again: %s\n", g.shrunk, g.replay)
		}
	}
}

// cmdSignatures groups the failing bundles of directories (a swarm's, a
// nightly shard's) by failure signature, and with --shrink shrinks each
// signature's first bundle and runs the shrunk scenario again.
func cmdSignatures(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("signatures", flag.ContinueOnError)
	shrinkRuns := fs.Int("shrink", 0, "shrink each signature's first bundle with at most this many candidate runs, then run the shrunk scenario again (0: no shrink)")
	out := fs.String("out", "", "write signatures.md and the shrink's bundles here (default: the first directory)")
	masterBinary := fs.String("master-binary", "", "mooncake_master binary for bundles of upstream's master (default: $"+masterkind.BinaryEnv+")")
	reaudit := fs.Bool("reaudit", false, "judge each bundle again with this build's audits (bundles from an older build) instead of its recorded verdicts")
	only := fs.String("only", "", "shrink only the findings that contain this text (default: every finding)")
	dirs, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(dirs) == 0 {
		return fmt.Errorf("signatures takes directories of bundles")
	}
	if *out == "" {
		*out = dirs[0]
	}
	var runs []failedRun
	var sigs []string
	total := 0
	for _, dir := range dirs {
		paths, err := filepath.Glob(filepath.Join(dir, "*.tar.gz"))
		if err != nil {
			return err
		}
		if len(paths) == 0 {
			return fmt.Errorf("%s: no bundles (*.tar.gz)", dir)
		}
		for _, p := range paths {
			b, err := bundle.Open(p)
			if err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			total++
			results := b.Results
			if *reaudit {
				results = audit.Run(&b.Input)
			}
			sig := signature.Of(results, b.Meta.Error)
			if sig == "" {
				continue
			}
			runs = append(runs, failedRun{b.Meta.Scenario, p})
			sigs = append(sigs, sig)
		}
	}
	groups := groupBySignature(runs, sigs)
	if *shrinkRuns > 0 && len(groups) > 0 {
		cache, err := bin.NewCache(".", os.Stderr)
		if err != nil {
			return err
		}
		for _, g := range groups {
			if ctx.Err() != nil {
				break
			}
			if *only != "" && !strings.Contains(g.signature, *only) {
				continue
			}
			shrinkAndReplay(ctx, cache, g, shrinkOptions{out: filepath.Join(*out, "shrink"), maxRuns: *shrinkRuns, masterBinary: *masterBinary})
		}
	}
	if err := writeSignatures(filepath.Join(*out, "signatures.md"), "Failure signatures of "+strings.Join(dirs, ", "), total, groups); err != nil {
		return err
	}
	fmt.Printf("%d bundles, %d failed: signatures in %s\n", total, len(runs), filepath.Join(*out, "signatures.md"))
	printSignatures(groups)
	return nil
}
