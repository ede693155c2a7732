package runner

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/oplogha/oplogha/harness/audit"
	"github.com/oplogha/oplogha/harness/bin"
	"github.com/oplogha/oplogha/harness/browser"
	"github.com/oplogha/oplogha/harness/bundle"
	"github.com/oplogha/oplogha/harness/scenario"
)

func load(t *testing.T, name string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.Load(filepath.Join("../../scenarios", name))
	require.NoError(t, err)
	return sc
}

func cache(t *testing.T) *bin.Cache {
	t.Helper()
	c, err := bin.NewCache(".", nil)
	require.NoError(t, err)
	return c
}

func result(rs []audit.Result, name string) audit.Result {
	for _, r := range rs {
		if r.Name == name {
			return r
		}
	}
	return audit.Result{Name: name, Summary: "not run"}
}

// A master that acknowledges writes it never made durable must fail the run,
// and the bundle must name the lost writes.
func TestSabotagedMasterIsCaught(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out := t.TempDir()
	o, err := Run(ctx, load(t, "testdata/broken-ack.yaml"), Options{Out: out, Cache: cache(t)})
	require.NoError(t, err)
	require.False(t, o.Pass, "the audits must catch acknowledged-but-lost writes")
	require.NotEmpty(t, o.Dir, "a failing bundle is kept")
	ack := result(o.Results, "acknowledged-data")
	require.False(t, ack.Pass)
	require.Contains(t, strings.Join(ack.Evidence, "\n"), "missing: put acknowledged")
	require.False(t, result(o.Results, "linearizability").Pass)
	durable := result(o.Results, "durable-acknowledgement")
	require.False(t, durable.Pass, "the durable history alone shows the acknowledged entries were never written")
	require.Contains(t, strings.Join(durable.Evidence, "\n"), "[ack-durable] ")
	require.True(t, result(o.Results, "keyspace-order").Pass, "etcd itself saw nothing wrong: the lie was only told to clients")
	require.True(t, result(o.Results, "recovered-state").Pass, "the nodes hold what the durable history holds")

	// The archive alone reproduces the verdicts offline, and gates red.
	b, err := bundle.Open(o.Archive)
	require.NoError(t, err)
	defer os.RemoveAll(filepath.Dir(b.Dir))
	require.False(t, b.Pass())
	again := audit.Run(&b.Input)
	require.Equal(t, len(o.Results), len(again))
	for i := range again {
		require.Equal(t, o.Results[i].Pass, again[i].Pass, again[i].Name)
	}
	for _, f := range []string{bundle.SummaryFile, bundle.ReportFile, bundle.LinearizeFile, bundle.HistoryFile, bundle.EtcdHistoryFile} {
		require.FileExists(t, filepath.Join(o.Dir, f))
	}
}

// Two runs at once on one machine: both pass, and neither leaves a process
// or a bound port behind.
func TestParallelRunsDoNotInterfere(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out := keptBundles(t)
	c := cache(t)
	outcomes := make([]*Outcome, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range outcomes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc := load(t, "testdata/tiny-failover.yaml")
			sc.Seed += int64(i)
			outcomes[i], errs[i] = Run(ctx, sc, Options{Out: out, Cache: c})
		}()
	}
	wg.Wait()
	for i, o := range outcomes {
		require.NoError(t, errs[i])
		for _, r := range o.Results {
			require.True(t, r.Pass, "run %d: %s: %s %v", i, r.Name, r.Summary, r.Evidence)
		}
		require.True(t, o.Pass)
		b, err := bundle.Open(o.Archive)
		require.NoError(t, err)
		defer os.RemoveAll(filepath.Dir(b.Dir))
		require.NotEmpty(t, b.Meta.Processes)
		for _, p := range b.Meta.Processes {
			require.Error(t, syscall.Kill(p.PID, 0), "run %d: %s (pid %d) left running", i, p.Name, p.PID)
		}
		cfgs, _ := filepath.Glob(filepath.Join(b.Dir, bundle.LogsDir, "masters", "*.yaml"))
		require.NotEmpty(t, cfgs)
		for _, cf := range cfgs {
			var cfg struct {
				Listen string `yaml:"listen"`
			}
			data, err := os.ReadFile(cf)
			require.NoError(t, err)
			require.NoError(t, yaml.Unmarshal(data, &cfg))
			l, err := net.Listen("tcp", cfg.Listen)
			require.NoError(t, err, "run %d: %s still bound", i, cfg.Listen)
			l.Close()
		}
	}
	require.NotEqual(t, outcomes[0].Archive, outcomes[1].Archive)
}

// requirePass fails the test with every failed audit's evidence, keeping
// the failing bundle.
func requirePass(t *testing.T, o *Outcome) {
	t.Helper()
	if !o.Pass {
		t.Logf("failing bundle kept: %s", o.Dir)
	}
	for _, r := range o.Results {
		require.True(t, r.Pass, "%s: %s %v", r.Name, r.Summary, r.Evidence)
	}
	require.True(t, o.Pass, "run error: %v", o.Err)
}

