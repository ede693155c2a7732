package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/oplogha/oplogha/impl/contract/keyspace"

	"github.com/oplogha/oplogha/faults"
	"github.com/oplogha/oplogha/harness/audit"
	"github.com/oplogha/oplogha/harness/bundle"
	"github.com/oplogha/oplogha/harness/cluster"
	"github.com/oplogha/oplogha/harness/etcd"
	"github.com/oplogha/oplogha/harness/history"
	"github.com/oplogha/oplogha/harness/masterkind"
	"github.com/oplogha/oplogha/harness/masters"
	"github.com/oplogha/oplogha/harness/proc"
)

// execute is a run's lifecycle: boot, run the steps, settle and collect
// the evidence; every process it starts joins group.
func (r *run) execute(ctx context.Context, group *proc.Group) error {
	stop, err := r.boot(ctx, group)
	defer stop()
	if err != nil {
		return err
	}
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

// ErrCannotRun: the run could not start (a binary that would not build or
// is missing, a docker image, a fixture): nothing of the system was run,
// so the run says nothing about it.
var ErrCannotRun = errors.New("the run could not start")

// boot builds the binaries, boots the cluster (or the docker one), starts
// the run's observers and etcd clock, mounts the segments and starts
// traffic; stop ends the observers and the clock (call it even on error).
func (r *run) boot(ctx context.Context, group *proc.Group) (stop func(), err error) {
	var stops []func()
	stop = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	r.prog.set("building binaries", "")
	bins, err := cluster.PrepareBinaries(ctx, r.opts.Cache, r.work, r.sc.Cluster.BuildTags...)
	if err != nil {
		return stop, fmt.Errorf("%w: binaries: %w", ErrCannotRun, err)
	}
	driver, err := r.useKind(group, &bins)
	if err != nil {
		return stop, fmt.Errorf("%w: %w", ErrCannotRun, err)
	}
	r.binaries = bins
	if r.runtime() == "docker" {
		r.prog.set("building images", "")
		if err := r.useDocker(ctx, group, bins); err != nil {
			return stop, fmt.Errorf("%w: docker runtime: %w", ErrCannotRun, err)
		}
	}
	masterCfg := map[string]any{}
	for k, v := range r.sc.Cluster.Config {
		masterCfg[k] = v
	}
	if r.sc.Cluster.LegacyImport != nil {
		base, extra, err := r.legacyBase(ctx)
		if err != nil {
			return stop, fmt.Errorf("%w: %w", ErrCannotRun, err)
		}
		r.base = base
		for k, v := range extra {
			masterCfg[k] = v
		}
		r.events.add("note", "legacy", "", fmt.Sprintf("every master imports %s (%d objects) from %s", base.LegacySnapshotID, len(base.Objects), base.Fixture), true)
	}
	shape := cluster.Shape{EtcdMembers: r.sc.Cluster.Etcd, Masters: r.sc.Cluster.Masters, ClusterID: r.sc.Cluster.ClusterID,
		MasterConfig: masterCfg, EtcdQuotaBytes: r.sc.Cluster.EtcdQuotaBytes, Failpoints: r.sc.Cluster.Failpoints, Seed: r.sc.Seed,
		S3: r.sc.Cluster.S3, Security: cluster.Security{TLS: r.sc.Cluster.Security.TLS, Auth: r.sc.Cluster.Security.Auth}}
	shape.FirstPrimary, shape.Driver, shape.OnMasterExit = r.opts.FirstPrimary, driver, r.masterExited
	if len(r.sc.Cluster.EtcdKeys) > 0 {
		shape.BeforeMasters = r.putEtcdKeys
	}
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
		return stop, fmt.Errorf("boot: %w", err)
	}
	ks, err := keyspace.New(r.sc.Cluster.ClusterID)
	if err != nil {
		return stop, err
	}
	stops = append(stops, c.Masters.Close)
	r.env = cluster.NewEnv(c, ks, r.sc.Seed)
	r.env.BeforeCompact = r.beforeCompact
	clockCli, _, err := r.etcd()
	if err != nil {
		return stop, err
	}
	r.clock = startClock(clockCli, ks)
	stops = append(stops, func() {
		r.clock.close()
		clockCli.Close()
	})
	r.events.add("note", bundle.BootNote, "", fmt.Sprintf("cluster healthy in %v", c.Boot.Round(time.Millisecond)), true)
	obsCtx, stopObs := context.WithCancel(ctx)
	var obs sync.WaitGroup
	for _, observe := range []func(context.Context){r.observe, r.observePublications} {
		obs.Add(1)
		go func() {
			defer obs.Done()
			observe(obsCtx)
		}()
	}
	// The sampler keeps every snapshot a pointer names; collection stops it
	// before it freezes the masters and reads etcd, so nothing is kept that
	// the history it reads cannot name (a pointer put in flight at the
	// freeze commits after the read).
	sampCtx, stopSamp := context.WithCancel(obsCtx)
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		r.sample(sampCtx)
	}()
	r.stopSampler = sync.OnceFunc(func() {
		stopSamp()
		<-sampled
	})
	stops = append(stops, func() {
		stopObs()
		r.stopSampler()
		obs.Wait()
		r.seen.Wait()
	})
	if err := r.setup(ctx); err != nil {
		return stop, err
	}
	r.startTraffic(ctx)
	return stop, nil
}

