package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// gremlinsResult is the part of go-gremlins' JSON output (-o) the table uses.
type gremlinsResult struct {
	Efficacy    float64 `json:"test_efficacy"`
	Coverage    float64 `json:"mutations_coverage"`
	Total       int     `json:"mutants_total"`
	Killed      int     `json:"mutants_killed"`
	Lived       int     `json:"mutants_lived"`
	NotViable   int     `json:"mutants_not_viable"`
	NotCovered  int     `json:"mutants_not_covered"`
	ElapsedSecs float64 `json:"elapsed_time"`
}

// cmdGremlinsReport turns the per-package JSON files of `make gremlins`
// into one markdown table (results.md beside them) with the totals, and
// fails when the total efficacy is below --min-efficacy.
func cmdGremlinsReport(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("gremlins-report", flag.ContinueOnError)
	in := fs.String("in", "artifacts/gremlins", "directory of <package>.json files from gremlins unleash -o")
	minEff := fs.Float64("min-efficacy", 0, "fail when the total efficacy (killed / (killed+lived)) is below this percentage")
	if err := fs.Parse(args); err != nil {
		return err
	}
	files, err := filepath.Glob(filepath.Join(*in, "*.json"))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("no gremlins results (*.json) in %s: run make gremlins", *in)
	}
	sort.Strings(files)
	var b strings.Builder
	fmt.Fprintln(&b, "| package | mutants | killed | lived | not covered | not viable | efficacy | mutant coverage | took |")
	fmt.Fprintln(&b, "|---|---|---|---|---|---|---|---|---|")
	var sum gremlinsResult
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var r gremlinsResult
		if err := json.Unmarshal(data, &r); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		pkg := "impl/" + strings.TrimSuffix(filepath.Base(f), ".json")
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %.1f %% | %.1f %% | %s |\n", pkg, r.Total+r.NotCovered, r.Killed, r.Lived, r.NotCovered, r.NotViable,
			r.Efficacy, r.Coverage, (time.Duration(r.ElapsedSecs) * time.Second).Round(time.Second))
		sum.Total += r.Total
		sum.Killed += r.Killed
		sum.Lived += r.Lived
		sum.NotCovered += r.NotCovered
		sum.NotViable += r.NotViable
		sum.ElapsedSecs += r.ElapsedSecs
	}
	eff, cov := 0.0, 0.0
	if sum.Killed+sum.Lived > 0 {
		eff = 100 * float64(sum.Killed) / float64(sum.Killed+sum.Lived)
	}
	if all := sum.Killed + sum.Lived + sum.NotCovered; all > 0 {
		cov = 100 * float64(sum.Killed+sum.Lived) / float64(all)
	}
	fmt.Fprintf(&b, "| **all** | %d | %d | %d | %d | %d | **%.1f %%** | **%.1f %%** | %s |\n", sum.Total+sum.NotCovered, sum.Killed, sum.Lived,
		sum.NotCovered, sum.NotViable,
		eff, cov, (time.Duration(sum.ElapsedSecs) * time.Second).Round(time.Second))
	fmt.Print(b.String())
	if err := os.WriteFile(filepath.Join(*in, "results.md"), []byte(b.String()), 0o644); err != nil {
		return err
	}
	if eff < *minEff {
		return fmt.Errorf("efficacy %.1f %% is below %.1f %%", eff, *minEff)
	}
	return nil
}
