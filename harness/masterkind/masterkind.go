// Package masterkind names the master implementations the suite runs and
// what each can do. A scenario never asks which master it runs against: it
// asks for capabilities (its own `requires:` and what its steps imply, see
// scenario.Requires), and a run whose master lacks one is skipped with the
// reason, listed in the run's summary and its report. The audits do the
// same: an audit that needs what the master does not expose says so as a
// skip, never as a pass and never as a failure of the master.
package masterkind

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
)

// Capability is something a master can do or expose that a scenario or an
// audit may need.
type Capability string

// The capabilities. A failpoint is a capability of its own, named
// FailpointCap(name); a failpoint term's form is one too (TermCap).
const (
	// Snapshots: the master publishes standby snapshots to an object store
	// (latest, fallback, compaction floor) and bootstraps from them.
	Snapshots Capability = "snapshots"
	// State: the master exposes its applied state (digest and dump), which
	// recovered-state and convergence compare with the model.
	State Capability = "state"
	// Cursor: the master's health says its applied batch cursor and the
	// durable prefix it saw, which a wait for caught-up reads.
	Cursor Capability = "cursor"
	// ProjectConfig: the master takes the project's configuration keys
	// (cluster.config, a restart with config, an assert that a
	// configuration is refused).
	ProjectConfig Capability = "project-config"
	// ProjectMetrics: the master exports the oplogha_* metrics a metric
	// wait or assert reads.
	ProjectMetrics Capability = "project-metrics"
	// BootstrapReport: the master's health says where it bootstrapped from.
	BootstrapReport Capability = "bootstrap-report"
	// LegacyImport: the master imports an old primary snapshot at startup.
	LegacyImport Capability = "legacy-import"
	// Security: the master runs with TLS to etcd and S3 and etcd users.
	Security Capability = "security"
	// Containers: the master runs as a container image on the docker runtime.
	Containers Capability = "containers"
	// BuildTags: the master is built from this tree with build tags (a
	// sabotaged build).
	BuildTags Capability = "build-tags"
	// ViewFencing: a deposed primary's appends are refused by the producer
	// view compare. Declared; the zombie-primary window tests it whatever
	// the master declares.
	ViewFencing Capability = "view-fencing"
	// Tenants: the master keeps each tenant's keys apart (a key is a
	// tenant and a name). Without it the load names one tenant, "default".
	Tenants Capability = "tenants"
	// DurableAck: an acknowledgement is sent only once its entry is durable.
	// Declared; durable-acknowledgement judges it whatever the master declares.
	DurableAck Capability = "durable-ack"
)

// Known says whether c names a capability (what a scenario's requires:
// may list): one of the constants above, or a failpoint by name.
func Known(c Capability) bool {
	switch c {
	case Snapshots, State, Cursor, ProjectConfig, ProjectMetrics, BootstrapReport, LegacyImport, Security, Containers,
		BuildTags, ViewFencing, DurableAck, Tenants:
		return true
	}
	name, ok := strings.CutPrefix(string(c), "failpoint:")
	return ok && name != ""
}

// FailpointCap is the capability of the failpoint called name (the
// scenario's name for it).
func FailpointCap(name string) Capability { return Capability("failpoint:" + name) }

// TermCap is the capability of a failpoint term's form: hold
// (return("hold")), panic, value (another return), sleep, chain (a term of
// several parts, "a->b").
func TermCap(form string) Capability { return Capability("failpoint-term:" + form) }

// TermForm classifies a gofail term: "hold", "panic", "value", "sleep" or
// "chain"; a count prefix ("2*") is allowed in every form.
func TermForm(term string) string {
	if strings.Contains(term, "->") {
		return "chain"
	}
	t := term
	if i := strings.Index(t, "*"); i >= 0 {
		t = t[i+1:]
	}
	switch {
	case strings.HasPrefix(t, `return("hold")`):
		return "hold"
	case strings.HasPrefix(t, "panic"):
		return "panic"
	case strings.HasPrefix(t, "sleep"):
		return "sleep"
	}
	return "value"
}

// Kind is one master implementation.
type Kind struct {
	Name string
	Doc  string
	// Has lists every capability the kind has but its failpoints.
	Has []Capability
	// Failpoints maps the scenario's failpoint names the kind has to its
	// own names: FailpointCap(name) is a capability of the kind for each.
	Failpoints map[string]string
	// AnyFailpoint: every failpoint name is the kind's own (the reference
	// master, whose gofail failpoints are the names scenarios use; an
	// unknown name fails there, as a typo should).
	AnyFailpoint bool
}

