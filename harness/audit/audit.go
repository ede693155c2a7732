// Package audit holds the named checks that decide a run: each reads only
// what a bundle holds (client history, final node states, etcd's MVCC
// history, the event timeline, the scenario's expectations), so `chaos audit`
// reproduces a run's verdicts offline, and each returns pass/fail with the
// evidence a person needs to see why.
package audit

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/oplogha/oplogha/harness/client"
	"github.com/oplogha/oplogha/harness/etcddump"
	"github.com/oplogha/oplogha/harness/history"
	"github.com/oplogha/oplogha/harness/leak"
	"github.com/oplogha/oplogha/harness/masterkind"
)

// Node is one master as the run left it.
type Node struct {
	Name    string        `json:"name"`
	Running bool          `json:"running"`
	Health  client.Health `json:"health"`
	State   client.State  `json:"state"` // with dump
}

// Expect is what a scenario expects of its run.
type Expect struct {
	RecoverySource []string `yaml:"recovery_source" json:"recovery_source,omitempty"` // allowed bootstrap sources at the end
	MinOKOps       int      `yaml:"min_ok_ops" json:"min_ok_ops"`
	MinPromotions  int      `yaml:"min_promotions" json:"min_promotions"`
	Audits         []string `yaml:"audits" json:"audits,omitempty"` // empty: all
	// Windows the run is meant to reach (Windows): minimum-work fails a
	// run that reached one of them not once.
	Windows []string `yaml:"windows,omitempty" json:"windows,omitempty"`
	// ExitReasons are what a master that exits on its own as the scenario
	// means it to says in its last log lines (a refusal's code, e.g.
	// residue_without_history): process-exits does not count such an exit.
	ExitReasons []string `yaml:"exit_reasons,omitempty" json:"exit_reasons,omitempty"`
	// Retention bounds over the whole run (0: report only).
	MaxBatchKeys      int `yaml:"max_batch_keys,omitempty" json:"max_batch_keys,omitempty"`
	MaxSnapshotGroups int `yaml:"max_snapshot_groups,omitempty" json:"max_snapshot_groups,omitempty"`
	// MaxMaintenanceHold bounds how long one lease may hold the
	// maintenance key, and MaxPublicationGap how long latest may stand
	// still, each as etcd's history placed in time by the retention
	// samples proves at least (0: report only).
	MaxMaintenanceHold time.Duration `yaml:"max_maintenance_hold,omitempty" json:"max_maintenance_hold,omitempty"`
	MaxPublicationGap  time.Duration `yaml:"max_publication_gap,omitempty" json:"max_publication_gap,omitempty"`
}

// Event is one entry of the run's timeline.
type Event struct {
	At     int64  `json:"t_ns"` // since the run's start
	Kind   string `json:"kind"` // step, fault, heal, role, wait, note, error, hit, exit
	Name   string `json:"name,omitempty"`
	Target string `json:"target,omitempty"`
	Detail string `json:"detail,omitempty"`
	OK     bool   `json:"ok"`
	// Revisions are etcd revisions this event wrote (injected corruption).
	Revisions []int64 `json:"revisions,omitempty"`
	// Corrupted are snapshot ids whose objects this event damaged behind
	// the store, and EtcdRevision etcd's revision once it had.
	Corrupted []string `json:"corrupted,omitempty"`
	// Ended are the masters whose process this event ended (a kill, stop,
	// restart or crash), EtcdRevision etcd's revision once they had: what
	// such a node does after it is a later incarnation's. On a heal,
	// EtcdRevision is etcd's revision as the heal began.
	Ended        []string `json:"ended,omitempty"`
	EtcdRevision int64    `json:"etcd_rev,omitempty"`
	// EtcdRevisionNote says why EtcdRevision is unknown (0) — etcd could
	// not be read around the event, the harness never waits for it — or
	// that it was read late ("read 8.2s after the act"): an audit that
	// needs the revision says so instead of guessing.
	EtcdRevisionNote string `json:"etcd_rev_note,omitempty"`
	// Anchor is the logical event a fault landed on (fault events only).
	Anchor *Anchor `json:"anchor,omitempty"`
	// Settle marks a heal the runner made after the steps, for a fault no
	// step healed: it is no step's work, and minimum-work does not count it.
	Settle bool `json:"settle,omitempty"`
	// Log is, on an exit event, the process's last log lines.
	Log []string `json:"log,omitempty"`
}

