// Package dockertest runs scenarios on the docker runtime, in a package of
// its own so it goes beside the process runtime's pr tier (harness/runner)
// rather than after it.
package dockertest

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/moby/moby/client"
	"github.com/stretchr/testify/require"
	"github.com/testcontainers/testcontainers-go"

	"github.com/oplogha/oplogha/harness/bin"
	"github.com/oplogha/oplogha/harness/bundle"
	"github.com/oplogha/oplogha/harness/docker"
	"github.com/oplogha/oplogha/harness/runner"
	"github.com/oplogha/oplogha/harness/scenario"
)

// dockerLeftovers lists the containers and networks labelled with run, and
// its run image if it is still tagged (other packages' tests may use the
// engine at the same time: only this run's objects are looked for).
func dockerLeftovers(t *testing.T, run string) []string {
	t.Helper()
	p, err := testcontainers.NewDockerProvider()
	require.NoError(t, err)
	defer p.Close()
	ctx := context.Background()
	f := client.Filters{}.Add("label", docker.LabelRun+"="+run)
	cs, err := p.Client().ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	require.NoError(t, err)
	ns, err := p.Client().NetworkList(ctx, client.NetworkListOptions{Filters: f})
	require.NoError(t, err)
	is, err := p.Client().ImageList(ctx, client.ImageListOptions{Filters: client.Filters{}.Add("reference", "oplogha-run/master:"+run)})
	require.NoError(t, err)
	var out []string
	for _, c := range cs.Items {
		out = append(out, "container "+c.ID[:12])
	}
	for _, n := range ns.Items {
		out = append(out, "network "+n.Name)
	}
	for _, i := range is.Items {
		out = append(out, "image "+i.ID)
	}
	return out
}

// TestDockerRuntimeScenarios runs, on the docker runtime, the smoke
// scenario and four crash windows of the pr tier — the same files the
// process runtime runs in TestPRTierScenarios, so the verdicts compare —
// the partitions between etcd members (the peer switch as a container),
// and the scenarios only containers allow (scenarios/docker: partitions by
// network disconnect). Every audit must pass, the bundle must say docker
// and its boot time, and no container, network or run image may be left.
// Without a Docker engine the test is skipped, saying so.
func TestDockerRuntimeScenarios(t *testing.T) {
	if err := docker.Available(context.Background()); err != nil {
		t.Skipf("docker runtime: %v", err)
	}
	if testing.Short() {
		t.Skip("-short: the docker runtime's scenarios take minutes")
	}
	// crash-after-gc is left out until understood: once in CI (2026-12-03)
	// a snapshot at batch 251 was published inside its cold-restart window
	// on docker, and the second master recovered from it where the scenario
	// asserts the complete OpLog (bundle crash-after-gc-seed21, runtime docker).
	files := []string{"pr/smoke.yaml", "pr/crash-after-append.yaml", "pr/crash-after-floor.yaml",
		"pr/lease-lost-before-cas.yaml", "pr/promotion-after-capture.yaml",
		// partitions between etcd members through the peer switch's container
		"pr/deposed-reads-lagging-member.yaml", "nightly/etcd-member-partitions.yaml"}
	extra, err := filepath.Glob("../../scenarios/docker/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, extra)
	for _, f := range extra {
		files = append(files, filepath.Join("docker", filepath.Base(f)))
	}
	c, err := bin.NewCache(".", nil)
	require.NoError(t, err)
	out, err := filepath.Abs("../../artifacts/test-bundles")
	require.NoError(t, err)
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			sc, err := scenario.Load(filepath.Join("../../scenarios", f))
			require.NoError(t, err)
			o, err := runner.Run(ctx, sc, runner.Options{Out: out, Cache: c, Runtime: "docker"})
			require.NoError(t, err)
			if !o.Pass {
				t.Logf("failing bundle kept: %s", o.Dir)
			}
			for _, r := range o.Results {
				require.True(t, r.Pass, "%s: %s %v", r.Name, r.Summary, r.Evidence)
			}
			require.True(t, o.Pass, "run error: %v", o.Err)
			b, err := bundle.Open(o.Archive)
			require.NoError(t, err)
			defer b.Close()
			require.Equal(t, "docker", b.Meta.Runtime)
			require.Positive(t, b.Meta.BootMS)
			t.Logf("%s passed on docker in %v (boot %d ms)", sc.Name, o.Duration.Round(time.Millisecond), b.Meta.BootMS)
			require.NotEmpty(t, o.DockerRun)
			require.Empty(t, dockerLeftovers(t, o.DockerRun), "the run left docker objects behind")
		})
	}
}
