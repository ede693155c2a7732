package main

import (
	"context"
	"encoding/xml"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
)

// cmdCompare prints, side by side, the verdicts of the same scenarios run
// against different master kinds: one JUnit file per kind (chaos run
// --junit), named kind=path. The table is markdown, ready for
// docs/upstream.md: per scenario, each kind's PASS, FAIL with the failed
// audits, or SKIP with the reason.
func cmdCompare(_ context.Context, args []string) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	out := fs.String("out", "", "also write the table to this file")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 1 {
		return fmt.Errorf("compare takes kind=junit.xml arguments, e.g. reference=artifacts/upstream/reference/junit.xml mooncake=…")
	}
	var kinds []string
	verdicts := map[string]map[string]string{} // scenario → kind → verdict
	for _, arg := range pos {
		kind, path, ok := strings.Cut(arg, "=")
		if !ok {
			return fmt.Errorf("%q: want kind=junit.xml", arg)
		}
		cases, err := readJUnitCases(path)
		if err != nil {
			return fmt.Errorf("%s: %w", kind, err)
		}
		kinds = append(kinds, kind)
		for _, c := range cases {
			if verdicts[c.Name] == nil {
				verdicts[c.Name] = map[string]string{}
			}
			verdicts[c.Name][kind] = caseVerdict(c)
		}
	}
	var names []string
	for n := range verdicts {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	fmt.Fprintf(&b, "| scenario | %s |\n|---|%s\n", strings.Join(kinds, " | "), strings.Repeat("---|", len(kinds)))
	for _, n := range names {
		row := make([]string, len(kinds))
		for i, k := range kinds {
			row[i] = verdicts[n][k]
			if row[i] == "" {
				row[i] = "not run"
			}
		}
		fmt.Fprintf(&b, "| %s | %s |\n", n, strings.Join(row, " | "))
	}
	fmt.Print(b.String())
	if *out != "" {
		return os.WriteFile(*out, []byte(b.String()), 0o644)
	}
	return nil
}

func readJUnitCases(path string) ([]junitCase, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s junitSuites
	if err := xml.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var out []junitCase
	for _, suite := range s.Suites {
		out = append(out, suite.Cases...)
	}
	return out, nil
}

func caseVerdict(c junitCase) string {
	switch {
	case c.Skipped != nil:
		return "SKIP: " + c.Skipped.Message
	case c.Failure != nil:
		return "**FAIL**: " + strings.ReplaceAll(c.Failure.Message, "|", "/")
	}
	return "PASS"
}
