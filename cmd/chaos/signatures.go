package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/oplogha/oplogha/harness/bin"
	"github.com/oplogha/oplogha/harness/runner"
	"github.com/oplogha/oplogha/harness/scenario"
	"github.com/oplogha/oplogha/harness/signature"
)

// failureGroup is one signature of a batch's failures: the runs that
// showed it and, once shrunk, its smallest scenario and whether that
// scenario, run again, showed it again.
type failureGroup struct {
	signature string
	runs      []*runner.Outcome
	shrunk    string // path of the shrunk scenario ("" when not shrunk)
	shrunkErr string // why it was not shrunk
	replay    string // the shrunk scenario's own run: reproduced, … ("" when not run)
}

// groupBySignature groups the failing outcomes by signature, the most
// frequent first (ties by signature).
func groupBySignature(outcomes []*runner.Outcome) []*failureGroup {
	by := map[string]*failureGroup{}
	for _, o := range outcomes {
		if o.Pass || o.Skipped != "" {
			continue
		}
		sig := signature.Of(o.Results, errText(o.Err))
		if sig == "" {
			sig = "failed without a failing audit"
		}
		if by[sig] == nil {
			by[sig] = &failureGroup{signature: sig}
		}
		by[sig].runs = append(by[sig].runs, o)
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
	fmt.Printf("signature %q (%d runs): shrinking %s\n", g.signature, len(g.runs), first.Scenario)
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
		case got == g.signature:
			g.replay = "reproduced (same signature)"
		case signature.Overlap(g.signature, got):
			g.replay = "reproduced in part: " + got
		case out.Pass:
			g.replay = "not reproduced (passed)"
		default:
			g.replay = "not reproduced: " + got
		}
		g.replay += " — " + out.Archive
	}
}

// writeSignatures writes the batch's signature table, in Markdown.
func writeSignatures(path string, seed int64, movesOf, master string, runs int, groups []*failureGroup) error {
	var b strings.Builder
	failed := 0
	for _, g := range groups {
		failed += len(g.runs)
	}
	fmt.Fprintf(&b, "# Swarm seed %d: moves %s can take, run against %s\n\n%d runs, %d failed, %d signatures.\n\n",
		seed, movesOf, master, runs, failed, len(groups))
	if len(groups) == 0 {
		return os.WriteFile(path, []byte(b.String()), 0o644)
	}
	b.WriteString("| # | signature | runs | first bundle | shrunk scenario | shrunk, run again |\n|---|---|---|---|---|---|\n")
	for i, g := range groups {
		names := make([]string, len(g.runs))
		for k, o := range g.runs {
			names[k] = strings.TrimPrefix(o.Scenario, fmt.Sprintf("swarm-%d-", seed))
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

func md(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

// printSignatures prints the signature table's gist.
func printSignatures(groups []*failureGroup) {
	if len(groups) == 0 {
		return
	}
	fmt.Printf("%d failure signatures:\n", len(groups))
	for _, g := range groups {
		fmt.Printf("  %3d× %s\n", len(g.runs), g.signature)
		if g.shrunk != "" {
			fmt.Printf("        shrunk: %s; run again: %s\n", g.shrunk, g.replay)
		}
	}
}
