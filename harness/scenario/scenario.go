// Package scenario is the YAML scenario format: cluster shape, master
// configuration, traffic, an ordered list of steps (wait, sleep, fault, heal,
// restart, traffic start/stop, assert) and expectations. Load validates a
// file whole and reports every problem with its line number.
package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/oplogha/oplogha/impl/contract/keyspace"

	"go.yaml.in/yaml/v3"

	"github.com/oplogha/oplogha/faults"
	"github.com/oplogha/oplogha/harness/audit"
	"github.com/oplogha/oplogha/harness/masterkind"
	"github.com/oplogha/oplogha/harness/traffic"
)

// Scenario is one scenario file.
type Scenario struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description,omitempty"`
	// pr | nightly | docker (the docker runtime) | swarm (drawn by chaos swarm) |
	// upstream (run against both master kinds by make upstream-chaos: they
	// need nothing upstream's master lacks) | harness-test (proves the
	// harness itself; in no tier)
	Tier   string   `yaml:"tier"`
	Covers []string `yaml:"covers,omitempty"` // RFC rows and windows it exercises
	// Require lists capabilities the scenario needs of its master beyond
	// what its content implies (Requires adds those): a run against a
	// master that lacks one is skipped with the reason.
	Require []string      `yaml:"requires,omitempty"`
	Seed    int64         `yaml:"seed"`
	Timeout time.Duration `yaml:"timeout,omitempty"` // whole run; default 10m
	// Runtime is where the cluster runs: process (default: local processes)
	// or docker (containers on a private network); chaos run --runtime
	// overrides it.
	Runtime string         `yaml:"runtime,omitempty"`
	Cluster Cluster        `yaml:"cluster"`
	Traffic traffic.Config `yaml:"traffic"`
	Steps   []Step         `yaml:"steps"`
	Expect  audit.Expect   `yaml:"expect"`

	Path string `yaml:"-"` // where it was loaded from
}

// Cluster is the shape to bring up.
type Cluster struct {
	// Master is the master kind: reference (default) or mooncake
	// (upstream's mooncake_master); chaos run --master overrides it.
	Master         string            `yaml:"master,omitempty"`
	Etcd           int               `yaml:"etcd"`    // members (default 3)
	Masters        int               `yaml:"masters"` // default 3
	ClusterID      string            `yaml:"cluster_id,omitempty"`
	Config         map[string]any    `yaml:"config,omitempty"` // master config keys for every node
	EtcdQuotaBytes int64             `yaml:"etcd_quota_bytes,omitempty"`
	Failpoints     map[string]string `yaml:"failpoints,omitempty"` // enabled on every master at start
	S3             string            `yaml:"s3,omitempty"`         // snapshot store: versitygw | gofakes3 | local
	// LegacyImport starts every master in legacy-import mode on this root
	// of old primary snapshots; the audits then expect its content.
	LegacyImport *LegacyImport `yaml:"legacy_import,omitempty"`
	// Security runs the cluster with TLS and authentication.
	Security Security `yaml:"security,omitempty"`
	// BuildTags build the master with Go build tags: sabotage compiles in
	// the deliberately broken failpoints that prove the audits can fail
	// (tier harness-test only; no release build has them).
	BuildTags []string `yaml:"build_tags,omitempty"`
	// Supervisor runs every master under a supervisor that restarts it
	// when it exits, as systemd or a Kubernetes pod would.
	Supervisor *Supervisor `yaml:"supervisor,omitempty"`
	// EtcdKeys are put into etcd once it is up, before any master starts:
	// what another version or an operator left in the namespace. A key is
	// named as an etcd-key fault's target is (a name under
	// /oplog/{cluster}/, or a raw key from /).
	EtcdKeys map[string]string `yaml:"etcd_keys,omitempty"`
}

// Supervisor is how masters are restarted when they exit.
type Supervisor struct {
	Restart string        `yaml:"restart"`           // always | on-failure
	Backoff time.Duration `yaml:"backoff,omitempty"` // first delay (default 500ms), doubled in a crash loop
}

