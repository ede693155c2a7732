package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/oplogha/oplogha/faults"
	"github.com/oplogha/oplogha/harness/cluster"
	"github.com/oplogha/oplogha/harness/proc"
	"github.com/oplogha/oplogha/harness/scenario"
)

// stepFault injects a fault (in a replay, pinned to where the original landed).
func (r *run) stepFault(ctx context.Context, st scenario.Step, afterFailpoint string) error {
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
	anchor := r.anchorNow(r.stepIndex)
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
	r.notePanicArmed(name, in)
	r.injected[name] = in
	r.order = append(r.order, name)
	// a wait for the node's role afterwards is about the process that replaces it
	if len(in.Targets) == 1 && spec.EndsProcess() {
		if p, ok := before[in.Targets[0]]; ok {
			r.ended[name] = p
		}
	}
	acted := time.Now()
	anchor.Targets = in.Targets
	if r.replayOKOps == nil {
		r.replayOKOps = map[int]int64{}
	}
	r.replayOKOps[r.stepIndex] = anchor.OKOps
	i := r.events.addFault("fault", st.Fault.Kind, joinTargets(in.Targets), name, in, anchor)
	if len(in.Ended) > 0 || len(in.Corrupted) > 0 {
		// whatever an ended node does after etcd's revision once the
		// fault had acted is a later incarnation's; a snapshot damaged by
		// then is known to be bad
		r.recordRevisionAfter(ctx, i, acted)
	}
	if replaying {
		c := checkLanding(st.Fault.Kind, orig, *anchor, divergence)
		r.replayChecks = append(r.replayChecks, c)
		r.events.add("note", "replay", joinTargets(in.Targets), c.Detail, c.Same)
	}
	return nil
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
	ctx, cancel := context.WithTimeout(ctx, cluster.CallTimeout)
	defer cancel()
	resp, err := cli.Delete(ctx, key)
	if err != nil {
		return 0, fmt.Errorf("delete %s: %w", key, err)
	}
	return resp.Header.Revision, nil
}

func (e faultEnv) EtcdDeleteIf(ctx context.Context, key string, old []byte) (int64, bool, error) {
	cli, _, err := e.r.etcd()
	if err != nil {
		return 0, false, err
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(ctx, cluster.CallTimeout)
	defer cancel()
	resp, err := cli.Txn(ctx).If(clientv3.Compare(clientv3.Value(key), "=", string(old))).Then(clientv3.OpDelete(key)).Commit()
	if err != nil {
		return 0, false, fmt.Errorf("delete %s: %w", key, err)
	}
	return resp.Header.Revision, resp.Succeeded, nil
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
	ctx, cancel := context.WithTimeout(ctx, cluster.CallTimeout)
	defer cancel()
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
	ctx, cancel := context.WithTimeout(ctx, cluster.CallTimeout)
	defer cancel()
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
	return r.healFault(ctx, name, false)
}

// healFault heals one active fault; settle says the runner heals it after
// the steps (the event is marked so minimum-work counts only the steps').
func (r *run) healFault(ctx context.Context, name string, settle bool) error {
	in, ok := r.injected[name]
	if !ok {
		return fmt.Errorf("no active fault %q", name)
	}
	ctx, cancel := context.WithTimeout(ctx, healBound)
	defer cancel()
	// etcd's revision as the heal begins: what a resumed or restarted node
	// finds (the zombie window is judged against it). While the clock reads
	// etcd, one linearizable read gives it exactly (milliseconds, bounded
	// by healRead); while it cannot (etcd may be what this heal heals), the
	// heal acts at once and records the clock's last reading, or unknown
	// with why.
	began := time.Now()
	before, note := r.revisionBeforeHeal(ctx, began)
	err := in.Heal(ctx)
	var revs []int64
	if err == nil {
		revs = in.HealRevisions
	}
	r.events.addHeal(in.Spec.Kind, joinTargets(in.Targets), name, err == nil, revs, settle, before, note)
	delete(r.injected, name)
	r.panics.disarm(name)
	r.healed[name] = in
	r.order = slices.DeleteFunc(r.order, func(s string) bool { return s == name })
	return err
}

// healAll heals every active fault, newest first (settle: after the steps).
func (r *run) healAll(ctx context.Context, settle bool) error {
	var errs []error
	for i := len(r.order) - 1; i >= 0; i-- {
		errs = append(errs, r.healFault(ctx, r.order[i], settle))
	}
	return errors.Join(errs...)
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
