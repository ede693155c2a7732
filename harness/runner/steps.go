package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/oplogha/oplogha/faults"
	"github.com/oplogha/oplogha/harness/audit"
	"github.com/oplogha/oplogha/harness/client"
	"github.com/oplogha/oplogha/harness/cluster"
	"github.com/oplogha/oplogha/harness/proc"
	"github.com/oplogha/oplogha/harness/scenario"
)

func (r *run) step(ctx context.Context, st scenario.Step) error {
	afterFailpoint := r.lastFailpointHit
	r.lastFailpointHit = ""
	switch st.Kind() {
	case "sleep":
		if a, ok := r.nextAnchor(); ok && a.BatchID > 0 {
			// A replay waits for the progress the next fault's original
			// had, not for the time that happened to give it.
			r.waitForBatch(ctx, a.BatchID, 3*st.Sleep+10*time.Second)
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(st.Sleep):
			return nil
		}
	case "wait":
		return r.wait(ctx, st.Wait)
	case "fault":
		spec := *st.Fault
		// A target may name an earlier fault (its `as`): the node that fault chose.
		if node, ok := r.nodeOf(spec.Target); ok {
			spec.Target = node
		}
		if node, ok := r.nodeOf(spec.Excluding); ok {
			spec.Excluding = node
		}
		var divergence string
		orig, replaying := r.opts.Anchors[r.stepIndex]
		if replaying {
			spec, divergence = r.pinToAnchor(ctx, spec, orig)
			if divergence != "" && r.opts.Strict {
				r.replayChecks = append(r.replayChecks, ReplayCheck{Step: r.stepIndex, Fault: st.Fault.Kind, Detail: divergence})
				return fmt.Errorf("%w at step %d: %s", ErrDiverged, r.stepIndex, divergence)
			}
		}
		anchor := r.anchorNow(ctx, r.stepIndex)
		anchor.AfterFailpoint = afterFailpoint
		before := r.masterProcesses()
		in, err := faults.Inject(ctx, faultEnv{r.env, r}, spec)
		name := st.As
		if name == "" {
			name = fmt.Sprintf("step-%d", st.Line)
		}
		if err != nil {
			r.events.add("fault", st.Fault.Kind, "", name+": "+err.Error(), false)
			return err
		}
		r.injected[name] = in
		r.order = append(r.order, name)
		if len(in.Targets) == 1 && endsProcess(spec) {
			if p, ok := before[in.Targets[0]]; ok {
				r.ended[name] = p
			}
		}
		anchor.Targets = in.Targets
		r.events.addFault("fault", st.Fault.Kind, joinTargets(in.Targets), name, in, anchor)
		if replaying {
			c := checkLanding(st.Fault.Kind, orig, *anchor, divergence)
			r.replayChecks = append(r.replayChecks, c)
			r.events.add("note", "replay", joinTargets(in.Targets), c.Detail, c.Same)
		}
		return nil
	case "heal":
		if st.Heal == "all" {
			return r.healAll(ctx)
		}
		return r.heal(ctx, st.Heal)
	case "restart":
		if len(st.Restart.Config) > 0 {
			if err := r.cluster.Masters.Reconfigure(st.Restart.Config); err != nil {
				return fmt.Errorf("reconfigure masters: %w", err)
			}
			r.events.add("note", "reconfigure", "all masters", fmt.Sprintf("%v", st.Restart.Config), true)
		}
		return r.restartMasters(ctx, st.Restart.Mode)
	case "traffic":
		if st.Traffic == "start" {
			r.gen = nil
			r.startTraffic(ctx)
		} else {
			r.stopTraffic()
		}
		return nil
	case "assert":
		return r.assert(ctx, st.Assert)
	}
	return fmt.Errorf("unknown step kind %q", st.Kind())
}

// faultEnv is the run's Env plus the keys only the runner's own etcd client
// reaches (faults.KeyEnv): deleting a stray key, finding the election's leader key.
type faultEnv struct {
	*cluster.Env
	r *run
}