// putEtcdKeys puts the scenario's cluster.etcd_keys before any master
// starts, each recorded with its revision as the harness's own write.
func (r *run) putEtcdKeys(ctx context.Context, ec *etcd.Cluster) error {
	ks, err := r.keyspace()
	if err != nil {
		return err
	}
	cli, err := ec.Client(nil)
	if err != nil {
		return err
	}
	defer cli.Close()
	for _, name := range slices.Sorted(maps.Keys(r.sc.Cluster.EtcdKeys)) {
		key := faults.KeyAt(ks, name)
		pctx, cancel := context.WithTimeout(ctx, cluster.CallTimeout)
		resp, err := cli.Put(pctx, key, r.sc.Cluster.EtcdKeys[name])
		cancel()
		if err != nil {
			return fmt.Errorf("put %s: %w", key, err)
		}
		r.events.push(audit.Event{Kind: "note", Name: "etcd-key", Target: key, OK: true, Revisions: []int64{resp.Header.Revision},
			Detail: fmt.Sprintf("put before the masters started (%d bytes)", len(r.sc.Cluster.EtcdKeys[name]))})
	}
	return nil
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
		res := r.client.Mount(ctx, url, segment(seg, i))
		op.Complete, op.Outcome, op.Code, op.BatchID, op.Seq = r.rec.Now(), res.Outcome, res.Code, res.BatchID, res.Seq
		r.rec.Add(op)
		if res.Outcome != history.OK {
			return fmt.Errorf("mount segment %s: %s %s", seg, res.Code, res.Error)
		}
	}
	return nil
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
	r.healAll(ctx, true)
	if why := r.etcdUnreadable(ctx, 10*time.Second); why != "" {
		// Catching up is measured against etcd: nothing to wait for.
		r.events.add("note", "settle", "", "not waiting for the masters to catch up: "+why, false)
		return
	}
	if r.allFailedClosed(ctx) {
		r.events.add("note", "settle", "", "no master serves nor could: every master failed closed or exited, nothing to catch up", true)
		return
	}
	if !r.kind.Can(masterkind.Cursor) {
		// No node says how far it applied; what the evidence needs is
		// that the writer has finished: etcd's durable prefix still for
		// a while, so an acknowledgement not durable by then is not one
		// still on its way.
		still, err := r.waitDurableStill(ctx, settleStill, 60*time.Second)
		detail := fmt.Sprintf("master %s does not say its cursor: waited for etcd's durable prefix to stay at batch %d for %v", r.kind.Name, still, settleStill)
		if err != nil {
			detail = fmt.Sprintf("master %s does not say its cursor: the durable prefix did not stay still for %v: %v", r.kind.Name, settleStill, err)
		}
		ok := err == nil
		// A prefix that stays still because the writer stopped is no
		// settled cluster: acknowledgements after its last move say so.
		if moved := r.clock.lastMove(); err == nil && !moved.IsZero() {
			if n := r.ackedAfter(moved.Add(stallGrace)); n >= stallAcks {
				detail += fmt.Sprintf("; but it had not moved since %.2fs, and %d mutations were acknowledged more than %v after that: a writer that stopped, not one that finished",
					moved.Sub(r.start).Seconds(), n, stallGrace)
				ok = false
			}
		}
		r.events.add("note", "settle", "", detail, ok)
		return
	}
	if err := r.waitCaughtUp(ctx, 60*time.Second, true); err != nil {
		r.events.add("note", "settle", "", err.Error(), false)
	}
}

// A settled prefix hides a stopped writer when stallAcks or more
// mutations were acknowledged more than stallGrace after the prefix last
// moved (as the clock saw it): none of them can be durable.
const (
	stallGrace = 200 * time.Millisecond
	stallAcks  = 10
)

// ackedAfter counts the mutations acknowledged after t.
func (r *run) ackedAfter(t time.Time) int {
	after := int64(t.Sub(r.start))
	n := 0
	for _, op := range r.rec.Ops() {
		if op.Outcome == history.OK && op.Complete > after && (op.Kind == history.Put || op.Kind == history.Remove) {
			n++
		}
	}
	return n
}

// settleStill is how long the durable prefix must not move before the
// evidence of a master that does not say its cursor is read.
const settleStill = 5 * time.Second

// waitDurableStill waits, up to bound, until etcd's durable prefix has not
// moved for still, and returns the batch it stayed at.
func (r *run) waitDurableStill(ctx context.Context, still, bound time.Duration) (uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	cli, ks, err := r.etcd()
	if err != nil {
		return 0, err
	}
	defer cli.Close()
	last, err := durableBatchOf(ctx, cli, ks)
	if err != nil {
		return 0, err
	}
	since := time.Now()
	for time.Since(since) < still {
		select {
		case <-ctx.Done():
			return last, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		b, err := durableBatchOf(ctx, cli, ks)
		if err != nil {
			return last, err
		}
		if b != last {
			last, since = b, time.Now()
		}
	}
	return last, nil
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
