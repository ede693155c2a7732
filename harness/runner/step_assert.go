package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/oplogha/oplogha/harness/client"
	"github.com/oplogha/oplogha/harness/cluster"
	"github.com/oplogha/oplogha/harness/masters"
	"github.com/oplogha/oplogha/harness/scenario"
)

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
	// A judgement waits for each node's answer: a node slow to answer on a
	// loaded machine is not a node that does not serve.
	hs := r.cluster.Masters.HealthAnswered(ctx)
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
		gctx, cancel := context.WithTimeout(ctx, cluster.CallTimeout)
		resp, err := cli.Get(gctx, prefix, clientv3.WithPrefix(), clientv3.WithLimit(1))
		cancel()
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
		gctx, cancel := context.WithTimeout(ctx, cluster.CallTimeout)
		defer cancel()
		resp, err := cli.Get(gctx, key)
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
		sctx, cancel := context.WithTimeout(ctx, masters.CallTimeout)
		v, err := scrapeSample(sctx, r.cluster.Masters.MetricsURL(n), m.Sample)
		cancel()
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
