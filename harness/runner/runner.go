// Package runner runs one scenario end to end: it brings the cluster up,
// starts traffic, executes the steps with a live progress line, collects the
// evidence into a bundle, stops every process, audits the bundle as written
// (so `chaos audit` reaches the same verdicts offline), renders it and
// compresses it.
//
// The lifecycle (lifecycle.go: build, boot, setup, steps, settle; traffic.go;
// collect.go) is apart from the step interpreter (steps.go dispatches to one
// file per step kind: step_sleep, step_wait, step_fault, step_restart,
// step_assert); anchor.go pins a replay's faults to where the originals
// landed.
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/oplogha/oplogha/faults"
	"github.com/oplogha/oplogha/harness/audit"
	"github.com/oplogha/oplogha/harness/bin"
	"github.com/oplogha/oplogha/harness/bundle"
	"github.com/oplogha/oplogha/harness/cluster"
	"github.com/oplogha/oplogha/harness/history"
	"github.com/oplogha/oplogha/harness/masterkind"
	"github.com/oplogha/oplogha/harness/proc"
	"github.com/oplogha/oplogha/harness/scenario"
	"github.com/oplogha/oplogha/harness/traffic"
)

// Options control one run.
type Options struct {
	Out      string    // where bundles go
	Keep     bool      // keep a passing run's bundle directory (a failing one is always kept)
	Progress io.Writer // live progress; nil for none
	Cache    *bin.Cache
	Replayed string // bundle this run replays, for the record
	// Anchors, when replaying, are the original run's fault anchors by
	// step: each fault waits for the progress its original had and is aimed
	// at the node the original hit. Strict ends the run at the first fault
	// that cannot land where its original did.
	Anchors map[int]audit.Anchor
	Strict  bool
	// FirstPrimary, when replaying, is the master that won the original's
	// first election: it starts alone first so it wins again.
	FirstPrimary string
	// Runtime overrides the scenario's runtime (process | docker).
	Runtime string
	// PublicImages runs etcd and toxiproxy from their public images on the
	// docker runtime (needs a registry) instead of locally built ones.
	PublicImages bool
	// Master overrides the scenario's master kind (reference | mooncake);
	// MasterBinary names upstream's binary (default: MOONCAKE_MASTER).
	Master       string
	MasterBinary string
	// Screenshot opens the rendered report.html in headless Chromium once
	// every process of the run has stopped, and writes report.png into the
	// bundle. A report with a console error, an empty timeline or an empty
	// audit table fails the run (Outcome.Err says why; the bundle's audits
	// keep their verdicts), as does a missing Chromium.
	Screenshot bool
}

// Outcome is a finished run.
type Outcome struct {
	Scenario string
	Seed     int64
	Tier     string
	Dir      string // bundle directory ("" when removed)
	Archive  string // bundle .tar.gz
	Pass     bool
	Results  []audit.Result
	Err      error // the run itself failed (the bundle says where)
	// Replay says, per fault of a replay, whether it landed where the
	// original's did.
	Replay   []ReplayCheck
	Duration time.Duration
	// Skipped says why the run did not start: its master kind lacks a
	// capability the scenario requires ("" when it ran).
	Skipped string
	// DockerRun is the run id its containers, network and run image were
	// labelled and named with (docker runtime only).
	DockerRun string
}

