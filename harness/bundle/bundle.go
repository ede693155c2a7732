// Package bundle is a run's artifact bundle: its layout, how it is read back
// (from a directory or a .tar.gz) into the audits' input, and how it is
// rendered for a person (summary.md, report.html) and compressed.
package bundle

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/oplogha/oplogha/harness/audit"
	"github.com/oplogha/oplogha/harness/etcddump"
	"github.com/oplogha/oplogha/harness/history"
	"github.com/oplogha/oplogha/harness/leak"
	"github.com/oplogha/oplogha/harness/masterkind"
	"github.com/oplogha/oplogha/harness/scenario"
)

// Files of a bundle.
const (
	ScenarioFile    = "scenario.yaml"         // the resolved scenario, seed included
	MetaFile        = "meta.json"             // run facts: binaries, timings, result
	EventsFile      = "events.jsonl"          // the timeline
	RetentionFile   = "retention.jsonl"       // once a second: floor, batch keys, snapshot groups, etcd db size
	HistoryFile     = "history.jsonl"         // every client op
	EtcdHistoryFile = "etcd/history.jsonl"    // MVCC history of the namespace from revision 1
	EtcdFinalFile   = "etcd/final.json"       // pointers, floor, prefix, batch range, revision
	EtcdMembersFile = "etcd/members.json"     // member status at the end
	NodesDir        = "nodes"                 // <name>.json (health + state dump), <name>.metrics.txt
	ObjectsFile     = "objects.json"          // the snapshot store at the end: pointers verified, listing
	VerifyFile      = "namespace-verify.json" // oplogctl verify's report on the namespace at the end
	BaseFile        = "legacy-base.json"      // what a legacy import brought: the fixture's objects and digest
	SnapshotsFile   = "snapshots.json"        // every snapshot a pointer named, and whether its objects were kept
	SnapshotsDir    = audit.KeptSnapshotsDir  // the kept snapshots' objects, each at its key
	LogsDir         = "logs"                  // every process log and config
	AuditFile       = "audit.json"
	SummaryFile     = "summary.md"
	ReportFile      = "report.html"
	ScreenshotFile  = "report.png" // report.html as headless Chromium shows it (chaos run --screenshot)
	LinearizeFile   = "linearizability.html"
	SecretsFile     = "secrets.json" // salted hashes of the run's secrets, for the log audit
	UnreadFile      = "unread.json"  // what the harness could not read at the end, and why (audit.Unread)
)

// Binary identifies one binary of the run.
type Binary struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	SHA256  string `json:"sha256"`
}

// Meta is meta.json.
type Meta struct {
	Scenario   string        `json:"scenario"`
	Tier       string        `json:"tier"`
	Seed       int64         `json:"seed"`
	Runtime    string        `json:"runtime"`
	ClusterID  string        `json:"cluster_id"`
	Started    time.Time     `json:"started"`
	DurationMS int64         `json:"duration_ms"`
	BootMS     int64         `json:"boot_ms"`
	Binaries   []Binary      `json:"binaries"`
	Processes  []ProcessInfo `json:"processes"`
	Steps      []StepTiming  `json:"steps"`
	Pass       bool          `json:"pass"`
	Error      string        `json:"error,omitempty"`
	Replayed   string        `json:"replayed_from,omitempty"`
	// Master is the master kind the run ran ("" in bundles from before
	// kinds: the reference master).
	Master string `json:"master,omitempty"`
}

// ProcessInfo is one process the run started.
type ProcessInfo struct {
	Name string   `json:"name"`
	PID  int      `json:"pid"`
	Args []string `json:"args"`
	Log  string   `json:"log"`
}

// StepTiming is how long one step took and whether it completed.
type StepTiming struct {
	Index   int    `json:"index"`
	Label   string `json:"label"`
	Line    int    `json:"line"`
	StartNS int64  `json:"start_ns"`
	EndNS   int64  `json:"end_ns"`
	OK      bool   `json:"ok"`
	Detail  string `json:"detail,omitempty"`
}

// Bundle is a bundle read back.
type Bundle struct {
	Dir      string
	Meta     Meta
	Scenario *scenario.Scenario
	Input    audit.Input
	Results  []audit.Result // as recorded in audit.json (nil when absent)

	tmp string // the extraction directory of an archive, removed by Close
}

// Close removes what Open extracted from an archive (nothing for a directory).
func (b *Bundle) Close() error {
	if b.tmp == "" {
		return nil
	}
	return os.RemoveAll(b.tmp)
}

