package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/oplogha/oplogha/harness/mutants"
	"github.com/oplogha/oplogha/harness/plan"
)

// cmdMutants runs the mutant corpus: each patch applied to a copy of the
// tree, built, and run against the scenarios (then tests) it names. It
// prints the table and fails unless every mutant was killed by a scenario.
func cmdMutants(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("mutants", flag.ContinueOnError)
	dir := fs.String("dir", "tests/mutants", "the corpus: *.patch files with their headers")
	only := fs.String("only", "", "comma-separated mutant names (default: all)")
	out := fs.String("out", "artifacts/mutants", "bundles, results.json and results.md")
	shardSpec := fs.String("shard", "", "run only shard K/N of the corpus (in name order)")
	replay := fs.Bool("replay", false, "replay each killing bundle with chaos replay against the same mutant and report whether it fails first on the same audit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	shard, err := plan.ParseShard(*shardSpec)
	if err != nil {
		return err
	}
	corpus, err := mutants.Load(*dir)
	if err != nil {
		return err
	}
	if *only != "" {
		want := strings.Split(*only, ",")
		corpus = slices.DeleteFunc(corpus, func(m mutants.Mutant) bool { return !slices.Contains(want, m.Name) })
		if len(corpus) == 0 {
			return fmt.Errorf("no mutant named %s in %s", *only, *dir)
		}
	}
	corpus = plan.Pick(shard, corpus)
	if len(corpus) == 0 {
		fmt.Printf("shard %v: no mutant to run\n", shard)
		return nil
	}
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	outDir, err := filepath.Abs(*out)
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "oplogha-mutants-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	r := &mutants.Runner{Root: root, Work: work, Out: filepath.Join(outDir, "bundles"), Log: os.Stderr, Replay: *replay}
	start := time.Now()
	var results []mutants.Outcome
	for i, m := range corpus {
		fmt.Fprintf(os.Stderr, "[mutants] %d/%d %s (%s): %s\n", i+1, len(corpus), m.Name, m.Where, m.Story)
		o := r.Run(ctx, m)
		fmt.Fprintf(os.Stderr, "[mutants] %s: %s %s (%s)\n", m.Name, o.Verdict, o.By, o.Took.Round(time.Second))
		results = append(results, o)
		if ctx.Err() != nil {
			break
		}
	}
	table := mutants.Table(results)
	killed := 0
	for _, o := range results {
		if o.Verdict == mutants.Killed {
			killed++
		}
	}
	summary := fmt.Sprintf("%d of %d mutants killed by a scenario, in %s", killed, len(results), time.Since(start).Round(time.Second))
	if rs := mutants.ReplaySummary(results); rs != "" {
		summary += "\n" + rs
	}
	fmt.Println(table)
	fmt.Println(summary)
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	data, _ := json.MarshalIndent(results, "", "  ")
	if err := os.WriteFile(filepath.Join(outDir, "results.json"), data, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(outDir, "results.md"), []byte(table+"\n"+summary+"\n"), 0o644); err != nil {
		return err
	}
	if killed != len(results) || len(results) != len(corpus) {
		return errFailed
	}
	return nil
}