// The names of an "exit" event: a master's process ended without the
// harness asking (no kill, no stop). ExitArmed: at a crash window the
// scenario armed (a panic term); ExitOwn: on its own.
const (
	ExitArmed = "at an armed crash window"
	ExitOwn   = "on its own"
)

// Anchor is what the system had done when a fault was injected, so a replay
// can inject it at the same logical event rather than at the same offset:
// the step, the durable batch and etcd revision, each master's role, the
// nodes it hit, and the failpoint hit a preceding wait saw.
type Anchor struct {
	Step    int    `json:"step"` // 1-based index of the fault's step
	BatchID uint64 `json:"batch_id"`
	// OKOps is how many client ops had been acknowledged: progress a
	// replay can reach against any master (a batch id is numbered by the
	// master's own batching).
	OKOps   int64             `json:"ok_ops,omitempty"`
	EtcdRev int64             `json:"etcd_rev"`
	Roles   map[string]string `json:"roles,omitempty"` // master → role at injection
	Targets []string          `json:"targets,omitempty"`
	// AfterFailpoint is the failpoint hit the step before waited for
	// ("name@node×hits"), when it did.
	AfterFailpoint string `json:"after_failpoint,omitempty"`
}

// Input is everything the audits read.
type Input struct {
	ClusterID string
	// Master is the kind of master the run ran: an audit that needs what
	// it does not expose is skipped with the reason (the zero Kind: the
	// reference master, for inputs built by hand).
	Master masterkind.Kind
	Expect Expect
	Ops    []history.Op
	Nodes  []Node
	Etcd   []etcddump.Event
	Final  etcddump.Final
	Events []Event
	Steps  int // fault/heal steps the scenario has
	// Objects is what the harness found in the snapshot store at the end
	// (nil: the run had no store).
	Objects *StoreReport
	// Verify is what the operator's verifier (oplogctl verify) found in the
	// namespace at the end (nil: not run, as in bundles older than it).
	Verify *VerifyReport
	// Retention is the once-a-second reading of what the cluster retains.
	Retention []RetentionSample
	// Base is what a legacy import brought into the namespace before any
	// client op, as the harness read it from the fixture (nil: no import).
	Base *Base
	// Advertised maps each master's advertise_url (the value of its
	// election candidate key) to its node_id (the first part of the writer
	// tokens it puts), as the harness configured them (the bundle's
	// logs/masters/*.yaml); nil when the bundle holds no configs.
	Advertised map[string]string
	// ReadPageSize is the OpLog reader's page size (batches per range
	// read) the masters' configs set, the largest of them (0: unknown, as
	// for a kind whose configs the bundle does not read): a replay's page
	// count is counted with it.
	ReadPageSize int
	// Snapshots are the snapshots pointers named during the run and what
	// the bundle kept of each (nil: a bundle without the record).
	Snapshots []KeptSnapshot
	// Unread is the evidence the harness could not read at the end of the
	// run, and why (nil: it read everything): an audit that reads it
	// fails with "cannot judge" instead of judging what is missing.
	Unread Unread
	// Dir is the bundle's directory and Secrets what its secrets.json says
	// to look for there (the log audit).
	Dir     string
	Secrets *leak.Secrets
}

