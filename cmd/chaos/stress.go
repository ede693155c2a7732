package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/oplogha/oplogha/harness/runner"
	"github.com/oplogha/oplogha/harness/scenario"
)

// cmdStress measures a scenario's stability: each scenario runs --runs times
// on consecutive seeds; the table gives each one's pass rate and groups its
// failures by what failed first (the audit, or the run error), so one flaky
// window shows as one line with a count, and each failure keeps its bundle.
func cmdStress(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("stress", flag.ContinueOnError)
	runs := fs.Int("runs", 20, "runs per scenario, on seeds seed, seed+1, …")
	seed := fs.Int64("seed", 0, "first seed (default: each scenario's own)")
	tier := fs.String("tier", "", "only scenarios of this tier: pr, or nightly (pr and nightly)")
	out := fs.String("out", "artifacts/stress", "directory for bundles (failures are kept)")
	parallel := fs.Int("parallel", 1, "runs at once")
	junit := fs.String("junit", "", "write a JUnit report here")
	table := fs.String("table", "", "also write the table (markdown) here")
	budget := fs.Duration("budget", 0, "start no new run after this long (0: none)")
	paths, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if *runs < 1 {
		return fmt.Errorf("--runs must be at least 1")
	}
	scs, err := planRuns(paths, runPlan{tier: *tier, seed: *seed, seeds: *runs, seedStep: 1})
	if err != nil {
		return err
	}
	fmt.Printf("stress: %d scenarios × %d runs, %d at a time, bundles in %s\n", len(scs) / *runs, *runs, *parallel, *out)
	start := time.Now()
	outcomes, runErr := runBatch(ctx, scs, batchOptions{out: *out, parallel: *parallel, junit: *junit, budget: *budget})
	for _, o := range outcomes {
		if o.Pass && o.Dir == "" {
			_ = os.Remove(o.Archive) // only failures are kept
		}
	}
	st := tally(scs, outcomes)
	md := st.markdown(time.Since(start))
	fmt.Println(md)
	if *table != "" {
		if err := os.MkdirAll(filepath.Dir(*table), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(*table, []byte(md), 0o644); err != nil {
			return err
		}
	}
	if runErr != nil {
		return errFailed
	}
	return nil
}

// stressRow is one scenario's stress result.
type stressRow struct {
	scenario string
	planned  int
	ran      int
	passed   int
	failures map[string][]string // first failure → bundles
}

type stressTable []*stressRow

// tally groups outcomes by scenario in plan order.
func tally(planned []*scenario.Scenario, outcomes []*runner.Outcome) stressTable {
	var t stressTable
	rows := map[string]*stressRow{}
	for _, sc := range planned {
		r := rows[sc.Name]
		if r == nil {
			r = &stressRow{scenario: sc.Name, failures: map[string][]string{}}
			rows[sc.Name] = r
			t = append(t, r)
		}
		r.planned++
	}
	for _, o := range outcomes {
		r := rows[o.Scenario]
		if r == nil {
			continue
		}
		r.ran++
		if o.Pass {
			r.passed++
			continue
		}
		k := firstFailure(o)
		r.failures[k] = append(r.failures[k], fmt.Sprintf("seed %d: %s", o.Seed, o.Archive))
	}
	return t
}

var digits = regexp.MustCompile(`[0-9]+`)

// firstFailure names what failed first in a run: the run error, else the
// first failing audit with its first piece of evidence, numbers masked so
// the same failure on another seed groups with it.
func firstFailure(o *runner.Outcome) string {
	if o.Err != nil {
		return "run error: " + clip(digits.ReplaceAllString(o.Err.Error(), "N"))
	}
	for _, r := range o.Results {
		if r.Pass {
			continue
		}
		k := r.Name
		if len(r.Evidence) > 0 {
			k += ": " + clip(digits.ReplaceAllString(r.Evidence[0], "N"))
		}
		return k
	}
	return "failed without a failing audit"
}

func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 110 {
		return s[:110] + "…"
	}
	return s
}

// markdown renders the table: one row per scenario, then each failure group.
func (t stressTable) markdown(took time.Duration) string {
	var b strings.Builder
	t.write(&b)
	total, passed := 0, 0
	for _, r := range t {
		total += r.ran
		passed += r.passed
	}
	fmt.Fprintf(&b, "\n%d of %d runs passed in %s\n", passed, total, took.Round(time.Second))
	return b.String()
}

func (t stressTable) write(w io.Writer) {
	fmt.Fprintln(w, "| scenario | passed | rate | failures (first failing audit or step) |")
	fmt.Fprintln(w, "|---|---|---|---|")
	for _, r := range t {
		rate := "—"
		if r.ran > 0 {
			rate = fmt.Sprintf("%.0f %%", 100*float64(r.passed)/float64(r.ran))
		}
		passed := fmt.Sprintf("%d/%d", r.passed, r.ran)
		if r.ran < r.planned {
			passed += fmt.Sprintf(" (%d not run)", r.planned-r.ran)
		}
		keys := make([]string, 0, len(r.failures))
		for k := range r.failures {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return len(r.failures[keys[i]]) > len(r.failures[keys[j]]) })
		var groups []string
		for _, k := range keys {
			groups = append(groups, fmt.Sprintf("%d× %s", len(r.failures[k]), strings.ReplaceAll(k, "|", "\\|")))
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", r.scenario, passed, rate, strings.Join(groups, "; "))
	}
	for _, r := range t {
		for k, bundles := range r.failures {
			fmt.Fprintf(w, "\n%s — %s:\n", r.scenario, k)
			for _, bd := range bundles {
				fmt.Fprintf(w, "  - %s\n", bd)
			}
		}
	}
}
