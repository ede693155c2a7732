package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/oplogha/oplogha/harness/audit"
	"github.com/oplogha/oplogha/harness/bundle"
	"github.com/oplogha/oplogha/harness/scenario"
)

// printWindowCoverage prints every window (audit.Windows) with the
// scenarios meant to reach it (expect.windows) and, with bundles, the runs
// that did and how often (each bundle's minimum-work counts). A window
// without a pr scenario is uncovered: a bug that lives there passes the pr
// tier.
func printWindowCoverage(scs []*scenario.Scenario, bundles string, strict bool) error {
	reached := map[string]map[string]int{} // window → scenario → count over its bundles
	runs := map[string]int{}               // window → bundles that reached it
	if bundles != "" {
		err := filepath.Walk(bundles, func(p string, fi os.FileInfo, err error) error {
			if err != nil || fi.IsDir() || !strings.HasSuffix(p, ".tar.gz") {
				return err
			}
			b, err := bundle.Open(p)
			if err != nil {
				fmt.Fprintf(os.Stderr, "skipping %s: %v\n", p, err)
				return nil
			}
			defer b.Close()
			for _, r := range b.Results {
				for _, w := range audit.Windows {
					if n := r.Exercised["window "+w.ID]; n > 0 {
						if reached[w.ID] == nil {
							reached[w.ID] = map[string]int{}
						}
						reached[w.ID][b.Meta.Scenario] += n
						runs[w.ID]++
					}
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
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
		if bundles != "" && w.Count != nil {
			var parts []string
			for sc, n := range reached[w.ID] {
				parts = append(parts, fmt.Sprintf("%s %d×", sc, n))
			}
			sort.Strings(parts)
			if len(parts) == 0 {
				parts = []string{"reached by no run"}
			}
			fmt.Printf("    %-26s %d runs: %s\n", "", runs[w.ID], strings.Join(parts, ", "))
		}
	}
	fmt.Printf("\n%d of %d windows reached by a pr scenario\n", len(audit.Windows)-uncovered, len(audit.Windows))
	if strict && uncovered > 0 {
		return errFailed
	}
	return nil
}