// run is one run's live state.
type run struct {
	sc      *scenario.Scenario
	opts    Options
	dir     string // bundle dir
	work    string // data dirs, removed at the end
	start   time.Time
	rec     *history.Recorder
	cluster *cluster.Cluster
	env     *cluster.Env
	gen     *traffic.Generator
	events  timeline
	// retention is the once-a-second series of what the cluster retains.
	retention samples
	// histFrom is the first etcd revision not yet kept in the bundle.
	histMu   sync.Mutex
	histFrom int64
	injected map[string]*faults.Injected
	healed   map[string]*faults.Injected
	// ended are the master processes a fault ended (killed, stopped, or
	// armed to panic), by fault name: a wait for that node's role means its
	// next process, not the one on its way out.
	ended map[string]*proc.Process
	// stepIndex is the 1-based index of the step running; lastFailpointHit
	// the failpoint hit the previous step waited for ("" when it did not).
	stepIndex        int
	lastFailpointHit string
	replayChecks     []ReplayCheck
	order            []string
	steps            []bundle.StepTiming
	current          string
	prog             *progress
	binaries         cluster.Binaries
	// dockerRun is the docker engine's run id (labels, names) on the docker cluster.
	dockerRun string
	// generations counts traffic starts, so each start draws fresh keys.
	generations int
	// probes counts probe steps, so each probe writes fresh keys.
	probes int
	// base is what the scenario's legacy import brings (nil: none).
	base *audit.Base
	// refusals counts masters started to be refused (assert refuses).
	refusals int
	// keeper copies every snapshot a pointer names into the bundle.
	keeper *snapshotKeeper
	// kind is the master kind; client the load's client of it.
	kind   masterkind.Kind
	client traffic.Client
	// closers run once the steps and the evidence are done (the load's
	// client's pinger).
	closers []func()
	// clock reads etcd's revision in the background (etcdclock.go).
	clock *etcdClock
	// unread is the evidence collect could not read, and why.
	unread audit.Unread
	// panics are the crash windows armed on each node (exits.go).
	panics armedPanics
	// seen are the role events whose revision is being read (revisionSeen).
	seen sync.WaitGroup
	// stopSampler ends the retention sampler and its snapshot keeping and
	// waits for it (nil before the cluster is up).
	stopSampler func()
	// replayOKOps are the acknowledged ops at each fault this run injected,
	// by step: a replay's progress is counted from its previous fault.
	replayOKOps map[int]int64
}

// Run runs sc.
func Run(ctx context.Context, sc *scenario.Scenario, opts Options) (*Outcome, error) {
	r, skipped, err := newRun(sc, opts)
	if err != nil || skipped != nil {
		return skipped, err
	}
	defer os.RemoveAll(r.work)
	parent := ctx // the report check outlives the scenario's timeout
	ctx, cancel := context.WithTimeout(ctx, r.sc.Timeout)
	defer cancel()
	group := proc.NewGroup()
	runErr := r.execute(ctx, group)
	return r.finish(parent, group, runErr)
}

// newRun prepares a run of sc: its master kind, its bundle and work
// directories. A scenario whose master kind lacks what it requires is not
// run: the outcome says why (skipped).
func newRun(sc *scenario.Scenario, opts Options) (r *run, skipped *Outcome, err error) {
	start := time.Now()
	if opts.Master != "" && opts.Master != sc.Cluster.Master {
		c := *sc
		c.Cluster.Master = opts.Master // recorded in the bundle's scenario: a replay runs the same kind
		sc = &c
	}
	kind, err := masterkind.ByName(sc.Cluster.Master)
	if err != nil {
		return nil, nil, err
	}
	if why := kind.SkipReason(sc.Requires()); why != "" {
		return nil, &Outcome{Scenario: sc.Name, Seed: sc.Seed, Tier: sc.Tier, Pass: true, Skipped: why}, nil
	}
	if abs, err := filepath.Abs(opts.Out); err == nil {
		opts.Out = abs // processes run in their own directories
	}
	dir, err := uniqueDir(opts.Out, fmt.Sprintf("%s-seed%d-%s", sc.Name, sc.Seed, start.UTC().Format("20060102T150405Z")))
	if err != nil {
		return nil, nil, err
	}
	work := filepath.Join(opts.Out, ".work", filepath.Base(dir))
	if err := os.MkdirAll(work, 0o755); err != nil {
		return nil, nil, err
	}
	r = &run{sc: sc, opts: opts, dir: dir, work: work, start: start, rec: history.NewRecorder(start), injected: map[string]*faults.Injected{},
		healed: map[string]*faults.Injected{}, ended: map[string]*proc.Process{}, histFrom: 1,
		keeper: newSnapshotKeeper(dir, start), kind: kind}
	r.events.start = start
	r.prog = newProgress(opts.Progress, sc.Name, len(sc.Steps), func() (int64, string) { return r.rec.OKCount(), r.events.lastEvent() })
	return r, nil, nil
}