// Base is the content of an imported legacy snapshot: objects acknowledged
// before the history starts. The objects, segments and sequence are what
// the harness read from the fixture's files (through impl/contract's
// legacy layout reader); Digest is the state digest the fixture's
// expect.json gives, which the fixture generator computed by applying the
// same content as OpLog mutations.
type Base struct {
	Fixture          string       `json:"fixture"`
	LegacyClusterID  string       `json:"legacy_cluster_id"`
	LegacySnapshotID string       `json:"legacy_snapshot_id"`
	LegacySeq        uint64       `json:"legacy_last_included_seq"`
	Digest           string       `json:"state_digest"`
	Segments         int          `json:"segments"`
	Objects          []BaseObject `json:"objects"`
}

// BaseObject is one imported object.
type BaseObject struct {
	Tenant string `json:"tenant"`
	Key    string `json:"key"`
	Size   uint64 `json:"size"`
}

// StoreReport is the object store as the run left it.
type StoreReport struct {
	Store     string         `json:"store"`
	Pointers  []PointerCheck `json:"pointers"`
	Snapshots int            `json:"snapshot_groups"` // distinct snapshot ids under the cluster prefix
	Objects   int            `json:"objects"`
	Bytes     int64          `json:"bytes"`
	Listing   []ListedObject `json:"listing,omitempty"`
	// Access is the store's own record of the requests that wrote or
	// deleted objects under the cluster's snapshot root, in order (nil: the
	// store keeps no such record).
	Access *StoreAccess `json:"access,omitempty"`
}

// StoreAccess is what the object store recorded of the requests it served
// under the snapshot root: writes (PUT, multipart create, part, complete,
// copy) and deletes, each with its key and status, never who sent it.
type StoreAccess struct {
	Requests []StoreRequest `json:"requests"`
	// Truncated: more requests were recorded than the bundle keeps.
	Truncated bool `json:"truncated,omitempty"`
	// Error: the record could not be read whole (what was read is kept).
	Error string `json:"error,omitempty"`
}

// StoreRequest is one request the object store served.
type StoreRequest struct {
	Op     string `json:"op"`
	Key    string `json:"key"`
	Status int    `json:"status"`
	// At is when the store logged it, in Unix seconds (its log's
	// resolution; 0: unknown, as in bundles from before it was kept).
	At int64 `json:"at_unix,omitempty"`
}

// PointerCheck is one final pointer and the verdict on the snapshot it
// names, opened by exact keys and verified (the runner takes it from the
// operator's verifier, which opens each pointer's snapshot with
// batchsnap.Open).
type PointerCheck struct {
	Slot       string `json:"slot"`
	Raw        string `json:"raw,omitempty"`
	SnapshotID string `json:"snapshot_id,omitempty"`
	Valid      bool   `json:"valid"`    // the pointer decoded
	Verified   bool   `json:"verified"` // its snapshot opened and verified
	Error      string `json:"error,omitempty"`
}

// VerifyReport is the part of oplogctl verify's JSON report the audits read.
type VerifyReport struct {
	Revision   int64             `json:"revision"`
	Keys       int64             `json:"keys"`
	Batches    int64             `json:"batches"`
	Violations []VerifyViolation `json:"violations"`
}

// VerifyViolation is one rule the verifier found broken, at its key.
type VerifyViolation struct {
	Key    string `json:"key"`
	Reason string `json:"reason"`
}

// ListedObject is one stored object.
type ListedObject struct {
	Key  string `json:"key"`
	Size int64  `json:"size"`
}

// Result is one check's verdict.
type Result struct {
	Name     string   `json:"name"`
	Pass     bool     `json:"pass"`
	Summary  string   `json:"summary"`
	Evidence []string `json:"evidence,omitempty"`
	// Exercised counts, by invariant id (and "id: what" for finer counts),
	// how often the run put an invariant to the test (Invariant.Exercise).
	Exercised map[string]int `json:"exercised,omitempty"`
	// Skipped: the audit did not run, because the master does not expose
	// what it reads (Summary says what). A skipped audit fails nothing and
	// proves nothing; reports show it as a skip.
	Skipped bool `json:"skipped,omitempty"`
}