var _ faults.KeyEnv = faultEnv{}

func (e faultEnv) EtcdDelete(ctx context.Context, key string) (int64, error) {
	cli, _, err := e.r.etcd()
	if err != nil {
		return 0, err
	}
	defer cli.Close()
	resp, err := cli.Delete(ctx, key)
	if err != nil {
		return 0, fmt.Errorf("delete %s: %w", key, err)
	}
	return resp.Header.Revision, nil
}

func (e faultEnv) EtcdDeleteAll(ctx context.Context, keys, prefixes []string) (int64, int64, error) {
	cli, _, err := e.r.etcd()
	if err != nil {
		return 0, 0, err
	}
	defer cli.Close()
	var ops []clientv3.Op
	for _, k := range keys {
		ops = append(ops, clientv3.OpDelete(k))
	}
	for _, p := range prefixes {
		ops = append(ops, clientv3.OpDelete(p, clientv3.WithPrefix()))
	}
	resp, err := cli.Txn(ctx).Then(ops...).Commit()
	if err != nil {
		return 0, 0, fmt.Errorf("delete %v and %v: %w", keys, prefixes, err)
	}
	var n int64
	for _, r := range resp.Responses {
		n += r.GetResponseDeleteRange().Deleted
	}
	return resp.Header.Revision, n, nil
}

func (e faultEnv) EtcdOldest(ctx context.Context, prefix string) (string, []byte, error) {
	cli, _, err := e.r.etcd()
	if err != nil {
		return "", nil, err
	}
	defer cli.Close()
	resp, err := cli.Get(ctx, prefix, clientv3.WithFirstCreate()...)
	if err != nil {
		return "", nil, fmt.Errorf("read %s: %w", prefix, err)
	}
	if len(resp.Kvs) == 0 {
		return "", nil, nil
	}
	return string(resp.Kvs[0].Key), resp.Kvs[0].Value, nil
}

func joinTargets(ts []string) string {
	if len(ts) <= 3 {
		return fmt.Sprint(ts)
	}
	return fmt.Sprintf("%v … (%d links)", ts[:3], len(ts))
}

func (r *run) heal(ctx context.Context, name string) error {
	in, ok := r.injected[name]
	if !ok {
		return fmt.Errorf("no active fault %q", name)
	}
	err := in.Heal(ctx)
	if err == nil && len(in.HealRevisions) > 0 {
		r.events.addRevisions("heal", in.Spec.Kind, joinTargets(in.Targets), name, in.HealRevisions)
	} else {
		r.events.add("heal", in.Spec.Kind, joinTargets(in.Targets), name, err == nil)
	}
	delete(r.injected, name)
	r.healed[name] = in
	r.order = slices.DeleteFunc(r.order, func(s string) bool { return s == name })
	return err
}

// healAll heals every active fault, newest first.
func (r *run) healAll(ctx context.Context) error {
	var errs []error
	for i := len(r.order) - 1; i >= 0; i-- {
		errs = append(errs, r.heal(ctx, r.order[i]))
	}
	return errors.Join(errs...)
}

