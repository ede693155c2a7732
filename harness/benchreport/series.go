package benchreport

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// Series is a measured quantity over time, drawn as a scatter plot beside
// its group's figures (for example each acknowledged write's latency across
// a failover). Marks are labelled vertical lines: the fault, the first
// acknowledgement after it, the lease TTL.
type Series struct {
	Group  string  `json:"group"`
	Name   string  `json:"name"` // file name stem: [a-z0-9-]
	Title  string  `json:"title"`
	XLabel string  `json:"x_label"`
	YLabel string  `json:"y_label"`
	Points []Point `json:"points"`
	Marks  []Mark  `json:"marks,omitempty"`
}

// Point is one observation; Class groups points into one colour (the
// master that served the write).
type Point struct {
	X     float64 `json:"x"`
	Y     float64 `json:"y"`
	Class string  `json:"class,omitempty"`
}

// Mark is a labelled vertical line at X.
type Mark struct {
	X     float64 `json:"x"`
	Label string  `json:"label"`
}

// SeriesPath is where the series of the figures file at path are kept.
func SeriesPath(figures string) string {
	return strings.TrimSuffix(figures, ".jsonl") + ".series.jsonl"
}

// ErrBadSeriesName: a series name that cannot be a file name stem.
var ErrBadSeriesName = errors.New("series name must be [a-z0-9-]+")

// RecordSeries appends s beside the figures file named by
// OPLOGHA_BENCH_OUT, if set.
func RecordSeries(s Series) error {
	path := os.Getenv(EnvOut)
	if path == "" {
		return nil
	}
	if !validName(s.Name) {
		return fmt.Errorf("bench series %q: %w", s.Name, ErrBadSeriesName)
	}
	return appendLine(SeriesPath(path), s)
}

func validName(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' {
			return false
		}
	}
	return true
}

func appendLine(path string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	out, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("bench figures: %w", err)
	}
	if _, err := out.Write(append(data, '\n')); err != nil {
		out.Close()
		return fmt.Errorf("bench figures: %w", err)
	}
	return out.Close()
}

// LoadSeries reads the series kept beside the figures file at path (none
// when there is no series file); a later series of the same name wins.
func LoadSeries(figures string) ([]Series, error) {
	path := SeriesPath(figures)
	in, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer in.Close()
	var out []Series
	index := map[string]int{}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for line := 1; sc.Scan(); line++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var s Series
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		if !validName(s.Name) {
			return nil, fmt.Errorf("%s:%d: %q: %w", path, line, s.Name, ErrBadSeriesName)
		}
		if i, ok := index[s.Name]; ok {
			out[i] = s
			continue
		}
		index[s.Name] = len(out)
		out = append(out, s)
	}
	return out, sc.Err()
}