// Can says whether k has c.
func (k Kind) Can(c Capability) bool {
	if name, ok := strings.CutPrefix(string(c), "failpoint:"); ok {
		_, has := k.Failpoint(name)
		return has
	}
	return slices.Contains(k.Has, c)
}

// Failpoint is the kind's own name for the scenario's failpoint name.
func (k Kind) Failpoint(name string) (string, bool) {
	if k.AnyFailpoint {
		return name, true
	}
	own, ok := k.Failpoints[name]
	return own, ok
}

// Missing lists the capabilities of need that k lacks, sorted.
func (k Kind) Missing(need []Capability) []Capability {
	var out []Capability
	for _, c := range need {
		if !k.Can(c) && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// SkipReason is the one line a skipped run reports ("" when nothing is missing).
func (k Kind) SkipReason(need []Capability) string {
	miss := k.Missing(need)
	if len(miss) == 0 {
		return ""
	}
	s := make([]string, len(miss))
	for i, c := range miss {
		s[i] = string(c)
	}
	return fmt.Sprintf("master %s lacks %s", k.Name, strings.Join(s, ", "))
}

// Names of the kinds.
const (
	ReferenceName = "reference"
	MooncakeName  = "mooncake"
)

// Reference is the project's own master (cmd/master).
func Reference() Kind {
	return Kind{Name: ReferenceName, Doc: "the project's reference master, built from this tree (cmd/master)",
		Has: []Capability{Snapshots, State, Cursor, ProjectConfig, ProjectMetrics, BootstrapReport, LegacyImport,
			Security, Containers, BuildTags, ViewFencing, DurableAck, Tenants,
			TermCap("hold"), TermCap("panic"), TermCap("value"), TermCap("sleep"), TermCap("chain")},
		AnyFailpoint: true}
}

// Mooncake is upstream's C++ mooncake_master (kvcache-ai/Mooncake),
// built by the user (docs/upstream.md) and named by MOONCAKE_MASTER. It
// runs the batch OpLog and promotion; it publishes no snapshots and
// exposes no state, and without its multi-tenancy (a quota policy store)
// it files every key under tenant "default". Its four test failpoints hold only: a hold term is a
// hold, a panic term is a hold and then SIGKILL (crash at the point).
func Mooncake() Kind {
	return Kind{Name: MooncakeName, Doc: "upstream's mooncake_master (C++), from MOONCAKE_MASTER or --master-binary",
		Has: []Capability{TermCap("hold"), TermCap("panic")}, Failpoints: maps.Clone(mooncakeFailpoints)}
}

// mooncakeFailpoints maps the scenario's failpoint names to upstream's
// file-based failpoints at the same point of the code.
var mooncakeFailpoints = map[string]string{
	// primary: batch built, its etcd transaction not yet sent
	"primaryBeforeAppend": "batch_before_txn",
	// primary: batch durable, its waiters not yet answered
	"primaryAfterAppend": "batch_txn_succeeded_before_callback",
	// promotion: final catch-up complete, not yet serving
	"promoteBeforeServe": "promotion_final_catch_up_before_complete",
}

// ByName returns the kind called name.
func ByName(name string) (Kind, error) {
	switch name {
	case "", ReferenceName:
		return Reference(), nil
	case MooncakeName:
		return Mooncake(), nil
	}
	return Kind{}, fmt.Errorf("master kind %q: want %s or %s", name, ReferenceName, MooncakeName)
}

// BinaryEnv names the environment variable that gives upstream's binary.
const BinaryEnv = "MOONCAKE_MASTER"

// ErrNoBinary: the mooncake kind was asked for and no binary is named.
var ErrNoBinary = fmt.Errorf("no mooncake_master binary: set %s=PATH (docs/upstream.md says what the suite needs of it)", BinaryEnv)

// MooncakeBinary returns the binary MOONCAKE_MASTER names, checked to be
// an executable file.
func MooncakeBinary() (string, error) {
	p := os.Getenv(BinaryEnv)
	if p == "" {
		return "", ErrNoBinary
	}
	fi, err := os.Stat(p)
	if err != nil {
		return "", fmt.Errorf("%s=%s: %w", BinaryEnv, p, err)
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%s=%s: not an executable file", BinaryEnv, p)
	}
	return p, nil
}
