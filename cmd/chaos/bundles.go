package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"

	"github.com/oplogha/oplogha/harness/audit"
	"github.com/oplogha/oplogha/harness/browser"
	"github.com/oplogha/oplogha/harness/bundle"
)

// cmdAudit re-runs every audit over a bundle's contents and compares the
// verdicts with those recorded at run time.
func cmdAudit(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("audit takes bundles")
	}
	failed := false
	for _, path := range args {
		b, err := bundle.Open(path)
		if err != nil {
			return err
		}
		recorded := b.Results
		results := audit.Run(&b.Input)
		fmt.Printf("%s (%s seed %d)\n", path, b.Meta.Scenario, b.Meta.Seed)
		for i, r := range results {
			mark := "ok  "
			if !r.Pass {
				mark, failed = "FAIL", true
			}
			same := ""
			if i < len(recorded) && recorded[i].Name == r.Name {
				if recorded[i].Pass != r.Pass {
					same, failed = "  (DIFFERS from the recorded verdict)", true
				}
			} else if recorded != nil {
				same = "  (not recorded)"
			}
			fmt.Printf("  %s %-18s %s%s\n", mark, r.Name, r.Summary, same)
			if !r.Pass {
				for _, e := range r.Evidence {
					fmt.Printf("       %s\n", e)
				}
			}
		}
	}
	if failed {
		return errFailed
	}
	return nil
}

// cmdGate is the release gate: one line per failed audit or run error.
func cmdGate(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("gate takes bundles")
	}
	failures := 0
	for _, path := range args {
		b, err := bundle.Open(path)
		if err != nil {
			fmt.Printf("GATE %s: unreadable: %v\n", path, err)
			failures++
			continue
		}
		if b.Results == nil {
			fmt.Printf("GATE %s: no audit.json\n", path)
			failures++
			continue
		}
		if b.Meta.Error != "" {
			fmt.Printf("GATE %s: %s seed %d: run error: %s\n", path, b.Meta.Scenario, b.Meta.Seed, b.Meta.Error)
			failures++
		}
		for _, r := range b.Results {
			if !r.Pass {
				fmt.Printf("GATE %s: %s seed %d: %s failed: %s\n", path, b.Meta.Scenario, b.Meta.Seed, r.Name, r.Summary)
				failures++
			}
		}
		// The log audit is read again here, over the bundle as it is now:
		// a bundle edited or assembled after its run cannot carry a leak
		// past the gate on a recorded verdict.
		if r := audit.LogAudit(&b.Input); !r.Pass {
			fmt.Printf("GATE %s: %s seed %d: log-audit (gate's own reading) failed: %s\n", path, b.Meta.Scenario, b.Meta.Seed, r.Summary)
			for _, e := range r.Evidence {
				fmt.Printf("       %s\n", e)
			}
			failures++
		}
	}
	if failures > 0 {
		fmt.Printf("gate: %d failure(s) in %d bundle(s)\n", failures, len(args))
		return errFailed
	}
	fmt.Printf("gate: %d bundle(s), every audit passed\n", len(args))
	return nil
}

func cmdReport(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	screenshot := fs.Bool("screenshot", false, "open the report in headless Chromium, check it and write report.png beside it")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("report takes one bundle")
	}
	b, err := bundle.Open(pos[0])
	if err != nil {
		return err
	}
	if err := b.WriteSummary(); err != nil {
		return err
	}
	if err := b.WriteReport(); err != nil {
		return err
	}
	report := filepath.Join(b.Dir, bundle.ReportFile)
	fmt.Println(report)
	if !*screenshot {
		return nil
	}
	png := filepath.Join(b.Dir, bundle.ScreenshotFile)
	if _, err := browser.Check(ctx, report, browser.Options{PNG: png}); err != nil {
		return err
	}
	fmt.Println(png)
	return nil
}