// Security is what a cluster runs with beyond plain loopback links.
type Security struct {
	// TLS: etcd client and peer links with mutual TLS and S3 over https,
	// certificates made for the run.
	TLS bool `yaml:"tls,omitempty"`
	// Auth: etcd authentication on, masters as a user whose role reaches
	// /oplog/{cluster_id}/ only, and a snapshot writer identity on the S3
	// server limited to the snapshot prefix (versitygw). Needs TLS.
	Auth bool `yaml:"auth,omitempty"`
}

// LegacyImport names the old snapshot a fresh cluster imports.
type LegacyImport struct {
	// Root holds mooncake_master_snapshot/{cluster_id}/latest.txt and the
	// snapshot directories, and an expect.json with the state digest an
	// import of the snapshot must record (fixtures/legacy/legacyfixture
	// writes both); a relative path is relative to the repository (e.g.
	// fixtures/legacy/small).
	Root       string `yaml:"root"`
	ClusterID  string `yaml:"cluster_id,omitempty"`  // the old namespace under the root (default: the cluster's)
	SnapshotID string `yaml:"snapshot_id,omitempty"` // default: the one latest.txt names
}

// Step is one step; exactly one action field is set.
type Step struct {
	Name    string        `yaml:"name,omitempty"`
	Wait    *Wait         `yaml:"wait,omitempty"`
	Sleep   time.Duration `yaml:"sleep,omitempty"`
	Fault   *faults.Spec  `yaml:"fault,omitempty"`
	As      string        `yaml:"as,omitempty"`   // names the fault for heal and waits
	Heal    string        `yaml:"heal,omitempty"` // a fault's `as` name, or "all"
	Restart *Restart      `yaml:"restart,omitempty"`
	Traffic string        `yaml:"traffic,omitempty"` // start | stop
	Assert  *Assert       `yaml:"assert,omitempty"`
	Probe   *Probe        `yaml:"probe,omitempty"`

	Line int `yaml:"-"`
}

// StepKinds are the kinds of step (Step.Kind); WaitKinds what a wait can
// wait for (Wait.For). Every one has a bound the runner holds it to.
var (
	StepKinds = []string{"wait", "sleep", "fault", "heal", "restart", "traffic", "assert", "probe"}
	WaitKinds = []string{"primary", "no-primary", "caught-up", "ops", "role", "leader", "snapshots", "pruned", "suffix",
		"maintenance", "metric", "failpoint"}
)

// Wait blocks until a condition holds or its timeout passes (a failed step).
type Wait struct {
	For       string        `yaml:"for"` // one of WaitKinds
	Timeout   time.Duration `yaml:"timeout,omitempty"`
	Excluding string        `yaml:"excluding,omitempty"` // primary: not the node a named fault hit
	Ops       int           `yaml:"ops,omitempty"`       // ops: this many more acknowledged ops
	Node      string        `yaml:"node,omitempty"`      // role, leader, maintenance: node name or a fault's `as` name
	Role      string        `yaml:"role,omitempty"`      // role: standby | primary | failed | down | up (primary or standby: back, whichever role it won)
	Count     int           `yaml:"count,omitempty"`     // snapshots: this many new publications of latest
	// Batches (suffix): until the durable prefix is this many batches above
	// the newest pointer that decodes (latest, else fallback; none: batch
	// 0): a bootstrap then replays at least that many.
	Batches int `yaml:"batches,omitempty"`
	// Above (suffix): count the batches above the durable prefix at the
	// last hit of this failpoint fault (its `as` name) instead: a node held
	// there has a cursor at or below that prefix, so it is then at least
	// Batches behind.
	Above string `yaml:"above,omitempty"`
	// Covering (snapshots): until latest names the durable prefix's batch,
	// after which, with no new batch, nothing newer can be published: a
	// fault aimed at latest then hits the snapshot recovery will read.
	Covering bool          `yaml:"covering,omitempty"`
	Metric   *MetricAssert `yaml:"metric,omitempty"` // metric: until the sample reaches its minimum
	// Failpoint: until the named failpoint's term has fired Hits times (default
	// 1) on Node — a master, or the `as` name of a failpoint fault, whose name
	// is then the default. A hold term (return("hold")) keeps the node in the
	// window until the fault is healed.
	Failpoint string `yaml:"failpoint,omitempty"`
	Hits      int    `yaml:"hits,omitempty"`
}

