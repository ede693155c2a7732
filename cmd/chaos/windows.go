package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/oplogha/oplogha/harness/audit"
	"github.com/oplogha/oplogha/harness/scenario"
)

// printWindowCoverage prints every window (audit.Windows) with the
// scenarios meant to reach it (expect.windows) and, with the bundles' counts
// (nil: none read), the runs that did and how often (minimum-work's counts). A window
// without a pr scenario is uncovered: a bug that lives there passes the pr
// tier.
func printWindowCoverage(scs []*scenario.Scenario, ex *exercised, strict bool) error {
	fmt.Printf("\nWindows (docs/windows.md)\n")
	uncovered := 0
	for _, w := range audit.Windows {
		var pr, other []string
		for _, sc := range scs {
			for _, id := range sc.Expect.Windows {
				if id == w.ID {
					if sc.Tier == "pr" {
						pr = append(pr, sc.Name)
					} else {
						other = append(other, sc.Name+" ("+sc.Tier+")")
					}
				}
			}
		}
		mark := "  ✓"
		if len(pr) == 0 {
			mark, uncovered = "  ✗", uncovered+1
		}
		names := strings.Join(append(pr, other...), ", ")
		switch {
		case w.Count == nil:
			names = "no scenario yet: nothing counts it"
		case names == "":
			names = "no scenario names it"
		}
		fmt.Printf("%s %-26s %s\n", mark, w.ID, names)
		if ex != nil && w.Count != nil {
			var parts []string
			for sc, n := range ex.counts["window "+w.ID] {
				parts = append(parts, fmt.Sprintf("%s %d×", sc, n))
			}
			sort.Strings(parts)
			if len(parts) == 0 {
				parts = []string{"reached by no run"}
			}
			fmt.Printf("    %-26s %d runs: %s\n", "", ex.runs["window "+w.ID], strings.Join(parts, ", "))
		}
	}
	fmt.Printf("\n%d of %d windows reached by a pr scenario\n", len(audit.Windows)-uncovered, len(audit.Windows))
	if strict && uncovered > 0 {
		return errFailed
	}
	return nil
}
