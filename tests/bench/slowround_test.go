package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/oplogha/oplogha/harness/benchreport"
)

// failoverFaults limits BenchmarkFailover to the faults whose slug contains
// one of OPLOGHA_BENCH_FAILOVER_FAULTS's comma-separated words (all of them
// when it is unset), so one fault can be measured on its own.
func failoverFaults(slug string) bool {
	want := os.Getenv("OPLOGHA_BENCH_FAILOVER_FAULTS")
	if want == "" {
		return true
	}
	for w := range strings.SplitSeq(want, ",") {
		if w = strings.TrimSpace(w); w != "" && strings.Contains(slug, w) {
			return true
		}
	}
	return false
}

// keepSlowRound writes what every process of the cluster under dir (the
// masters, etcd's members) logged from 2 s before a round's fault (what
// the standbys were doing) to just after its first acknowledgement (or the
// round's end) to <slug>-round-<i>.log beside the bench's figures, so a
// round over its target can be read afterwards: what the old primary did
// between the signal and its exit, when the successor won and served. A
// line's time is its JSON "time" (slog) or "ts" (zap) field; a line without
// one keeps the previous line's. Without OPLOGHA_BENCH_OUT the path is
// only logged.
func keepSlowRound(b *testing.B, dir string, slug string, i int, node string, t time.Time, took time.Duration) {
	b.Helper()
	out := os.Getenv(benchreport.EnvOut)
	if out == "" {
		b.Logf("%s round %d took %v (set %s to keep its cluster's logs)", slug, i, took, benchreport.EnvOut)
		return
	}
	path := filepath.Join(filepath.Dir(out), fmt.Sprintf("%s-round-%d.log", slug, i))
	var sb strings.Builder
	fmt.Fprintf(&sb, "# %s round %d: fault on %s at %s, first acknowledgement %v later\n", slug, i, node, t.Format(time.RFC3339Nano), took)
	from, to := t.Add(-2*time.Second), t.Add(took+200*time.Millisecond)
	var logs []string
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".log") {
			logs = append(logs, path)
		}
		return nil
	})
	sort.Strings(logs)
	for _, path := range logs {
		lines := linesBetween(path, t, from, to)
		if len(lines) == 0 {
			continue
		}
		fmt.Fprintf(&sb, "\n## %s\n", path)
		for _, line := range lines {
			sb.WriteString(line)
			sb.WriteByte('\n')
		}
	}
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		b.Logf("keep slow round: %v", err)
		return
	}
	b.Logf("%s round %d took %v: its cluster's logs in %s", slug, i, took, path)
}

// linesBetween is the lines of the log at path whose time falls in
// [from, to], each prefixed with its offset from the fault at t.
func linesBetween(path string, t, from, to time.Time) []string {
	f, err := os.Open(path)
	if err != nil {
		return []string{"(unreadable: " + err.Error() + ")"}
	}
	defer f.Close()
	var out []string
	var at time.Time
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var rec struct {
			Time time.Time `json:"time"` // slog's
			TS   time.Time `json:"ts"`   // zap's (etcd)
		}
		if json.Unmarshal(sc.Bytes(), &rec) == nil {
			if !rec.Time.IsZero() {
				at = rec.Time
			} else if !rec.TS.IsZero() {
				at = rec.TS
			}
		}
		if at.IsZero() || at.Before(from) || at.After(to) {
			continue
		}
		out = append(out, fmt.Sprintf("+%6dms %s", at.Sub(t).Milliseconds(), sc.Text()))
	}
	return out
}