// Probe puts fresh keys at the serving primary other than Node (its
// successor) and reads each at Node once the put is acknowledged, as a
// client still talking to Node would: every op is recorded in the client
// history with the node it went to, so the audits judge what Node
// answered (a deposed primary must not serve a state its successor has
// moved past).
type Probe struct {
	Node string `yaml:"node"`           // a master, or a fault's `as` name
	Keys int    `yaml:"keys,omitempty"` // how many keys (default 20)
}

// Restart restarts a group of masters.
type Restart struct {
	Target string `yaml:"target"` // all-masters
	Mode   string `yaml:"mode"`   // cold (graceful stop of all, then start) | crash (SIGKILL all, then start)
	// Config keys every master starts with from now on (a rollout, e.g.
	// enabling pruning once two snapshots exist).
	Config map[string]any `yaml:"config,omitempty"`
}

// Assert checks the cluster now.
type Assert struct {
	BootstrapSource []string `yaml:"bootstrap_source,omitempty"` // every running master bootstrapped from one of these
	Serving         *int     `yaml:"serving,omitempty"`          // exactly this many serving primaries (1, or 0 when failing closed)
	// NoSnapshotsFor watches the latest pointer for this long: it must not change.
	NoSnapshotsFor time.Duration `yaml:"no_snapshots_for,omitempty"`
	// NoViewClaimsFor watches the producer view for this long: no node may
	// claim a view (a promotion that cannot serve must not fence anyone).
	NoViewClaimsFor time.Duration `yaml:"no_view_claims_for,omitempty"`
	// NoCampaignFor watches the election prefix for this long: no node may
	// campaign (no leader key at all).
	NoCampaignFor time.Duration `yaml:"no_campaign_for,omitempty"`
	// Metric requires a Prometheus sample on a node to reach a minimum.
	Metric *MetricAssert `yaml:"metric,omitempty"`
	// Oplog checks the batch keys and the compaction floor in etcd.
	Oplog *OplogAssert `yaml:"oplog,omitempty"`
	// Refuses starts one more master against the live cluster with every
	// node's settings plus these keys; it must exit non-zero by itself and
	// say so in one line.
	Refuses *RefusesAssert `yaml:"refuses,omitempty"`
}

// RefusesAssert is a configuration a master must refuse at startup (with
// an empty config: the masters' own settings, refused for what the cluster
// holds).
type RefusesAssert struct {
	Config  map[string]any `yaml:"config"`
	Says    string         `yaml:"says"` // a substring of its one-line reason
	Timeout time.Duration  `yaml:"timeout,omitempty"`
}

// OplogAssert describes the OpLog's shape in etcd; unset fields are not checked.
type OplogAssert struct {
	// Complete: no floor (or floor 0) and every batch from 1 to the durable
	// prefix present — a bootstrap from the complete OpLog is possible.
	Complete *bool `yaml:"complete,omitempty"`
	// FloorMin: the floor is at least this batch.
	FloorMin uint64 `yaml:"floor_min,omitempty"`
	// BelowFloor: true, batches at or below the floor are still present (a
	// delete has not run yet); false, none are.
	BelowFloor *bool `yaml:"below_floor,omitempty"`
}

