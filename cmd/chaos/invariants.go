package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/oplogha/oplogha/harness/audit"
	"github.com/oplogha/oplogha/harness/bundle"
)

// exercised is what the audits of every bundle under a directory counted:
// counts[key][scenario] sums a scenario's bundles, runs[key] is how many
// bundles counted key at all.
type exercised struct {
	dir     string
	bundles int
	counts  map[string]map[string]int
	runs    map[string]int
}

// readExercised reads the audit results of every bundle under dir once,
// for the invariant and the window coverage both.
func readExercised(dir string) (*exercised, error) {
	var archives []string
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() && strings.HasSuffix(p, ".tar.gz") {
			archives = append(archives, p)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(archives) == 0 {
		return nil, fmt.Errorf("no bundle (*.tar.gz) under %s", dir)
	}
	ex := &exercised{dir: dir, bundles: len(archives), counts: map[string]map[string]int{}, runs: map[string]int{}}
	for _, a := range archives {
		b, err := bundle.Open(a)
		if err != nil {
			fmt.Fprintf(os.Stderr, "skipping %s: %v\n", a, err)
			continue
		}
		for _, r := range b.Results {
			for k, n := range r.Exercised {
				if ex.counts[k] == nil {
					ex.counts[k] = map[string]int{}
				}
				ex.counts[k][b.Meta.Scenario] += n
				if n > 0 {
					ex.runs[k]++
				}
			}
		}
		b.Close()
	}
	return ex, nil
}

// printInvariantCoverage prints, per invariant, which scenarios exercised
// it and how often (the audits' counts from each run's history): an
// invariant no run put to the test is covered by nothing, however green.
func printInvariantCoverage(ex *exercised) {
	counts := ex.counts
	fmt.Printf("Invariants exercised by %d bundles under %s\n", ex.bundles, ex.dir)
	unexercised := 0
	for _, inv := range audit.Invariants {
		var keys []string
		for k := range counts {
			if k == inv.ID || strings.HasPrefix(k, inv.ID+":") || strings.HasPrefix(k, inv.ID+" ") {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		total, parts := 0, []string{}
		for _, k := range keys {
			type count struct {
				sc string
				n  int
			}
			var cs []count
			sum := 0
			for sc, n := range counts[k] {
				if n > 0 {
					cs = append(cs, count{sc, n})
					sum += n
				}
			}
			if k == inv.ID {
				total = sum
			}
			if len(cs) == 0 {
				continue
			}
			sort.Slice(cs, func(i, j int) bool { return cs[i].n > cs[j].n || cs[i].n == cs[j].n && cs[i].sc < cs[j].sc })
			top := make([]string, 0, 3)
			for _, c := range cs[:min(3, len(cs))] {
				top = append(top, fmt.Sprintf("%s %d", c.sc, c.n))
			}
			if len(cs) > 3 {
				top = append(top, fmt.Sprintf("%d more", len(cs)-3))
			}
			label := strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(k, inv.ID), ":"))
			if label == "" {
				label = "judged"
			}
			parts = append(parts, fmt.Sprintf("%s %d in %d scenarios (%s)", label, sum, len(cs), strings.Join(top, ", ")))
		}
		mark := "  ✓"
		if total == 0 {
			mark, unexercised = "  ✗", unexercised+1
		}
		fmt.Printf("%s %-24s %s\n", mark, inv.ID, strings.Join(parts, "; "))
	}
	fmt.Printf("%d of %d invariants exercised\n", len(audit.Invariants)-unexercised, len(audit.Invariants))
}