// restartMasters stops every master (gracefully, or SIGKILL for crash) and
// starts them all again: a cold restart of the whole control plane.
func (r *run) restartMasters(ctx context.Context, mode string) error {
	var wg sync.WaitGroup
	errs := make([]error, len(r.env.Masters()))
	for i, m := range r.env.Masters() {
		p, ok := r.cluster.Group.Get(m)
		if !ok || !p.Running() {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if mode == "crash" {
				errs[i] = r.env.Kill(m)
			} else {
				errs[i] = r.env.Stop(m, 10*time.Second)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	r.events.add("fault", "restart-"+mode, "all masters", "restart-all", true)
	for _, m := range r.env.Masters() {
		if err := r.env.Start(ctx, m); err != nil {
			return err
		}
	}
	r.events.add("heal", "restart-"+mode, "all masters", "restart-all", true)
	return nil
}

func (r *run) wait(ctx context.Context, w *scenario.Wait) error {
	ctx, cancel := context.WithTimeout(ctx, w.Timeout)
	defer cancel()
	switch w.For {
	case "primary":
		var exclude string
		if w.Excluding != "" {
			exclude, _ = r.nodeOf(w.Excluding)
		}
		return poll(ctx, func() (bool, string) {
			hs := r.cluster.Masters.Health(ctx)
			for i, h := range hs {
				if h.Serving && h.Role == "primary" && r.cluster.Masters.Nodes[i].Name != exclude {
					return true, ""
				}
			}
			return false, "no serving primary" + excludeNote(exclude)
		})
	case "caught-up":
		return r.waitCaughtUp(ctx, w.Timeout)
	case "ops":
		if r.gen == nil {
			return errors.New("wait for ops: traffic is not running")
		}
		_, base := r.gen.Ops()
		return poll(ctx, func() (bool, string) {
			_, ok := r.gen.Ops()
			return ok-base >= int64(w.Ops), fmt.Sprintf("%d of %d acknowledged ops", ok-base, w.Ops)
		})
	case "snapshots":
		if w.Covering {
			return r.waitLatestCovers(ctx)
		}
		return r.waitSnapshots(ctx, w.Count)
	case "metric":
		return poll(ctx, func() (bool, string) {
			if err := r.assertMetric(ctx, w.Metric); err != nil {
				return false, err.Error()
			}
			return true, ""
		})
	case "failpoint":
		return r.waitFailpoint(ctx, w)
	case "pruned":
		cli, ks, err := r.etcd()
		if err != nil {
			return err
		}
		defer cli.Close()
		return poll(ctx, func() (bool, string) {
			sh, err := r.oplogShape(ctx, cli, ks)
			if err != nil {
				return false, err.Error()
			}
			return sh.Floor > 0 && sh.Lowest > sh.Floor, sh.String()
		})
	case "role":
		node := w.Node
		if n, ok := r.nodeOf(w.Node); ok {
			node = n
		}
		ended := r.ended[w.Node]
		return poll(ctx, func() (bool, string) {
			if ended != nil && w.Role != "down" {
				if n, ok := r.env.Node(node); ok {
					if cur, ok := r.cluster.Masters.Process(n); !ok || cur == ended {
						return false, fmt.Sprintf("%s has not started again since %s ended it", node, w.Node)
					}
				}
			}
			if w.Role == "down" {
				// Down is the process gone, not only its API: a node that
				// panicked closes its listener before it has exited, and a
				// heal in that moment would find it still running.
				return !r.env.Running(node), fmt.Sprintf("%s's process is still running", node)
			}
			role := r.roleOf(ctx, node)
			if role == "" {
				return false, "no master " + node
			}
			return role == w.Role, fmt.Sprintf("%s is %s", node, role)
		})
	}
	return fmt.Errorf("unknown wait %q", w.For)
}

// waitFailpoint waits until a failpoint's term has fired the wanted number
// of times on its node: the window it marks has been reached (and, for a
// hold term, the node stays in it until the fault is healed).
func (r *run) waitFailpoint(ctx context.Context, w *scenario.Wait) error {
	node, name := w.Node, w.Failpoint
	if in, ok := r.injectedOrHealed(w.Node); ok && len(in.Targets) > 0 {
		node, _ = r.nodeOf(w.Node)
		if name == "" && in.Spec.Kind == "failpoint" {
			name = in.Spec.Name
		}
	}
	hits := max(w.Hits, 1)
	defer func() { r.lastFailpointHit = fmt.Sprintf("%s@%s×%d", name, node, hits) }()
	return poll(ctx, func() (bool, string) {
		n, err := r.env.FailpointHits(ctx, node, name)
		if err != nil {
			return false, err.Error()
		}
		if !r.env.Running(node) {
			return false, fmt.Sprintf("%s is not running", node)
		}
		return n >= hits, fmt.Sprintf("failpoint %s fired %d of %d times on %s", name, n, hits, node)
	})
}

func excludeNote(n string) string {
	if n == "" {
		return ""
	}
	return " other than " + n
}

// nextAnchor is the original's anchor of the next step, when replaying and
// that step is a fault.
func (r *run) nextAnchor() (audit.Anchor, bool) {
	if r.opts.Anchors == nil || r.stepIndex >= len(r.sc.Steps) || r.sc.Steps[r.stepIndex].Kind() != "fault" {
		return audit.Anchor{}, false
	}
	a, ok := r.opts.Anchors[r.stepIndex+1]
	return a, ok
}

// masterProcesses are the masters' current processes, by node name.
func (r *run) masterProcesses() map[string]*proc.Process {
	out := map[string]*proc.Process{}
	for _, n := range r.cluster.Masters.Nodes {
		if p, ok := r.cluster.Masters.Process(n); ok {
			out[n.Name] = p
		}
	}
	return out
}

// endsProcess reports whether a fault ends its target's process: a wait for
// the node's role afterwards is about the process that replaces it.
func endsProcess(s faults.Spec) bool {
	switch s.Kind {
	case "kill", "stop", "restart":
		return true
	case "failpoint":
		return strings.Contains(s.Term, "panic")
	}
	return false
}

// nodeOf is the node an earlier fault (named by its `as`) hit: its first
// target, or, for a link fault, the node every link it cut belongs to
// ("master-0.etcd-1" and "master-0.etcd-2" → master-0). ok is false when
// name names no fault, or a link fault whose links leave from several
// nodes (then no single node was cut off).
func (r *run) nodeOf(name string) (string, bool) {
	in, ok := r.injectedOrHealed(name)
	if !ok || len(in.Targets) == 0 {
		return "", false
	}
	if in.Spec.Link == "" {
		return in.Targets[0], true
	}
	node, _, _ := strings.Cut(in.Targets[0], ".")
	for _, t := range in.Targets[1:] {
		if n, _, _ := strings.Cut(t, "."); n != node {
			return "", false
		}
	}
	return node, true
}

// injectedOrHealed finds a fault by name, active or already healed.
func (r *run) injectedOrHealed(name string) (*faults.Injected, bool) {
	if in, ok := r.injected[name]; ok {
		return in, true
	}
	in, ok := r.healed[name]
	return in, ok
}

// waitCaughtUp waits until a primary serves and every running master has
// applied at least what the primary had when the wait began (under load the
// cursors move on; equality is only expected once traffic stops).
func (r *run) waitCaughtUp(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var target *client.Cursor
	return poll(ctx, func() (bool, string) {
		hs := r.cluster.Masters.Health(ctx)
		var primary *client.Health
		for i := range hs {
			if hs[i].Serving {
				primary = &hs[i]
			}
		}
		if primary == nil {
			return false, "no serving primary"
		}
		if target == nil {
			// The target is what is durable in etcd, not the primary's
			// cursor: a primary whose append is still in flight (its
			// response stuck on a link a partition broke) has made a batch
			// durable that it has not applied yet.
			// (An unreadable prefix — a scenario's garbage — leaves the
			// primary's cursor as the target.)
			c := primary.Cursor
			if d, err := r.durableBatch(ctx); err == nil && d > c.BatchID {
				c = client.Cursor{BatchID: d}
			}
			target = &c
		}
		for i, h := range hs {
			p, ok := r.cluster.Group.Get(r.cluster.Masters.Nodes[i].Name)
			if !ok || !p.Running() {
				continue
			}
			if h.Cursor.BatchID < target.BatchID {
				return false, fmt.Sprintf("%s at batch %d, waiting for batch %d", h.NodeID, h.Cursor.BatchID, target.BatchID)
			}
		}
		return true, ""
	})
}

func (r *run) assert(ctx context.Context, a *scenario.Assert) error {
	ks, err := r.keyspace()
	if err != nil {
		return err
	}
	if a.NoSnapshotsFor > 0 {
		if err := r.unchangedFor(ctx, ks.SnapshotLatest(), a.NoSnapshotsFor, func(cur string) error {
			return fmt.Errorf("a snapshot was published while none should be: %s", pointerSummary(cur))
		}); err != nil {
			return err
		}
	}
	if a.NoCampaignFor > 0 {
		if err := r.noKeysUnder(ctx, ks.LeaderCandidates(), a.NoCampaignFor); err != nil {
			return err
		}
	}
	if a.NoViewClaimsFor > 0 {
		if err := r.unchangedFor(ctx, ks.ProducerView(), a.NoViewClaimsFor, func(cur string) error {
			return fmt.Errorf("a producer view was claimed while no node may: now %s", cur)
		}); err != nil {
			return err
		}
	}
	if a.Metric != nil {
		if err := r.assertMetric(ctx, a.Metric); err != nil {
			return err
		}
	}
	if a.Oplog != nil {
		if err := r.assertOplog(ctx, a.Oplog); err != nil {
			return err
		}
	}
	if a.Refuses != nil {
		if err := r.assertRefuses(ctx, a.Refuses); err != nil {
			return err
		}
	}
	hs := r.cluster.Masters.Health(ctx)
	var errs []error
	serving := 0
	for i, h := range hs {
		p, ok := r.cluster.Group.Get(r.cluster.Masters.Nodes[i].Name)
		if !ok || !p.Running() {
			continue
		}
		if h.Serving {
			serving++
		}
		if len(a.BootstrapSource) > 0 && !slices.Contains(a.BootstrapSource, sourceOf(h)) {
			errs = append(errs, fmt.Errorf("%s bootstrapped from %q, want %v", h.NodeID, h.Bootstrap.Source, a.BootstrapSource))
		}
	}
	if a.Serving != nil && serving != *a.Serving {
		errs = append(errs, fmt.Errorf("%d serving primaries, want %d", serving, *a.Serving))
	}
	return errors.Join(errs...)
}

// poll calls cond every 50ms until it holds or ctx ends; the error carries
// cond's last word on why not.
func poll(ctx context.Context, cond func() (bool, string)) error {
	var why string
	for {
		var ok bool
		ok, why = cond()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %s", ctx.Err(), why)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// waitSnapshots waits for count new publications of the latest pointer,
// reading etcd directly (the observer puts each on the timeline).
func (r *run) waitSnapshots(ctx context.Context, count int) error {
	cli, ks, err := r.etcd()
	if err != nil {
		return err
	}
	defer cli.Close()
	key := ks.SnapshotLatest()
	var last string
	if resp, err := cli.Get(ctx, key); err == nil && len(resp.Kvs) > 0 {
		last = string(resp.Kvs[0].Value)
	}
	seen := 0
	return poll(ctx, func() (bool, string) {
		resp, err := cli.Get(ctx, key)
		if err != nil {
			return false, err.Error()
		}
		if len(resp.Kvs) > 0 && string(resp.Kvs[0].Value) != last {
			last = string(resp.Kvs[0].Value)
			seen++
		}
		return seen >= count, fmt.Sprintf("%d of %d publications", seen, count)
	})
}

// waitLatestCovers waits until the latest pointer names the durable
// prefix's batch.
func (r *run) waitLatestCovers(ctx context.Context) error {
	cli, ks, err := r.etcd()
	if err != nil {
		return err
	}
	defer cli.Close()
	return poll(ctx, func() (bool, string) {
		durable, err := durableBatchOf(ctx, cli, ks)
		if err != nil {
			return false, err.Error()
		}
		resp, err := cli.Get(ctx, ks.SnapshotLatest())
		if err != nil || len(resp.Kvs) == 0 {
			return false, fmt.Sprintf("no latest pointer (durable batch %d)", durable)
		}
		var p struct {
			Batch uint64 `json:"last_included_batch_id"`
		}
		if err := json.Unmarshal(resp.Kvs[0].Value, &p); err != nil {
			return false, "unparseable latest pointer"
		}
		return p.Batch >= durable, fmt.Sprintf("latest at batch %d, durable batch %d", p.Batch, durable)
	})
}

func pointerSummary(raw string) string {
	var p struct {
		ID    string `json:"snapshot_id"`
		Batch uint64 `json:"last_included_batch_id"`
	}
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		return "unparseable latest pointer"
	}
	return fmt.Sprintf("%s at batch %d", p.ID, p.Batch)
}

// sourceOf is a node's bootstrap source, or "fail-closed" for a node that
// could not bootstrap and serves nothing.
func sourceOf(h client.Health) string {
	if h.Role == "failed" && !h.Serving && h.Bootstrap.Source == "" {
		return "fail-closed"
	}
	return h.Bootstrap.Source
}

// noKeysUnder fails if any key exists under prefix within d (no node
// campaigns: the election prefix stays empty).
func (r *run) noKeysUnder(ctx context.Context, prefix string, d time.Duration) error {
	cli, _, err := r.etcd()
	if err != nil {
		return err
	}
	defer cli.Close()
	for deadline := time.Now().Add(d); time.Now().Before(deadline); {
		resp, err := cli.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithLimit(1))
		if err != nil {
			return err
		}
		if len(resp.Kvs) > 0 {
			return fmt.Errorf("a node campaigned while none may: %s = %s", resp.Kvs[0].Key, resp.Kvs[0].Value)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil
}

// unchangedFor fails, with changed's error, if key's value changes within d.
func (r *run) unchangedFor(ctx context.Context, key string, d time.Duration, changed func(cur string) error) error {
	cli, _, err := r.etcd()
	if err != nil {
		return err
	}
	defer cli.Close()
	read := func() (string, error) {
		resp, err := cli.Get(ctx, key)
		if err != nil || len(resp.Kvs) == 0 {
			return "", err
		}
		return string(resp.Kvs[0].Value), nil
	}
	first, err := read()
	if err != nil {
		return err
	}
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		cur, err := read()
		if err != nil {
			return err
		}
		if cur != first {
			return changed(cur)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil
}

// assertMetric scrapes the named node (or every running node for "any") and
// requires the sample to reach the minimum.
func (r *run) assertMetric(ctx context.Context, m *scenario.MetricAssert) error {
	node := m.Node
	if n, ok := r.nodeOf(m.Node); ok {
		node = n
	}
	var seen []string
	reached, over := false, false
	for _, n := range r.cluster.Masters.Nodes {
		if node != "any" && n.Name != node {
			continue
		}
		if p, ok := r.cluster.Group.Get(n.Name); !ok || !p.Running() {
			continue
		}
		v, err := scrapeSample(ctx, n.DirectURL+"/metrics", m.Sample)
		if err != nil {
			return err
		}
		seen = append(seen, fmt.Sprintf("%s=%g", n.Name, v))
		reached = reached || v >= m.Min
		over = over || (m.Max != nil && v > *m.Max)
	}
	switch {
	case len(seen) == 0:
		return fmt.Errorf("%s: no running node %s to read", m.Sample, node)
	case !reached:
		return fmt.Errorf("%s below %g on %s (%s)", m.Sample, m.Min, node, strings.Join(seen, ", "))
	case over:
		return fmt.Errorf("%s above %g on %s (%s)", m.Sample, *m.Max, node, strings.Join(seen, ", "))
	}
	return nil
}

func scrapeSample(ctx context.Context, url, sample string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return 0, err
	}
	return sampleValue(string(body), sample)
}

// sampleValue finds sample in a Prometheus text exposition. A sample with
// labels names one series; a bare metric name is the sum of all its series
// (as a query of the name alone would add them up). Absent is 0: a counter
// never incremented.
func sampleValue(body, sample string) (float64, error) {
	bare := !strings.Contains(sample, "{")
	sum := 0.0
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(line, sample+" "); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
		if rest, ok := strings.CutPrefix(line, sample+"{"); ok && bare {
			if _, v, ok := strings.Cut(rest, "} "); ok {
				f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
				if err != nil {
					return 0, fmt.Errorf("%s: %w", line, err)
				}
				sum += f
			}
		}
	}
	return sum, nil
}
