package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/oplogha/oplogha/harness/benchreport"
)

// cmdBenchReport renders the figures `make bench` recorded into
// results.md and results.json, adding the pr tier's wall time from the last
// `make test` in this checkout when there is one.
func cmdBenchReport(ctx context.Context, args []string) error {
	fset := flag.NewFlagSet("bench-report", flag.ContinueOnError)
	in := fset.String("in", "artifacts/bench/figures.jsonl", "figures recorded by the benchmarks")
	out := fset.String("out", "artifacts/bench", "where results.md, results.json and the plots (NAME.svg) go")
	prTier := fset.String("pr-tier", "artifacts/pr-tier-time.txt", "the pr tier's wall time, written by make test")
	elapsed := fset.Duration("elapsed", 0, "how long make bench took")
	if err := fset.Parse(args); err != nil {
		return err
	}
	figs, err := benchreport.Load(*in)
	if err != nil {
		return fmt.Errorf("bench-report: %w (run make bench first)", err)
	}
	if f, err := prTierFigure(*prTier); err == nil {
		figs = append(figs, f)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	host, _ := os.Hostname()
	meta := benchreport.Meta{GoVersion: runtime.Version(), Host: host, CPUs: runtime.NumCPU(), Commit: gitCommit(ctx)}
	if *elapsed > 0 {
		meta.Elapsed = elapsed.Round(time.Second).String()
	}
	series, err := benchreport.LoadSeries(*in)
	if err != nil {
		return fmt.Errorf("bench-report: %w", err)
	}
	if err := benchreport.Write(*out, meta, figs, series); err != nil {
		return err
	}
	met, missed := 0, 0
	for _, f := range figs {
		line := fmt.Sprintf("%-9s %-60s %14s", f.Group, f.Name, benchreport.FormatValue(f.Value, f.Unit))
		if f.Baseline != "" {
			line += fmt.Sprintf("  %7.3g× %s", f.Ratio, f.Baseline)
		}
		if f.Met != nil {
			if *f.Met {
				met++
				line += "  ✓ " + f.Target
			} else {
				missed++
				line += "  ✗ " + f.Target
			}
		}
		fmt.Println(line)
	}
	fmt.Printf("targets: %d met, %d missed; %s/results.md\n", met, missed, *out)
	return nil
}

var prTierLine = regexp.MustCompile(`pr tier: (\d+) scenarios in (\S+)`)

// prTierFigure reads the line make test leaves behind.
func prTierFigure(path string) (benchreport.Figure, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return benchreport.Figure{}, err
	}
	m := prTierLine.FindStringSubmatch(string(data))
	if m == nil {
		return benchreport.Figure{}, fmt.Errorf("%s: no %q line", path, "pr tier: N scenarios in D")
	}
	d, err := time.ParseDuration(m[2])
	if err != nil {
		return benchreport.Figure{}, fmt.Errorf("%s: %w", path, err)
	}
	st, err := os.Stat(path)
	if err != nil {
		return benchreport.Figure{}, err
	}
	budget := 15 * time.Minute
	return benchreport.Figure{Group: "harness", Name: fmt.Sprintf("pr tier wall time (%s scenarios)", m[1]), Value: d.Seconds(), Unit: "s", LowerIsBetter: true,
		Note: fmt.Sprintf("from the last make test in this checkout, %s; the baseline is the tier's budget",
			st.ModTime().UTC().Format(time.RFC3339)), At: st.ModTime().UTC()}.
		WithBaseline("15-minute budget", budget.Seconds()).
		WithTarget("< 15 min", d < budget), nil
}

func gitCommit(ctx context.Context) string {
	out, err := exec.CommandContext(ctx, "git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