// MetricAssert names one sample, e.g. oplogha_capture_skips_total{reason="promotion"}.
// With node "any", min holds if one running node reaches it and max only
// if every running node stays at or under it.
type MetricAssert struct {
	Node   string   `yaml:"node"` // a master, a fault's `as` name, or "any"
	Sample string   `yaml:"sample"`
	Min    float64  `yaml:"min"`
	Max    *float64 `yaml:"max,omitempty"`
}

// Kind names the step's action.
func (s Step) Kind() string {
	switch {
	case s.Wait != nil:
		return "wait"
	case s.Sleep > 0:
		return "sleep"
	case s.Fault != nil:
		return "fault"
	case s.Heal != "":
		return "heal"
	case s.Restart != nil:
		return "restart"
	case s.Traffic != "":
		return "traffic"
	case s.Assert != nil:
		return "assert"
	case s.Probe != nil:
		return "probe"
	}
	return ""
}

// Label is a short description for progress lines and the timeline.
func (s Step) Label() string {
	if s.Name != "" {
		return s.Name
	}
	switch s.Kind() {
	case "wait":
		return "wait for " + s.Wait.For
	case "sleep":
		return "sleep " + s.Sleep.String()
	case "fault":
		t := s.Fault.Target
		if t == "" {
			t = s.Fault.Link
		}
		if s.Fault.Kind == "failpoint" {
			return fmt.Sprintf("failpoint %s=%s on %s", s.Fault.Name, s.Fault.Term, orDefault(s.Fault.Target, "primary"))
		}
		return strings.TrimSpace(s.Fault.Kind + " " + t)
	case "heal":
		return "heal " + s.Heal
	case "restart":
		return s.Restart.Mode + " restart " + s.Restart.Target
	case "traffic":
		return "traffic " + s.Traffic
	case "assert":
		return "assert"
	case "probe":
		return "probe reads at " + s.Probe.Node
	}
	return "?"
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// FaultSteps counts the fault and heal events the steps must produce
// (minimum-work): one per fault or heal, two per restart (down, then up).
func (sc *Scenario) FaultSteps() int {
	n := 0
	for _, s := range sc.Steps {
		switch s.Kind() {
		case "fault", "heal":
			n++
		case "restart":
			n += 2
		}
	}
	return n
}

// LoadError lists every problem of a file, each with its line.
type LoadError struct {
	Path     string
	Problems []string
}

func (e *LoadError) Error() string {
	return e.Path + ":\n  " + strings.Join(e.Problems, "\n  ")
}

// Load reads and validates a scenario file.
func Load(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	sc, err := Parse(data)
	if err != nil {
		var le *LoadError
		if errors.As(err, &le) {
			le.Path = path
		}
		return nil, err
	}
	sc.Path = path
	return sc, nil
}

// Parse decodes and validates scenario YAML.
func Parse(data []byte) (*Scenario, error) {
	var sc Scenario
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&sc); err != nil {
		return nil, &LoadError{Problems: yamlProblems(err)}
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err == nil {
		stepLines(&root, &sc)
	}
	sc.applyDefaults()
	if probs := sc.validate(); len(probs) > 0 {
		return nil, &LoadError{Problems: probs}
	}
	return &sc, nil
}

func yamlProblems(err error) []string {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		return te.Errors
	}
	return []string{err.Error()}
}

// stepLines records each step's line from the YAML node tree.
func stepLines(root *yaml.Node, sc *Scenario) {
	if root.Kind != yaml.DocumentNode || len(root.Content) == 0 {
		return
	}
	m := root.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == "steps" && m.Content[i+1].Kind == yaml.SequenceNode {
			for j, n := range m.Content[i+1].Content {
				if j < len(sc.Steps) {
					sc.Steps[j].Line = n.Line
				}
			}
		}
	}
}

