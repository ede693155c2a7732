// Package runner runs one scenario end to end: it brings the cluster up,
// starts traffic, executes the steps with a live progress line, collects the
// evidence into a bundle, stops every process, audits the bundle as written
// (so `chaos audit` reaches the same verdicts offline), renders it and
// compresses it.
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/oplogha/oplogha/faults"
	"github.com/oplogha/oplogha/harness/audit"
	"github.com/oplogha/oplogha/harness/bin"
	"github.com/oplogha/oplogha/harness/bundle"
	"github.com/oplogha/oplogha/harness/cluster"
	"github.com/oplogha/oplogha/harness/history"
	"github.com/oplogha/oplogha/harness/masters"
	"github.com/oplogha/oplogha/harness/proc"
	"github.com/oplogha/oplogha/harness/scenario"
	"github.com/oplogha/oplogha/harness/traffic"
	"github.com/oplogha/oplogha/impl/contract"
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
	// base is what the scenario's legacy import brings (nil: none).
	base *audit.Base
	// refusals counts masters started to be refused (assert refuses).
	refusals int
}

// Run runs sc.
func Run(ctx context.Context, sc *scenario.Scenario, opts Options) (*Outcome, error) {
	start := time.Now()
	if abs, err := filepath.Abs(opts.Out); err == nil {
		opts.Out = abs // processes run in their own directories
	}
	dir, err := uniqueDir(opts.Out, fmt.Sprintf("%s-seed%d-%s", sc.Name, sc.Seed, start.UTC().Format("20060102T150405Z")))
	if err != nil {
		return nil, err
	}
	work := filepath.Join(opts.Out, ".work", filepath.Base(dir))
	if err := os.MkdirAll(work, 0o755); err != nil {
		return nil, err
	}
	r := &run{sc: sc, opts: opts, dir: dir, work: work, start: start, rec: history.NewRecorder(start), injected: map[string]*faults.Injected{},
		healed: map[string]*faults.Injected{}, ended: map[string]*proc.Process{}, histFrom: 1}
	r.events.start = start
	r.prog = newProgress(opts.Progress, sc.Name, len(sc.Steps), func() (int64, string) { return r.rec.OKCount(), r.events.lastEvent() })
	defer os.RemoveAll(work)

	parent := ctx // the report check outlives the scenario's timeout
	ctx, cancel := context.WithTimeout(ctx, sc.Timeout)
	defer cancel()
	group := proc.NewGroup()
	runErr := r.execute(ctx, group)
	r.prog.stop()
	meta := r.meta(runErr)
	// Every process stops, even when the run failed half way.
	if err := group.Close(10 * time.Second); err != nil {
		runErr = errors.Join(runErr, fmt.Errorf("cleanup: %w", err))
	}
	for _, p := range group.Records() {
		meta.Processes = append(meta.Processes, bundle.ProcessInfo{Name: p.Name, PID: p.PID, Args: p.Args, Log: relLog(p.Log, work)})
	}
	if runErr != nil {
		meta.Error = runErr.Error()
	}
	meta.DurationMS = time.Since(start).Milliseconds()
	if err := r.writeBundle(meta); err != nil {
		return nil, fmt.Errorf("write bundle %s: %w", dir, err)
	}
	out, err := Finish(parent, dir, opts)
	if err != nil {
		return nil, err
	}
	out.Err, out.Duration, out.DockerRun, out.Replay = errors.Join(runErr, out.Err), time.Since(start), r.dockerRun, r.replayChecks
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

func (r *run) execute(ctx context.Context, group *proc.Group) error {
	r.prog.set("building binaries", "")
	bins, err := cluster.PrepareBinaries(ctx, r.opts.Cache, r.work, r.sc.Cluster.BuildTags...)
	if err != nil {
		return fmt.Errorf("binaries: %w", err)
	}
	r.binaries = bins
	if r.runtime() == "docker" {
		r.prog.set("building images", "")
		if err := r.useDocker(ctx, group, bins); err != nil {
			return fmt.Errorf("docker runtime: %w", err)
		}
	}
	masterCfg := map[string]any{}
	for k, v := range r.sc.Cluster.Config {
		masterCfg[k] = v
	}
	if r.sc.Cluster.LegacyImport != nil {
		base, extra, err := r.legacyBase(ctx)
		if err != nil {
			return err
		}
		r.base = base
		for k, v := range extra {
			masterCfg[k] = v
		}
		r.events.add("note", "legacy", "", fmt.Sprintf("every master imports %s (%d objects) from %s", base.LegacySnapshotID, len(base.Objects), base.Fixture), true)
	}
	shape := cluster.Shape{EtcdMembers: r.sc.Cluster.Etcd, Masters: r.sc.Cluster.Masters, ClusterID: r.sc.Cluster.ClusterID,
		MasterConfig: masterCfg, EtcdQuotaBytes: r.sc.Cluster.EtcdQuotaBytes, Failpoints: failpointEnv(r.sc.Cluster.Failpoints), Seed: r.sc.Seed,
		S3: r.sc.Cluster.S3, Security: cluster.Security{TLS: r.sc.Cluster.Security.TLS, Auth: r.sc.Cluster.Security.Auth}}
	shape.FirstPrimary = r.opts.FirstPrimary
	if sup := r.sc.Cluster.Supervisor; sup != nil {
		shape.Supervisor = masters.Supervisor{Restart: sup.Restart, Backoff: sup.Backoff,
			OnRestart: func(node string, exit error, after time.Duration, err error) {
				if err != nil {
					r.events.add("note", "supervisor", node, fmt.Sprintf("restart %v after its exit (%v) failed: %v", after.Round(time.Millisecond), exit, err), false)
					return
				}
				r.events.add("note", "supervisor", node, fmt.Sprintf("restarted %v after its exit (%v)", after.Round(time.Millisecond), exit), true)
			}}
	}
	r.prog.set("booting cluster", "")
	c, err := cluster.Up(ctx, group, bins, shape, r.work)
	r.cluster = c
	if err != nil {
		return fmt.Errorf("boot: %w", err)
	}
	ks, err := contract.NewKeyspace(r.sc.Cluster.ClusterID)
	if err != nil {
		return err
	}
	r.env = cluster.NewEnv(c, ks, r.sc.Seed)
	r.env.BeforeCompact = r.beforeCompact
	r.events.add("note", bundle.BootNote, "", fmt.Sprintf("cluster healthy in %v", c.Boot.Round(time.Millisecond)), true)
	obsCtx, stopObs := context.WithCancel(ctx)
	var obs sync.WaitGroup
	obs.Add(2)
	go func() {
		defer obs.Done()
		r.observe(obsCtx)
	}()
	go func() {
		defer obs.Done()
		r.sample(obsCtx)
	}()
	defer func() {
		stopObs()
		obs.Wait()
	}()
	if err := r.setup(ctx); err != nil {
		return err
	}
	r.startTraffic(ctx)
	stepErr := r.runSteps(ctx)
	if stepErr == nil {
		r.waitMinimumWork(ctx)
	}
	r.settle(ctx)
	if err := r.collect(ctx); err != nil {
		return errors.Join(stepErr, fmt.Errorf("collect: %w", err))
	}
	return stepErr
}

func failpointEnv(fps map[string]string) string {
	var parts []string
	for k, v := range fps {
		parts = append(parts, k+"="+v)
	}
	return strings.Join(parts, ";")
}

// setup mounts the segments the traffic places replicas on.
func (r *run) setup(ctx context.Context) error {
	_, url, err := r.env.PrimaryURL(ctx)
	if err != nil {
		return err
	}
	for i := 0; i < 3; i++ {
		seg := fmt.Sprintf("10.0.%d.1:7000", i)
		op := history.Op{Client: -1, Kind: history.Mount, Key: seg, Node: r.env.NodeForURL(url), Invoke: r.rec.Now()}
		res := r.cluster.Masters.Client.Mount(ctx, url, segment(seg, i))
		op.Complete, op.Outcome, op.Code, op.BatchID, op.Seq = r.rec.Now(), res.Outcome, res.Code, res.BatchID, res.Seq
		r.rec.Add(op)
		if res.Outcome != history.OK {
			return fmt.Errorf("mount segment %s: %s %s", seg, res.Code, res.Error)
		}
	}
	return nil
}

func (r *run) startTraffic(ctx context.Context) {
	if r.gen != nil {
		return
	}
	cfg := r.sc.Traffic
	cfg.Seed = r.sc.Seed
	cfg.Generation = r.generations
	r.generations++
	r.gen = traffic.Start(ctx, cfg, r.env, r.rec)
	r.events.add("note", "traffic", "", "started", true)
}

// waitMinimumWork lets traffic that is still running reach the
// acknowledged mutations the scenario expects (bounded), so the
// minimum-work audit judges what the run did, not how fast a loaded
// machine went through its steps.
func (r *run) waitMinimumWork(ctx context.Context) {
	need := r.sc.Expect.MinOKOps
	if r.gen == nil || need <= 0 {
		return
	}
	okMutations := func() int { return audit.AcknowledgedMutations(r.rec.Ops()) }
	start := time.Now()
	deadline := time.NewTimer(minimumWorkWait)
	defer deadline.Stop()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for n := okMutations(); n < need; n = okMutations() {
		select {
		case <-ctx.Done():
			return
		case <-r.gen.Done():
			return
		case <-deadline.C:
			r.events.add("note", "minimum-work", "", fmt.Sprintf("traffic reached %d of the %d acknowledged mutations the "+
				"scenario expects in %v", n, need, minimumWorkWait), false)
			return
		case <-tick.C:
		}
	}
	if waited := time.Since(start); waited > time.Second {
		r.events.add("note", "minimum-work", "", fmt.Sprintf("traffic ran %v more to reach the %d acknowledged mutations the "+
			"scenario expects", waited.Round(time.Second), need), true)
	}
}

// minimumWorkWait bounds waitMinimumWork.
const minimumWorkWait = 60 * time.Second

func (r *run) stopTraffic() {
	if r.gen == nil {
		return
	}
	r.gen.Stop()
	all, ok := r.gen.Ops()
	r.events.add("note", "traffic", "", fmt.Sprintf("stopped after %d ops (%d ok)", all, ok), true)
}

func (r *run) runSteps(ctx context.Context) error {
	for i, st := range r.sc.Steps {
		r.prog.step(i+1, st.Label())
		r.stepIndex = i + 1
		t := bundle.StepTiming{Index: i + 1, Label: st.Label(), Line: st.Line, StartNS: r.rec.Now()}
		err := r.step(ctx, st)
		t.EndNS, t.OK = r.rec.Now(), err == nil
		if err != nil {
			t.Detail = err.Error()
		}
		r.steps = append(r.steps, t)
		r.events.add("step", st.Label(), "", t.Detail, err == nil)
		if err != nil {
			for j := i + 1; j < len(r.sc.Steps); j++ {
				r.events.add("step", r.sc.Steps[j].Label(), "", "skipped: an earlier step failed", false)
			}
			return fmt.Errorf("step %d (line %d) %s: %w", i+1, st.Line, st.Label(), err)
		}
	}
	return nil
}

// settle ends traffic, heals what is still injected and lets every node
// catch up before the evidence is read.
func (r *run) settle(ctx context.Context) {
	r.prog.set("settling", "")
	r.stopTraffic()
	r.healAll(ctx)
	if r.allFailedClosed(ctx) {
		r.events.add("note", "settle", "", "no master serves nor could: every master failed closed or exited, nothing to catch up", true)
		return
	}
	if err := r.waitCaughtUp(ctx, 60*time.Second); err != nil {
		r.events.add("note", "settle", "", err.Error(), false)
	}
}

// allFailedClosed reports that no master can serve: every running master
// refused to bootstrap or says it may not campaign, or none is running
// (each refused to start).
func (r *run) allFailedClosed(ctx context.Context) bool {
	for i, h := range r.cluster.Masters.Health(ctx) {
		p, ok := r.cluster.Group.Get(r.cluster.Masters.Nodes[i].Name)
		if !ok || !p.Running() || h.Role == "failed" {
			continue
		}
		if h.Serving || h.Promotable == nil || *h.Promotable {
			return false
		}
	}
	return true
}

// meta gathers the run facts.
func (r *run) meta(runErr error) bundle.Meta {
	m := bundle.Meta{Scenario: r.sc.Name, Tier: r.sc.Tier, Seed: r.sc.Seed, Runtime: r.runtime(), ClusterID: r.sc.Cluster.ClusterID,
		Started: r.start, Steps: r.steps, Replayed: r.opts.Replayed}
	if r.cluster != nil {
		m.BootMS = r.cluster.Boot.Milliseconds()
	}
	for _, b := range []cluster.BinaryInfo{r.binaries.Etcd, r.binaries.Toxiproxy, r.binaries.Master, r.binaries.Versity, r.binaries.FakeS3} {
		if b.Name != "" {
			m.Binaries = append(m.Binaries, bundle.Binary{Name: b.Name, Version: b.Version, SHA256: b.SHA256})
		}
	}
	return m
}
