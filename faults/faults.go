// Package faults holds the fault kinds a scenario step can name. Each kind is
// small: it resolves its target in the running cluster (with the run's seeded
// choice where the scenario leaves one open), injects, and returns how to heal.
// The kinds reach the cluster only through Env, so the same kinds serve every
// runtime.
package faults

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/oplogha/oplogha/impl/contract"
)

// Env is what faults act on.
type Env interface {
	// Masters and EtcdMembers name the nodes, e.g. "master-0", "etcd-2".
	Masters() []string
	EtcdMembers() []string
	// Primary names the serving primary; Standbys the running non-primaries.
	Primary(ctx context.Context) (string, error)
	Standbys(ctx context.Context) ([]string, error)
	// EtcdLeader names the etcd member that leads.
	EtcdLeader(ctx context.Context) (string, error)
	// Kill (SIGKILL), Pause (SIGSTOP), Resume (SIGCONT), Stop (SIGTERM then
	// SIGKILL) and Start a node by name.
	Kill(name string) error
	Pause(name string) error
	Resume(name string) error
	Stop(name string, grace time.Duration) error
	Start(ctx context.Context, name string) error
	// Running reports whether a node's process is up; Paused whether it is
	// up but frozen (SIGSTOP, docker pause).
	Running(name string) bool
	Paused(name string) bool
	// Links names every toxiproxy link; Link acts on one.
	Links() []string
	Link(name string) (Link, error)
	// Failpoint sets (term) or clears (term "") a failpoint on a master.
	Failpoint(ctx context.Context, master, name, term string) error
	// Rand is the run's seeded source for choices the scenario leaves open.
	Rand() *rand.Rand
	// Keyspace names the cluster's etcd keys (impl/contract): the keys
	// EtcdGet and EtcdPut take.
	Keyspace() contract.Keyspace
	// EtcdGet and EtcdPut read and write a key of the cluster's namespace
	// directly (not through any link): corruption behind the masters' back.
	EtcdGet(ctx context.Context, key string) ([]byte, error)
	EtcdPut(ctx context.Context, key string, value []byte) (revision int64, err error)
	// EtcdRevision is etcd's current revision, read linearizably.
	EtcdRevision(ctx context.Context) (int64, error)
	// StoreFile is the file behind a stored object, for corruption behind
	// the S3 server's back.
	StoreFile(key string) (string, error)
	// WorkDir is a master's snapshot work directory.
	WorkDir(master string) (string, error)
	// RevokeWriterLease revokes the lease holding /snapshot/writer (held by
	// node, when not empty) and says whose it was.
	RevokeWriterLease(ctx context.Context, node string, wait time.Duration) (holder string, err error)
	// CompactDefrag compacts etcd's MVCC history at the current revision and
	// defragments every member; it says what the database sizes did.
	CompactDefrag(ctx context.Context) (report string, err error)
}

// Link is one proxied connection path.
type Link interface {
	Down() error
	Up() error
	AddToxic(name, kind, stream string, toxicity float32, attrs map[string]any) error
	RemoveToxic(name string) error
}