func (sc *Scenario) applyDefaults() {
	if sc.Cluster.Etcd == 0 {
		sc.Cluster.Etcd = 3
	}
	if sc.Cluster.Masters == 0 {
		sc.Cluster.Masters = 3
	}
	if sc.Cluster.ClusterID == "" {
		sc.Cluster.ClusterID = "chaos"
	}
	if sc.Timeout == 0 {
		sc.Timeout = 10 * time.Minute
	}
	if sc.Seed == 0 {
		sc.Seed = 1
	}
	for i := range sc.Steps {
		if w := sc.Steps[i].Wait; w != nil && w.Timeout == 0 {
			w.Timeout = 60 * time.Second
		}
	}
}

// harnessOwnedKeys are master config keys a scenario may not set: the
// harness sets them from cluster.security and cluster.legacy_import.
var (
	securityKeys     = []string{"etcd_ca_file", "etcd_cert_file", "etcd_key_file", "etcd_username", "etcd_password_file", "s3_ca_file"}
	legacyImportKeys = []string{"snapshot_bootstrap_mode", "legacy_import_root", "legacy_import_cluster_id", "legacy_import_snapshot_id"}
	harnessOwnedKeys = append(append([]string{}, securityKeys...), legacyImportKeys...)
)

var nodeName = regexp.MustCompile(`^(master|etcd)-[0-9]+$`)

