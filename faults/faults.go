// Package faults holds the fault kinds a scenario step can name. Each kind is
// one registered value (Kind, kind.go) in the file of its family — process,
// network, failpoint, etcd, s3, data, workdir: it checks its spec, says
// which clusters it applies to, resolves its target in the running cluster
// (with the run's seeded choice where the scenario leaves one open),
// injects, returns how to heal, and draws itself for the swarm. The kinds
// reach the cluster only through Env, split by capability (env.go), so the
// same kinds serve every runtime.
package faults

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Spec is a fault as a scenario writes it.
type Spec struct {
	Kind string `yaml:"kind" json:"kind"` // a registered kind (Kinds; chaos kinds lists them with what each does)
	// primary | standby | master | master-N | etcd-leader | etcd-follower | etcd | etcd-N
	Target   string         `yaml:"target,omitempty" json:"target,omitempty"`
	Link     string         `yaml:"link,omitempty" json:"link,omitempty"`     // link name or glob (*), for toxic and link-down; {target} is replaced
	Name     string         `yaml:"name,omitempty" json:"name,omitempty"`     // failpoint name
	Term     string         `yaml:"term,omitempty" json:"term,omitempty"`     // failpoint term, e.g. 1*panic, sleep(2000)
	Toxic    string         `yaml:"toxic,omitempty" json:"toxic,omitempty"`   // latency | timeout | reset_peer | bandwidth | slicer | limit_data
	Stream   string         `yaml:"stream,omitempty" json:"stream,omitempty"` // upstream | downstream (default downstream)
	Toxicity float32        `yaml:"toxicity,omitempty" json:"toxicity,omitempty"`
	Attrs    map[string]any `yaml:"attrs,omitempty" json:"attrs,omitempty"`
	Grace    time.Duration  `yaml:"grace,omitempty" json:"grace,omitempty"` // stop: SIGTERM grace
	// Excluding is a node a seeded choice (standby, master, etcd,
	// etcd-follower) must not pick, or a primary target must not be: a
	// scenario writes an earlier fault's `as` name, the runner passes the
	// node that fault chose.
	Excluding string `yaml:"excluding,omitempty" json:"excluding,omitempty"`
	AutoHeal  bool   `yaml:"-" json:"-"`
}

// Injected is a fault in effect.
type Injected struct {
	Spec    Spec
	Targets []string // resolved nodes or links
	// Revisions are the etcd revisions the fault wrote itself, so audits of
	// the MVCC history can tell injected corruption from the system's writes.
	Revisions []int64
	// HealRevisions are the etcd revisions its heal wrote (a garbage record
	// restored or a stray key deleted): the harness's writes too.
	HealRevisions []int64
	// Corrupted are the snapshot ids whose objects the fault damaged behind
	// the store: an audit can then tell a floor moved onto a snapshot known
	// to be bad. Ended are the masters whose process the fault ended (kill,
	// stop, restart). The runner records etcd's revision once the fault
	// had acted (a fault never waits on etcd to say where it acted: etcd
	// may be what the scenario broke).
	Corrupted []string
	Ended     []string
	heal      func(ctx context.Context) error
}

// corrupted records that the fault damaged snapshot id.
func (in *Injected) corrupted(id string) { in.Corrupted = append(in.Corrupted, id) }

// Heal undoes the fault (a no-op for faults with nothing to undo).
func (in *Injected) Heal(ctx context.Context) error {
	if in.heal == nil {
		return nil
	}
	return in.heal(ctx)
}

// ErrUnavailable: the fault cannot apply to this cluster shape or moment.
var ErrUnavailable = errors.New("fault not available")

// EndsProcess reports whether the fault ends its target's process (or may:
// a panic failpoint ends it when it fires): a kill, stop or restart, or a
// failpoint whose term panics.
func (s Spec) EndsProcess() bool {
	switch s.Kind {
	case "kill", "stop", "restart":
		return true
	case "failpoint":
		return strings.Contains(s.Term, "panic")
	}
	return false
}

// Validate checks a spec without a cluster.
func (s Spec) Validate() error {
	k, ok := Lookup(s.Kind)
	if !ok {
		return fmt.Errorf("fault kind %q: want one of %s", s.Kind, strings.Join(kindNames(), ", "))
	}
	if k.check != nil {
		if err := k.check(s); err != nil {
			return err
		}
	}
	if s.Stream != "" && s.Stream != "upstream" && s.Stream != "downstream" {
		return fmt.Errorf("stream %q: want upstream or downstream", s.Stream)
	}
	return nil
}

// Inject resolves the spec's target and applies it.
func Inject(ctx context.Context, env Env, s Spec) (*Injected, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	k, _ := Lookup(s.Kind)
	in := &Injected{Spec: s}
	if err := k.inject(ctx, env, s, in); err != nil {
		return nil, err
	}
	return in, nil
}

func grace(s Spec) time.Duration {
	if s.Grace > 0 {
		return s.Grace
	}
	return 10 * time.Second
}
