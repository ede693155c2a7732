// Package benchreport collects benchmark figures, each measured beside its
// baseline in the same process, and renders them as artifacts/bench/results.md
// and results.json. Benchmarks append figures to a JSON-lines file named by
// OPLOGHA_BENCH_OUT (nothing is written when it is unset, so a plain
// `go test -bench` still works); `chaos bench-report` renders the file.
package benchreport

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// EnvOut names the JSON-lines file benchmarks append their figures to.
const EnvOut = "OPLOGHA_BENCH_OUT"

// Figure is one measured number beside the baseline it is judged against.
// Ratio is Value/BaselineValue; LowerIsBetter says which way is good.
type Figure struct {
	Group         string    `json:"group"` // capture, pipeline, recovery, replay, codec, harness, etcd
	Name          string    `json:"name"`
	Value         float64   `json:"value"`
	Unit          string    `json:"unit"`
	Baseline      string    `json:"baseline,omitempty"`
	BaselineValue float64   `json:"baseline_value,omitempty"`
	Ratio         float64   `json:"ratio,omitempty"`
	LowerIsBetter bool      `json:"lower_is_better"`
	Target        string    `json:"target,omitempty"` // e.g. "< 1 ms", "≤ 1.5× baseline"
	Met           *bool     `json:"met,omitempty"`    // nil when the figure has no target
	Note          string    `json:"note,omitempty"`
	At            time.Time `json:"at"`
}

// WithBaseline sets the baseline and the ratio.
func (f Figure) WithBaseline(name string, value float64) Figure {
	f.Baseline, f.BaselineValue = name, value
	if value != 0 {
		f.Ratio = f.Value / value
	}
	return f
}

// WithTarget records a target and whether the figure meets it.
func (f Figure) WithTarget(target string, met bool) Figure {
	f.Target, f.Met = target, &met
	return f
}

var mu sync.Mutex // one process appends at a time per file; benchmarks run sequentially

// Record appends f to the file named by OPLOGHA_BENCH_OUT, if set.
func Record(f Figure) error {
	path := os.Getenv(EnvOut)
	if path == "" {
		return nil
	}
	if f.At.IsZero() {
		f.At = time.Now().UTC()
	}
	return appendLine(path, f)
}

// ErrNoFigures: the figures file holds nothing to report.
var ErrNoFigures = errors.New("no benchmark figures")

// Load reads a JSON-lines figures file; when a figure (group and name)
// appears more than once, the last one wins.
func Load(path string) ([]Figure, error) {
	in, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	var out []Figure
	index := map[string]int{}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var f Figure
		if err := json.Unmarshal(sc.Bytes(), &f); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		k := f.Group + "\x00" + f.Name
		if i, ok := index[k]; ok {
			out[i] = f
			continue
		}
		index[k] = len(out)
		out = append(out, f)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: %w", path, ErrNoFigures)
	}
	return out, nil
}