func (sc *Scenario) validate() []string {
	var probs []string
	bad := func(line int, format string, args ...any) {
		prefix := ""
		if line > 0 {
			prefix = fmt.Sprintf("line %d: ", line)
		}
		probs = append(probs, prefix+fmt.Sprintf(format, args...))
	}
	if sc.Name == "" {
		bad(0, "name: required")
	}
	if sc.Tier != "pr" && sc.Tier != "nightly" && sc.Tier != "harness-test" && sc.Tier != "swarm" && sc.Tier != "docker" && sc.Tier != "upstream" {
		bad(0, "tier: %q: want pr, nightly, swarm, docker, upstream or harness-test", sc.Tier)
	}
	if sc.Tier == "docker" && sc.Runtime != "docker" {
		bad(0, "tier docker: needs runtime: docker (its faults exist only for containers)")
	}
	for _, tag := range sc.Cluster.BuildTags {
		if tag != "sabotage" {
			bad(0, "cluster.build_tags: %q: want sabotage", tag)
		}
		if sc.Tier != "harness-test" {
			bad(0, "cluster.build_tags: only a harness-test scenario builds a sabotaged master")
		}
	}
	if sup := sc.Cluster.Supervisor; sup != nil {
		if sup.Restart != "always" && sup.Restart != "on-failure" {
			bad(0, "cluster.supervisor.restart: %q: want always or on-failure", sup.Restart)
		}
		if sup.Backoff < 0 || sup.Backoff > time.Minute {
			bad(0, "cluster.supervisor.backoff: %v: want 0 (500ms) up to 1m", sup.Backoff)
		}
	}
	if _, err := keyspace.New(sc.Cluster.ClusterID); err != nil {
		bad(0, "cluster.cluster_id: %v", err)
	}
	if sc.Cluster.Etcd < 1 || sc.Cluster.Etcd > 7 {
		bad(0, "cluster.etcd: %d members: want 1..7", sc.Cluster.Etcd)
	}
	if sc.Cluster.Masters < 1 || sc.Cluster.Masters > 7 {
		bad(0, "cluster.masters: %d: want 1..7", sc.Cluster.Masters)
	}
	if _, err := masterkind.ByName(sc.Cluster.Master); err != nil {
		bad(0, "cluster.master: %v", err)
	}
	for _, c := range sc.Require {
		if !masterkind.Known(masterkind.Capability(c)) {
			bad(0, "requires: %q: not a capability (chaos list --capabilities lists them)", c)
		}
	}
	switch sc.Runtime {
	case "", "process", "docker":
	default:
		bad(0, "runtime: %q: want process or docker", sc.Runtime)
	}
	switch sc.Cluster.S3 {
	case "", "versitygw", "gofakes3", "local":
	default:
		bad(0, "cluster.s3: %q: want versitygw, gofakes3 or local", sc.Cluster.S3)
	}
	if sec := sc.Cluster.Security; sec.Auth && !sec.TLS {
		bad(0, "cluster.security.auth needs tls: true (credentials never cross a plain link)")
	}
	if sc.Cluster.Security.TLS && (sc.Cluster.S3 == "gofakes3") {
		bad(0, "cluster.security.tls: the S3 server gofakes3 serves plain http only; use versitygw, local or none")
	}
	for _, k := range securityKeys {
		if _, ok := sc.Cluster.Config[k]; ok {
			bad(0, "cluster.config.%s: set cluster.security instead (the harness makes the run's certificates and users)", k)
		}
	}
	for _, k := range legacyImportKeys {
		if _, ok := sc.Cluster.Config[k]; ok {
			bad(0, "cluster.config.%s: set cluster.legacy_import instead (the harness then also audits the import)", k)
		}
	}
	if li := sc.Cluster.LegacyImport; li != nil {
		if li.Root == "" {
			bad(0, "cluster.legacy_import.root: required (a root of old snapshots, e.g. fixtures/legacy/small)")
		}
		if sc.Cluster.S3 == "" {
			bad(0, "cluster.legacy_import needs cluster.s3: the import becomes a snapshot in the store")
		}
	}

	if len(sc.Steps) == 0 {
		bad(0, "steps: at least one step")
	}
	names := map[string]bool{}
	failpointFaults := map[string]bool{}
	for i, s := range sc.Steps {
		n := 0
		for _, set := range []bool{s.Wait != nil, s.Sleep > 0, s.Fault != nil, s.Heal != "", s.Restart != nil, s.Traffic != "", s.Assert != nil, s.Probe != nil} {
			if set {
				n++
			}
		}
		if n != 1 {
			bad(s.Line, "step %d: exactly one of wait, sleep, fault, heal, restart, traffic, assert, probe (found %d)", i+1, n)
			continue
		}
		if s.As != "" && s.Fault == nil {
			bad(s.Line, "step %d: `as` names a fault, but this step is a %s", i+1, s.Kind())
		}
		switch s.Kind() {
		case "fault":
			if err := s.Fault.Validate(); err != nil {
				bad(s.Line, "step %d: %v", i+1, err)
			}
			if x := s.Fault.Excluding; x != "" && !names[x] && !nodeName.MatchString(x) {
				bad(s.Line, "step %d: excluding %q: no earlier fault has that `as` (or name a node, e.g. master-1)", i+1, x)
			}
			if s.As != "" {
				names[s.As] = true
				if s.Fault.Kind == "failpoint" {
					failpointFaults[s.As] = true
				}
			}
		case "probe":
			if s.Probe.Node == "" || s.Probe.Keys < 0 {
				bad(s.Line, "step %d: probe needs node (a master or a fault's `as` name) and keys >= 0", i+1)
			}
		case "heal":
			if s.Heal != "all" && !names[s.Heal] {
				bad(s.Line, "step %d: heal %q: no earlier fault has `as: %s`", i+1, s.Heal, s.Heal)
			}
		case "wait":
			w := s.Wait
			switch w.For {
			case "primary":
				if w.Excluding != "" && !names[w.Excluding] {
					bad(s.Line, "step %d: wait excluding %q: no earlier fault has that `as`", i+1, w.Excluding)
				}
			case "caught-up":
			case "ops":
				if w.Ops <= 0 {
					bad(s.Line, "step %d: wait for ops needs ops > 0", i+1)
				}
			case "role":
				if w.Node == "" || w.Role == "" {
					bad(s.Line, "step %d: wait for role needs node and role", i+1)
				}
			case "snapshots":
				if (w.Count <= 0) == !w.Covering {
					bad(s.Line, "step %d: wait for snapshots needs count > 0, or covering: true (and not both)", i+1)
				}
				if sc.Cluster.S3 == "" {
					bad(s.Line, "step %d: wait for snapshots needs cluster.s3 (a snapshot store)", i+1)
				}
			case "pruned": // a floor exists and no batch at or below it is left
			case "suffix":
				if w.Batches <= 0 {
					bad(s.Line, "step %d: wait for suffix needs batches > 0", i+1)
				}
				if w.Above != "" && !failpointFaults[w.Above] {
					bad(s.Line, "step %d: wait for suffix above %q: not the `as` name of an earlier failpoint fault", i+1, w.Above)
				}
			case "leader": // the election's leader is the node's candidacy
				if w.Node == "" {
					bad(s.Line, "step %d: wait for leader needs node (a master or a fault's `as` name)", i+1)
				}
			case "maintenance": // the node took the maintenance lease and let it go
				if w.Node == "" {
					bad(s.Line, "step %d: wait for maintenance needs node (a master or a fault's `as` name)", i+1)
				}
			case "failpoint":
				if w.Node == "" {
					bad(s.Line, "step %d: wait for failpoint needs node (a master, or the `as` name of a failpoint fault)", i+1)
				} else if w.Failpoint == "" && !failpointFaults[w.Node] {
					bad(s.Line, "step %d: wait for failpoint on %q needs failpoint: NAME (node is not the `as` name of a failpoint fault)", i+1, w.Node)
				}
				if w.Hits < 0 {
					bad(s.Line, "step %d: wait for failpoint: hits %d", i+1, w.Hits)
				}
			case "metric":
				if w.Metric == nil || w.Metric.Sample == "" || w.Metric.Node == "" {
					bad(s.Line, "step %d: wait for metric needs metric: {node, sample, min}", i+1)
				}
			case "no-primary": // no node serves (a primary cut off from etcd has stepped down)
			default:
				bad(s.Line, "step %d: wait for %q: want one of %s", i+1, w.For, strings.Join(WaitKinds, ", "))
			}
		case "restart":
			if s.Restart.Target != "all-masters" {
				bad(s.Line, "step %d: restart target %q: want all-masters", i+1, s.Restart.Target)
			}
			if s.Restart.Mode != "cold" && s.Restart.Mode != "crash" {
				bad(s.Line, "step %d: restart mode %q: want cold or crash", i+1, s.Restart.Mode)
			}
			for _, k := range harnessOwnedKeys {
				if _, ok := s.Restart.Config[k]; ok {
					bad(s.Line, "step %d: restart config %s: the harness owns that key", i+1, k)
				}
			}
		case "assert":
			if rf := s.Assert.Refuses; rf != nil && (rf.Config == nil || rf.Says == "") {
				bad(s.Line, "step %d: assert refuses needs config (the keys to try; {} for the masters' own settings) and says (what the refusal must say)", i+1)
			}
		case "traffic":
			if s.Traffic != "start" && s.Traffic != "stop" {
				bad(s.Line, "step %d: traffic %q: want start or stop", i+1, s.Traffic)
			}
		}
	}
	known := map[string]bool{}
	for _, c := range audit.Checks() {
		known[c.Name] = true
	}
	for _, a := range sc.Expect.Audits {
		if !known[a] {
			bad(0, "expect.audits: unknown audit %q", a)
		}
	}
	for _, id := range sc.Expect.Windows {
		w, ok := audit.WindowByID(id)
		switch {
		case !ok:
			bad(0, "expect.windows: unknown window %q (chaos list --coverage lists them)", id)
		case w.Count == nil:
			bad(0, "expect.windows: window %q has no count yet: a run could not show it reached it", id)
		}
		if len(sc.Expect.Audits) > 0 && !slices.Contains(sc.Expect.Audits, "minimum-work") {
			bad(0, "expect.windows: minimum-work decides whether a window was reached; add it to expect.audits")
		}
	}
	return probs
}

// Marshal renders the scenario back to YAML (the bundle's resolved copy).
func (sc *Scenario) Marshal() ([]byte, error) { return yaml.Marshal(sc) }