// Check is one named audit.
type Check struct {
	Name string
	Doc  string
	Run  func(in *Input) Result
	// Needs are the capabilities of the master the audit reads from.
	Needs []masterkind.Capability
	// Reads is the evidence the audit judges from (EvidenceEtcd,
	// EvidenceStore, EvidenceNodes): when the harness could not read one of
	// them at the end of the run, the audit fails saying it cannot judge.
	Reads []string
}

// The evidence an audit reads, as Unread names it.
const (
	EvidenceEtcd  = "etcd"  // etcd's MVCC history and final keys
	EvidenceStore = "store" // the snapshot store's objects
	EvidenceNodes = "nodes" // every running master's health and state (Unread's key: "node master-N")
)

// Unread is what the harness could not read at the end of a run, by
// evidence ("etcd", "store", or "node <name>"), and why.
type Unread map[string]string

// missing is why ev cannot be judged ("": it was read). For EvidenceNodes
// it names every node that was not read.
func (u Unread) missing(ev string) string {
	if ev != EvidenceNodes {
		if why, ok := u[ev]; ok {
			return fmt.Sprintf("%s unreachable at the end of the run: cannot judge (%s)", ev, why)
		}
		return ""
	}
	var nodes []string
	for k, why := range u {
		if name, ok := strings.CutPrefix(k, "node "); ok {
			nodes = append(nodes, fmt.Sprintf("%s: %s", name, why))
		}
	}
	if len(nodes) == 0 {
		return ""
	}
	slices.Sort(nodes)
	return "a master unreadable at the end of the run: cannot judge (" + strings.Join(nodes, "; ") + ")"
}

// Checks are every audit, in report order.
func Checks() []Check {
	return []Check{
		{"durable-acknowledgement", "every acknowledged mutation is in the durable history (etcd's MVCC history, decoded through the contract) " +
			"at or below the final durable prefix, and one key's acknowledgements are in the OpLog in the order they were acknowledged",
			DurableAcknowledgement, nil, etcdOnly},
		{"acknowledged-data", "every acknowledged write is present on every node at the end, nothing unacknowledged is invented " +
			"(a second opinion: read from the nodes' own state dumps)", AcknowledgedData, needsState, nodesOnly},
		{"linearizability", "the client history (puts, removes, reads) has a linearization (porcupine)", Linearizability, nil, nil},
		{"keyspace-order", "etcd's MVCC history obeys the OpLog protocol: views grow, prefix and batch move together, batches " +
			"are written once, deletes only under a published floor", KeyspaceOrder, nil, etcdOnly},
		{"convergence", "every running node ends at the final durable prefix with the state digest the harness's model rebuilds " +
			"for it from the etcd history (and the nodes agree)", Convergence, needsState, etcdAndNodes},
		{"recovered-state", "each running node's final state equals the model's state at its cursor, rebuilt from the durable " +
			"history alone: object by object, segment by segment, digest; no two live objects share memory at any durable prefix",
			RecoveredState, needsState, etcdAndNodes},
		{"snapshot-content", "every snapshot a pointer named, as the run kept it, decodes through the contract (upstream's " +
			"format) and holds exactly the model's state at its cursor; an import's holds the fixture's content; the final " +
			"pointers' snapshots are judged", SnapshotContent, nil, etcdAndStore},
		{"recovery-source", "every node bootstrapped from a source the scenario expects", RecoverySource,
			[]masterkind.Capability{masterkind.BootstrapReport}, nodesOnly},
		{"objects", "every final pointer names a snapshot whose objects exist and verify against its manifest", ObjectsAudit, nil, etcdAndStore},
		{"legacy-import", "a legacy import happened exactly when the scenario asked for one: one import record naming the " +
			"fixture's snapshot and its exact digest", LegacyImport, nil, etcdOnly},
		{"operator-verify", "oplogctl verify finds no violation in the namespace the run left (every batch record, the prefix " +
			"and its terminal batch, the view, the floor, the pointers and their snapshots) but at what a fault left damaged on " +
			"purpose, which it names", OperatorVerify, nil, etcdAndStore},
		{"retention-bounds", "the OpLog's batch keys and the snapshot groups stayed within the scenario's bounds the whole run", RetentionBounds, nil, nil},
		{"log-audit", "no secret, private key or signed URL in any file of the bundle, no tenant key or payload in any process log", LogAudit, nil, nil},
		{"process-exits", "no master's process ended on its own (a signal, an exit status, an abort the harness did not cause) " +
			"or crash-looped, beyond a crash window the scenario armed or an exit it expects", ProcessExits, nil, nil},
		{"minimum-work", "the run did enough: acknowledged ops, injected faults, promotions", MinimumWork, nil, nil},
	}
}

