package main

import (
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/oplogha/oplogha/harness/runner"
)

// JUnit XML, the subset CI systems read: one testcase per run, a failure
// element with every failed audit's summary and evidence.
type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Body    string `xml:",chardata"`
}

func writeJUnit(path string, outcomes []*runner.Outcome, total time.Duration) error {
	s := junitSuite{Name: "chaos", Tests: len(outcomes), Time: fmt.Sprintf("%.3f", total.Seconds())}
	for _, o := range outcomes {
		c := junitCase{Name: fmt.Sprintf("%s/seed=%d", o.Scenario, o.Seed), ClassName: "chaos." + o.Tier,
			Time: fmt.Sprintf("%.3f", o.Duration.Seconds()), SystemOut: "bundle: " + o.Archive}
		if o.Skipped != "" {
			s.Skipped++
			c.Skipped, c.SystemOut = &junitSkipped{Message: o.Skipped}, ""
		}
		if !o.Pass {
			s.Failures++
			var body strings.Builder
			if o.Err != nil {
				fmt.Fprintf(&body, "run error: %v\n", o.Err)
			}
			for _, r := range o.Results {
				if r.Pass {
					continue
				}
				fmt.Fprintf(&body, "%s: %s\n", r.Name, r.Summary)
				for _, e := range r.Evidence {
					fmt.Fprintf(&body, "  %s\n", e)
				}
			}
			fmt.Fprintf(&body, "replay: chaos replay %s\n", o.Archive)
			c.Failure = &junitFailure{Message: failedAudits(o), Body: body.String()}
		}
		s.Cases = append(s.Cases, c)
	}
	data, err := xml.MarshalIndent(junitSuites{Suites: []junitSuite{s}}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append([]byte(xml.Header), append(data, '\n')...), 0o644)
}