// finish stops every process of the run, writes its bundle, audits it and
// renders it (Finish).
func (r *run) finish(ctx context.Context, group *proc.Group, runErr error) (*Outcome, error) {
	for _, c := range r.closers {
		c()
	}
	r.prog.stop()
	meta := r.meta(runErr)
	// Every process stops, even when the run failed half way.
	if err := group.Close(10 * time.Second); err != nil {
		runErr = errors.Join(runErr, fmt.Errorf("cleanup: %w", err))
	}
	for _, p := range group.Records() {
		meta.Processes = append(meta.Processes, bundle.ProcessInfo{Name: p.Name, PID: p.PID, Args: p.Args, Log: relLog(p.Log, r.work)})
	}
	if runErr != nil {
		meta.Error = runErr.Error()
	}
	meta.DurationMS = time.Since(r.start).Milliseconds()
	if err := r.writeBundle(meta); err != nil {
		return nil, fmt.Errorf("write bundle %s: %w", r.dir, err)
	}
	out, err := Finish(ctx, r.dir, r.opts)
	if err != nil {
		return nil, err
	}
	out.Err, out.Duration, out.DockerRun, out.Replay = errors.Join(runErr, out.Err), time.Since(r.start), r.dockerRun, r.replayChecks
	return out, nil
}

// uniqueDir creates out/base, or out/base-2, -3 … when runs of the same
// scenario and seed start in the same second.
func uniqueDir(out, base string) (string, error) {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", err
	}
	for i := 1; ; i++ {
		name := base
		if i > 1 {
			name = fmt.Sprintf("%s-%d", base, i)
		}
		dir := filepath.Join(out, name)
		if _, err := os.Stat(dir + ".tar.gz"); err == nil {
			continue // an earlier run's archive owns the name
		}
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, nil
		}
		if !os.IsExist(err) {
			return "", err
		}
	}
}

func relLog(path, work string) string {
	if rel, err := filepath.Rel(work, path); err == nil {
		return filepath.Join(bundle.LogsDir, rel)
	}
	return path
}

// Finish audits a written bundle, renders it (and with opts.Screenshot
// opens the report in Chromium, see Options) and compresses it; a passing
// bundle's directory is removed unless opts.Keep.
func Finish(ctx context.Context, dir string, opts Options) (*Outcome, error) {
	b, err := bundle.Open(dir)
	if err != nil {
		return nil, err
	}
	rs, err := b.Audit()
	if err != nil {
		return nil, err
	}
	if !audit.Passed(rs) {
		for _, r := range rs {
			if r.Name == "linearizability" && !r.Pass {
				_ = audit.VisualizeLinearizability(&b.Input, filepath.Join(dir, bundle.LinearizeFile))
			}
		}
	}
	if err := b.WriteSummary(); err != nil {
		return nil, err
	}
	if err := b.WriteReport(); err != nil {
		return nil, err
	}
	var reportErr error
	if opts.Screenshot {
		reportErr = checkReport(ctx, dir)
	}
	archive, err := bundle.Compress(dir)
	if err != nil {
		return nil, err
	}
	out := &Outcome{Scenario: b.Meta.Scenario, Seed: b.Meta.Seed, Tier: b.Meta.Tier, Dir: dir, Archive: archive,
		Pass: b.Pass() && reportErr == nil, Results: rs, Err: reportErr}
	if out.Pass && !opts.Keep {
		os.RemoveAll(dir)
		out.Dir = ""
	}
	return out, nil
}

// meta gathers the run facts.
func (r *run) meta(runErr error) bundle.Meta {
	m := bundle.Meta{Scenario: r.sc.Name, Tier: r.sc.Tier, Seed: r.sc.Seed, Runtime: r.runtime(), ClusterID: r.sc.Cluster.ClusterID,
		Started: r.start, Steps: r.steps, Replayed: r.opts.Replayed, Master: r.kind.Name}
	if r.cluster != nil {
		m.BootMS = r.cluster.Boot.Milliseconds()
	}
	for _, b := range []cluster.BinaryInfo{r.binaries.Etcd, r.binaries.Toxiproxy, r.binaries.Master, r.binaries.Versity, r.binaries.FakeS3, r.binaries.PeerSwitch} {
		if b.Name != "" {
			m.Binaries = append(m.Binaries, bundle.Binary{Name: b.Name, Version: b.Version, SHA256: b.SHA256})
		}
	}
	return m
}