// keptBundles is where test runs put bundles: artifacts/test-bundles, so a
// failing run's bundle outlives the test (passing ones are only archives).
func keptBundles(t *testing.T) string {
	dir, err := filepath.Abs("../../artifacts/test-bundles")
	require.NoError(t, err)
	return dir
}

// smokeScreenshot says whether sc's run opens its report in Chromium: the
// smoke scenario's does, so its bundle (which CI uploads) has report.png
// and a report that breaks in a browser fails the tier. Without Chromium it
// is left out, saying so, unless OPLOGHA_REQUIRE_BROWSER is set: then the
// run fails for the missing browser.
func smokeScreenshot(t *testing.T, sc *scenario.Scenario) bool {
	if sc.Name != "smoke" {
		return false
	}
	if _, err := browser.Find(); err != nil && !browser.Required() {
		t.Logf("smoke without report.png: %v (set %s=1 to fail instead)", err, browser.RequireEnv)
		return false
	}
	return true
}

// The pr tier: every scenario under scenarios/pr passes with its audits
// (and the smoke run's report opens cleanly in a browser).
func TestPRTierScenarios(t *testing.T) {
	files, err := filepath.Glob("../../scenarios/pr/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	start := time.Now()
	c := cache(t)
	// Two scenarios at once, as `chaos run --tier pr --parallel 2` (each
	// draws its own ports and directories); OPLOGHA_PR_PARALLEL changes it.
	par := 2
	if v, err := strconv.Atoi(os.Getenv("OPLOGHA_PR_PARALLEL")); err == nil && v > 0 {
		par = v
	}
	slots := make(chan struct{}, par)
	t.Cleanup(func() {
		// After every scenario (parallel subtests end before the cleanup).
		line := fmt.Sprintf("pr tier: %d scenarios in %v (%d at once)\n", len(files), time.Since(start).Round(time.Millisecond), par)
		t.Log(line)
		// make test prints this after the run (test logs of passing tests are hidden).
		if err := os.MkdirAll("../../artifacts", 0o755); err == nil {
			_ = os.WriteFile("../../artifacts/pr-tier-time.txt", []byte(line), 0o644)
		}
	})
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			slots <- struct{}{}
			defer func() { <-slots }()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			sc, err := scenario.Load(f)
			require.NoError(t, err)
			screenshot := smokeScreenshot(t, sc)
			o, err := Run(ctx, sc, Options{Out: keptBundles(t), Cache: c, Screenshot: screenshot})
			require.NoError(t, err)
			requirePass(t, o)
			if screenshot {
				b, err := bundle.Open(o.Archive)
				require.NoError(t, err)
				defer os.RemoveAll(filepath.Dir(b.Dir))
				require.FileExists(t, filepath.Join(b.Dir, bundle.ScreenshotFile), "the smoke bundle carries the report's picture")
			}
			t.Logf("%s passed in %v", sc.Name, o.Duration.Round(time.Millisecond))
		})
	}
}

// The capacity soak (nightly tier, a few minutes; -short skips it):
// sustained writes with snapshots, GC and pruning on; the batch keys and
// snapshot groups stay within the scenario's bounds (the maxima are
// reported), etcd's database size is reported before and after each
// compaction and defragmentation, and every acknowledged write survives the
// final cold restart.
func TestRetentionSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("soak: a few minutes; run without -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	sc := load(t, "nightly/soak.yaml")
	o, err := Run(ctx, sc, Options{Out: keptBundles(t), Cache: cache(t)})
	require.NoError(t, err)
	for _, r := range o.Results {
		require.True(t, r.Pass, "%s: %s %v", r.Name, r.Summary, r.Evidence)
		if r.Name == "retention-bounds" || r.Name == "acknowledged-data" {
			t.Logf("%s: %s", r.Name, r.Summary)
		}
	}
	require.True(t, o.Pass, "run error: %v", o.Err)
	b, err := bundle.Open(o.Archive)
	require.NoError(t, err)
	defer os.RemoveAll(filepath.Dir(b.Dir))
	compactions := 0
	for _, e := range b.Input.Events {
		if e.Kind == "fault" && e.Name == "compact-defrag" {
			compactions++
			t.Logf("compact-defrag: %s", e.Target)
		}
	}
	require.Equal(t, 2, compactions)
	m := audit.MaxRetention(b.Input.Retention)
	require.Greater(t, m.Samples, 60, "sampled about once a second")
	require.LessOrEqual(t, m.BatchKeys, sc.Expect.MaxBatchKeys)
	require.LessOrEqual(t, m.Groups, sc.Expect.MaxSnapshotGroups)
}

// A crash armed at a failpoint and healed before it fired ended nothing: a
// wait for that node's role goes on at once rather than waiting for a
// restart that never comes (the swarm's crash-before-serve move, armed on
// a standby that was never promoted, failed seven of forty runs on it).
func TestAWaitForANodeWhoseArmedCrashNeverFired(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	o, err := Run(ctx, load(t, "testdata/disarmed-crash.yaml"), Options{Out: keptBundles(t), Cache: cache(t)})
	require.NoError(t, err)
	requirePass(t, o)
}