// needsState: the audit reads each node's state (digest and dump).
var needsState = []masterkind.Capability{masterkind.State}

// What each audit reads (Check.Reads).
var (
	etcdOnly     = []string{EvidenceEtcd}
	nodesOnly    = []string{EvidenceNodes}
	etcdAndNodes = []string{EvidenceEtcd, EvidenceNodes}
	etcdAndStore = []string{EvidenceEtcd, EvidenceStore}
)

// mandatory checks run on every bundle, whatever the scenario lists.
var mandatory = map[string]bool{"log-audit": true}

// Run runs the checks the scenario asks for (all when it names none).
func Run(in *Input) []Result {
	want := map[string]bool{}
	for _, a := range in.Expect.Audits {
		want[a] = true
	}
	var out []Result
	for _, c := range Checks() {
		if len(want) > 0 && !want[c.Name] && !mandatory[c.Name] {
			continue
		}
		master := in.Master
		if master.Name == "" {
			master = masterkind.Reference()
		}
		if why := master.SkipReason(c.Needs); why != "" {
			out = append(out, Result{Name: c.Name, Pass: true, Skipped: true, Summary: "skipped: " + why})
			continue
		}
		if why := cannotJudge(in, c.Reads); why != "" {
			out = append(out, Result{Name: c.Name, Summary: why, Evidence: []string{why}})
			continue
		}
		r := c.Run(in)
		r.Name = c.Name
		out = append(out, r)
	}
	return out
}

// cannotJudge is why evidence an audit reads is missing ("": none is).
func cannotJudge(in *Input, reads []string) string {
	var why []string
	for _, ev := range reads {
		if w := in.Unread.missing(ev); w != "" {
			why = append(why, w)
		}
	}
	return strings.Join(why, "; ")
}

// Passed reports whether every result passed (and there was at least one).
func Passed(rs []Result) bool {
	if len(rs) == 0 {
		return false
	}
	for _, r := range rs {
		if !r.Pass {
			return false
		}
	}
	return true
}

// maxEvidence is how many findings an audit lists before it counts the rest.
const maxEvidence = 20

// evidence caps a list of findings, saying how many were left out.
type evidence struct {
	lines []string
	more  int
}

// prepend puts lines before every finding so far (what explains them),
// within the cap.
func (e *evidence) prepend(lines ...string) {
	e.lines = append(append([]string(nil), lines...), e.lines...)
	if over := len(e.lines) - maxEvidence; over > 0 {
		e.lines, e.more = e.lines[:maxEvidence], e.more+over
	}
}

func (e *evidence) add(format string, args ...any) {
	if len(e.lines) >= maxEvidence {
		e.more++
		return
	}
	e.lines = append(e.lines, fmt.Sprintf(format, args...))
}

func (e *evidence) list() []string {
	if e.more > 0 {
		return append(e.lines, fmt.Sprintf("… and %d more", e.more))
	}
	return e.lines
}

func (e *evidence) empty() bool { return len(e.lines) == 0 }

func seconds(ns int64) string { return fmt.Sprintf("%.3fs", float64(ns)/1e9) }