// WriteJSON writes v as indented JSON at dir/name.
func WriteJSON(dir, name string, v any) error {
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

func readJSON(dir, name string, v any) error {
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// WriteEvents writes the timeline.
func WriteEvents(dir string, events []audit.Event) error { return writeLines(dir, EventsFile, events) }

// WriteRetention writes the retention series.
func WriteRetention(dir string, ss []audit.RetentionSample) error {
	return writeLines(dir, RetentionFile, ss)
}

func readEvents(dir string) ([]audit.Event, error) { return readLines[audit.Event](dir, EventsFile) }

// writeLines writes one JSON document per line.
func writeLines[T any](dir, name string, xs []T) error {
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	for _, x := range xs {
		if err := enc.Encode(x); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

func readLines[T any](dir, name string) ([]T, error) {
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return nil, err
	}
	var out []T
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if line == "" {
			continue
		}
		var x T
		if err := json.Unmarshal([]byte(line), &x); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", name, i+1, err)
		}
		out = append(out, x)
	}
	return out, nil
}

// Open reads a bundle from a directory or a .tar.gz (extracted next to it
// into a temporary directory the caller may remove with Close).
func Open(path string) (*Bundle, error) {
	dir := path
	if strings.HasSuffix(path, ".tar.gz") {
		d, err := extract(path)
		if err != nil {
			return nil, err
		}
		dir = d
	}
	b := &Bundle{Dir: dir}
	if dir != path {
		b.tmp = filepath.Dir(dir)
	}
	if err := readJSON(dir, MetaFile, &b.Meta); err != nil {
		return nil, fmt.Errorf("%s: not a bundle: %w", path, err)
	}
	sc, err := scenario.Load(filepath.Join(dir, ScenarioFile))
	if err != nil {
		return nil, err
	}
	b.Scenario = sc
	in := &b.Input
	in.ClusterID = sc.Cluster.ClusterID
	in.Expect = sc.Expect
	in.Steps = sc.FaultSteps()
	if in.Master, err = masterkind.ByName(b.Meta.Master); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if in.Ops, err = history.ReadFile(filepath.Join(dir, HistoryFile)); err != nil {
		return nil, err
	}
	if in.Etcd, err = etcddump.ReadHistoryFile(filepath.Join(dir, EtcdHistoryFile)); err != nil {
		return nil, err
	}
	if err := readJSON(dir, EtcdFinalFile, &in.Final); err != nil {
		return nil, err
	}
	if in.Events, err = readEvents(dir); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, RetentionFile)); err == nil {
		if in.Retention, err = readLines[audit.RetentionSample](dir, RetentionFile); err != nil {
			return nil, err
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ObjectsFile)); err == nil {
		var rep audit.StoreReport
		if err := readJSON(dir, ObjectsFile, &rep); err != nil {
			return nil, err
		}
		in.Objects = &rep
	}
	if _, err := os.Stat(filepath.Join(dir, VerifyFile)); err == nil {
		in.Verify = &audit.VerifyReport{}
		if err := readJSON(dir, VerifyFile, in.Verify); err != nil {
			return nil, err
		}
	}
	if _, err := os.Stat(filepath.Join(dir, BaseFile)); err == nil {
		in.Base = &audit.Base{}
		if err := readJSON(dir, BaseFile, in.Base); err != nil {
			return nil, err
		}
	}
	if _, err := os.Stat(filepath.Join(dir, SnapshotsFile)); err == nil {
		in.Snapshots = []audit.KeptSnapshot{}
		if err := readJSON(dir, SnapshotsFile, &in.Snapshots); err != nil {
			return nil, err
		}
	}
	if _, err := os.Stat(filepath.Join(dir, UnreadFile)); err == nil {
		if err := readJSON(dir, UnreadFile, &in.Unread); err != nil {
			return nil, err
		}
	}
	in.Dir = dir
	if in.Advertised, in.ReadPageSize, err = readMasterConfigs(dir); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, SecretsFile)); err == nil {
		in.Secrets = &leak.Secrets{}
		if err := readJSON(dir, SecretsFile, in.Secrets); err != nil {
			return nil, err
		}
	}
	nodes, _ := filepath.Glob(filepath.Join(dir, NodesDir, "*.json"))
	sort.Strings(nodes)
	for _, p := range nodes {
		var n audit.Node
		if err := readJSON(filepath.Dir(p), filepath.Base(p), &n); err != nil {
			return nil, err
		}
		in.Nodes = append(in.Nodes, n)
	}
	if _, err := os.Stat(filepath.Join(dir, AuditFile)); err == nil {
		var rs struct {
			Results []audit.Result `json:"results"`
		}
		if err := readJSON(dir, AuditFile, &rs); err != nil {
			return nil, err
		}
		b.Results = rs.Results
	}
	return b, nil
}

// AuditRecord is audit.json.
type AuditRecord struct {
	Scenario string         `json:"scenario"`
	Seed     int64          `json:"seed"`
	Pass     bool           `json:"pass"`
	Results  []audit.Result `json:"results"`
}

// Audit runs the audits over the bundle's contents and writes audit.json.
func (b *Bundle) Audit() ([]audit.Result, error) {
	rs := audit.Run(&b.Input)
	b.Results = rs
	return rs, WriteJSON(b.Dir, AuditFile, AuditRecord{Scenario: b.Meta.Scenario, Seed: b.Meta.Seed, Pass: audit.Passed(rs) && b.Meta.Error == "", Results: rs})
}

// Pass is the bundle's verdict: every audit passed and the run had no error.
func (b *Bundle) Pass() bool { return audit.Passed(b.Results) && b.Meta.Error == "" }