// Spec is a fault as a scenario writes it.
type Spec struct {
	Kind     string         `yaml:"kind" json:"kind"`                         // one of Kinds (chaos list shows them with what each does)
	Target   string         `yaml:"target,omitempty" json:"target,omitempty"` // primary | standby | master | master-N | etcd-leader | etcd-follower | etcd | etcd-N
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

// Kinds lists the fault kinds with what they do.
var Kinds = map[string]string{
	"kill":             "SIGKILL a master or etcd member; heal starts it again",
	"pause":            "SIGSTOP a master or etcd member; heal sends SIGCONT",
	"stop":             "graceful stop (SIGTERM, then SIGKILL after grace); heal starts it again",
	"restart":          "graceful stop and immediate start, in one step",
	"failpoint":        "set a gofail failpoint term on a master; heal clears it, or starts the master again if the failpoint crashed it",
	"toxic":            "add a toxiproxy toxic to links; heal removes it",
	"link-down":        "cut links (connections reset, new ones refused); heal restores them",
	"disconnect":       "docker runtime: cut a node's container off the run's network (a real partition: its own address unreachable from every node and the harness); heal reconnects it at the same address",
	"corrupt-pointer":  "write garbage into the latest, fallback or both pointer slots (target latest|fallback|both); no heal: a newer publication repairs",
	"corrupt-snapshot": "flip one byte in the first chunk (or segments.bin) of the snapshot a pointer names, behind the S3 server (target latest|fallback); no heal",
	"corrupt-batch":    "overwrite a batch record (target first|last, or a batch id): with garbage, or with attrs.form checksum a record that parses but has one entry's key changed under its old checksum (only the checksum tells); no heal",
	"garbage":          "overwrite an etcd key of the contract (target durable_prefix, producer_view, leader, snapshot/writer|latest|fallback|compaction_floor, batches/first|last|suffix|<id>) or an object of a pointer's snapshot (target {latest|fallback}/{chunk|segments.bin|manifest.json|descriptor.json}) with bytes that are not a valid record (attrs.form random|truncated|wrong-fields, default a seeded choice); heal restores a record, deletes a stray writer or leader key; pointers and objects have no heal (a publication repairs)",
	"workdir-full":     "mount a full 64 KiB tmpfs over a master's snapshot_work_dir (needs mount rights); heal unmounts it",
	"revoke-lease":     "revoke the etcd lease behind /snapshot/writer (waiting up to 20s for a holder; with a target, for that master to hold it): the holder's next pointer CAS must fail; no heal",
	"compact-defrag":   "the operator's capacity routine: etcd MVCC compaction at the current revision, then defragment each member in turn and disarm any alarm (the run keeps the history first); no heal",
	"lose-history":     "delete the durable prefix and every batch key in one transaction, leaving the producer view, floor, pointers and snapshots in place (a history lost, its residue kept); no heal",
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
	// the store, and AtRevision etcd's revision once it had: an audit can
	// then tell a floor moved onto a snapshot known to be bad.
	Corrupted  []string
	AtRevision int64
	heal       func(ctx context.Context) error
}

// corrupted records that the fault damaged snapshot id, as of etcd's
// revision now.
func (in *Injected) corrupted(ctx context.Context, env Env, id string) error {
	rev, err := env.EtcdRevision(ctx)
	if err != nil {
		return err
	}
	in.Corrupted, in.AtRevision = append(in.Corrupted, id), rev
	return nil
}

// Heal undoes the fault (a no-op for faults with nothing to undo).
func (in *Injected) Heal(ctx context.Context) error {
	if in.heal == nil {
		return nil
	}
	return in.heal(ctx)
}

// Partitioner is an Env whose nodes have network addresses of their own
// that can be cut off (the docker runtime).
type Partitioner interface {
	Disconnect(ctx context.Context, node string) error
	Reconnect(ctx context.Context, node string) error
}

// ErrUnavailable: the fault cannot apply to this cluster shape or moment.
var ErrUnavailable = errors.New("fault not available")

// Validate checks a spec without a cluster.
func (s Spec) Validate() error {
	if _, ok := Kinds[s.Kind]; !ok {
		return fmt.Errorf("fault kind %q: want one of %s", s.Kind, strings.Join(kindNames(), ", "))
	}
	switch s.Kind {
	case "kill", "pause", "stop", "restart", "workdir-full", "disconnect":
		if s.Target == "" {
			return fmt.Errorf("%s: needs a target", s.Kind)
		}
	case "failpoint":
		if s.Name == "" || s.Term == "" {
			return fmt.Errorf("failpoint: needs name and term")
		}
	case "toxic":
		if s.Link == "" || s.Toxic == "" {
			return fmt.Errorf("toxic: needs link and toxic")
		}
		switch s.Toxic {
		case "latency", "timeout", "reset_peer", "bandwidth", "slicer", "limit_data", "slow_close":
		default:
			return fmt.Errorf("toxic %q: want latency, timeout, reset_peer, bandwidth, slicer, limit_data or slow_close", s.Toxic)
		}
	case "link-down":
		if s.Link == "" {
			return fmt.Errorf("link-down: needs link")
		}
	case "corrupt-pointer":
		if s.Target != "latest" && s.Target != "fallback" && s.Target != "both" {
			return fmt.Errorf("corrupt-pointer: target %q: want latest, fallback or both", s.Target)
		}
	case "corrupt-snapshot":
		if s.Target != "latest" && s.Target != "fallback" {
			return fmt.Errorf("corrupt-snapshot: target %q: want latest or fallback", s.Target)
		}
	case "garbage":
		if _, err := ParseGarbageTarget(s.Target); err != nil {
			return err
		}
		if _, err := garbageForm(s); err != nil {
			return err
		}
	case "corrupt-batch":
		if s.Target != "first" && s.Target != "last" {
			if _, err := strconv.ParseUint(s.Target, 10, 64); err != nil {
				return fmt.Errorf("corrupt-batch: target %q: want first, last or a batch id", s.Target)
			}
		}
		if f, ok := s.Attrs["form"]; ok && f != "garbage" && f != "checksum" {
			return fmt.Errorf("corrupt-batch: attrs.form %v: want garbage or checksum", f)
		}
	}
	if s.Stream != "" && s.Stream != "upstream" && s.Stream != "downstream" {
		return fmt.Errorf("stream %q: want upstream or downstream", s.Stream)
	}
	return nil
}

func kindNames() []string {
	var out []string
	for k := range Kinds {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Inject resolves the spec's target and applies it.
func Inject(ctx context.Context, env Env, s Spec) (*Injected, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	in := &Injected{Spec: s}
	switch s.Kind {
	case "disconnect":
		p, ok := env.(Partitioner)
		if !ok {
			return nil, fmt.Errorf("%w: disconnect needs the docker runtime (a container with an address of its own)", ErrUnavailable)
		}
		node, err := resolveNode(ctx, env, s)
		if err != nil {
			return nil, err
		}
		in.Targets = []string{node}
		if err := p.Disconnect(ctx, node); err != nil {
			return nil, err
		}
		in.heal = func(ctx context.Context) error { return p.Reconnect(ctx, node) }
		return in, nil
	case "kill", "pause", "stop", "restart":
		node, err := resolveNode(ctx, env, s)
		if err != nil {
			return nil, err
		}
		in.Targets = []string{node}
		switch s.Kind {
		case "kill":
			if err := env.Kill(node); err != nil {
				return nil, err
			}
			in.heal = func(ctx context.Context) error { return env.Start(ctx, node) }
		case "pause":
			if err := env.Pause(node); err != nil {
				return nil, err
			}
			in.heal = func(context.Context) error { return env.Resume(node) }
		case "stop":
			if err := env.Stop(node, grace(s)); err != nil {
				return nil, err
			}
			in.heal = func(ctx context.Context) error { return env.Start(ctx, node) }
		case "restart":
			if err := env.Stop(node, grace(s)); err != nil {
				return nil, err
			}
			if err := env.Start(ctx, node); err != nil {
				return nil, err
			}
		}
	case "failpoint":
		target := s.Target
		if target == "" {
			target = "primary"
		}
		s.Target = target
		node, err := resolveNode(ctx, env, s)
		if err != nil {
			return nil, err
		}
		if !strings.HasPrefix(node, "master-") {
			return nil, fmt.Errorf("%w: failpoints live on masters, not %s", ErrUnavailable, node)
		}
		if err := env.Failpoint(ctx, node, s.Name, s.Term); err != nil {
			return nil, err
		}
		in.Targets = []string{node}
		in.heal = func(ctx context.Context) error {
			if !env.Running(node) {
				return env.Start(ctx, node) // the failpoint crashed it: a fresh process starts clean
			}
			err := env.Failpoint(ctx, node, s.Name, "")
			if err == nil {
				return nil
			}
			// The failpoint may fire as the heal runs: a process on its way
			// out (its listener closed, its stack still being written)
			// refuses the request. Once it is gone, start it.
			for deadline := time.Now().Add(5 * time.Second); env.Running(node) && time.Now().Before(deadline); {
				time.Sleep(50 * time.Millisecond)
			}
			if !env.Running(node) {
				return env.Start(ctx, node)
			}
			return err
		}
	case "corrupt-pointer":
		slots := []string{s.Target}
		if s.Target == "both" {
			slots = []string{"latest", "fallback"}
		}
		for _, slot := range slots {
			rev, err := env.EtcdPut(ctx, pointerKey(env.Keyspace(), slot), []byte(`{"pointer_schema_version":1,"snapshot_id":"corrupted-by-the-harness"`))
			if err != nil {
				return nil, err
			}
			in.Revisions = append(in.Revisions, rev)
		}
		in.Targets = slots
	case "garbage":
		if err := injectGarbage(ctx, env, s, in); err != nil {
			return nil, err
		}
	case "corrupt-snapshot":
		target, id, err := corruptSnapshot(ctx, env, s.Target)
		if err != nil {
			return nil, err
		}
		in.Targets = []string{target}
		if err := in.corrupted(ctx, env, id); err != nil {
			return nil, err
		}
	case "lose-history":
		if err := loseHistory(ctx, env, in); err != nil {
			return nil, err
		}
	case "compact-defrag":
		report, err := env.CompactDefrag(ctx)
		if err != nil {
			return nil, err
		}
		in.Targets = []string{report}
	case "revoke-lease":
		node := ""
		if s.Target != "" {
			n, err := resolveNode(ctx, env, s)
			if err != nil {
				return nil, err
			}
			node = n
		}
		holder, err := env.RevokeWriterLease(ctx, node, 20*time.Second)
		if err != nil {
			return nil, err
		}
		in.Targets = []string{holder}
	case "workdir-full":
		node, err := resolveNode(ctx, env, s)
		if err != nil {
			return nil, err
		}
		dir, err := env.WorkDir(node)
		if err != nil {
			return nil, err
		}
		if err := fillWorkDir(dir); err != nil {
			return nil, err
		}
		in.Targets = []string{node + " " + dir}
		in.heal = func(context.Context) error { return unmount(dir) }
	case "corrupt-batch":
		id, rev, err := corruptBatch(ctx, env, s.Target, s.Attrs["form"] == "checksum")
		if err != nil {
			return nil, err
		}
		in.Targets = []string{fmt.Sprintf("batch %d", id)}
		in.Revisions = []int64{rev}
	case "toxic", "link-down":
		links, err := ResolveLinks(ctx, env, s)
		if err != nil {
			return nil, err
		}
		in.Targets = links
		var done []Link
		name := fmt.Sprintf("%s-%d", s.Toxic, env.Rand().Uint32())
		for _, ln := range links {
			l, err := env.Link(ln)
			if err != nil {
				return nil, err
			}
			if s.Kind == "link-down" {
				err = l.Down()
			} else {
				err = l.AddToxic(name, s.Toxic, stream(s), toxicity(s), s.Attrs)
			}
			if err != nil {
				healLinks(s, done, name)
				return nil, err
			}
			done = append(done, l)
		}
		in.heal = func(context.Context) error { return healLinks(s, done, name) }
	}
	return in, nil
}

func healLinks(s Spec, links []Link, toxicName string) error {
	var errs []error
	for _, l := range links {
		if s.Kind == "link-down" {
			errs = append(errs, l.Up())
		} else {
			errs = append(errs, l.RemoveToxic(toxicName))
		}
	}
	return errors.Join(errs...)
}

func grace(s Spec) time.Duration {
	if s.Grace > 0 {
		return s.Grace
	}
	return 10 * time.Second
}

func stream(s Spec) string {
	if s.Stream == "" {
		return "downstream"
	}
	return s.Stream
}

func toxicity(s Spec) float32 {
	if s.Toxicity <= 0 {
		return 1
	}
	return s.Toxicity
}
