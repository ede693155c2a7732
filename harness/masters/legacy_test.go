package masters

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/oplogha/oplogha/impl/contract/keyspace"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"go.yaml.in/yaml/v3"

	"github.com/oplogha/oplogha/fixtures/legacy/legacyfixture"
	"github.com/oplogha/oplogha/harness/etcd"
	"github.com/oplogha/oplogha/harness/ports"
	"github.com/oplogha/oplogha/harness/proc"
	"github.com/oplogha/oplogha/impl/legacy"
)

func fixtureRoot(t *testing.T, name string) (string, legacyfixture.Expect) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", "fixtures", "legacy", name))
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(root, "expect.json"))
	require.NoError(t, err)
	var e legacyfixture.Expect
	require.NoError(t, json.Unmarshal(data, &e))
	return root, e
}

func importConfig(root, store string) map[string]any {
	return map[string]any{
		"object_store": "local", "local_store_dir": store,
		"snapshot_bootstrap_mode": "legacy-import", "legacy_import_root": root, "legacy_import_cluster_id": legacyfixture.ClusterID,
		"enable_standby_snapshot": true, "snapshot_interval_seconds": 1,
	}
}

// Three masters in legacy-import mode on a fresh namespace: the first primary
// imports the fixture, every node converges on its exact digest at batch 1,
// writes continue at batch 2, and standbys publish pointer snapshots of
// their own on top of it.
func TestLegacyImportThroughTheMasters(t *testing.T) {
	root, exp := fixtureRoot(t, "small")
	store := t.TempDir()
	c := startCluster(t, 3, importConfig(root, store))
	p := c.primary(60 * time.Second)
	h, err := c.cli.Health(context.Background(), p.URL)
	require.NoError(t, err)
	require.Equal(t, exp.SnapshotID, h.Bootstrap.LegacyImport, "the primary says what it imported")
	st := c.waitSameState(c.set.Nodes, 60*time.Second)
	require.Equal(t, exp.Digest, st.Digest, "every node holds exactly the legacy content")
	require.Equal(t, uint64(1), st.Cursor.BatchID)
	require.Equal(t, exp.Seq, st.Cursor.Seq)
	require.Equal(t, exp.Objects, st.Objects)

	c.mountSegments(p.URL, 2)
	hist := newHistory()
	c.writeUntil(hist, "after-import", 50, time.Minute)
	st = c.waitSameState(c.set.Nodes, 60*time.Second)
	require.Greater(t, st.Cursor.BatchID, uint64(1))
	require.GreaterOrEqual(t, st.Objects, exp.Objects+hist.ackedCount(), "legacy objects plus the acknowledged puts")
	require.LessOrEqual(t, st.Objects, exp.Objects+hist.ackedCount()+len(hist.unknown))
	c.checkAcknowledgedWithBase(p, hist, exp.Objects)

	cli := c.etcdClient()
	ks := keyspace.Must("test")
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := cli.Get(context.Background(), ks.SnapshotFallback())
		require.NoError(t, err)
		if len(resp.Kvs) > 0 {
			break // a standby published over the imported snapshot: it rotated into fallback
		}
		require.True(t, time.Now().Before(deadline), "no standby publication after the import")
		time.Sleep(200 * time.Millisecond)
	}
	resp, err := cli.Get(context.Background(), ks.LegacyImport())
	require.NoError(t, err)
	m, err := legacy.DecodeMarker(resp.Kvs[0].Value)
	require.NoError(t, err)
	require.Equal(t, exp.Digest, m.StateDigest)
	require.Equal(t, exp.SnapshotID, m.LegacySnapshotID)
}

// checkAcknowledgedWithBase is checkAcknowledged on a node that also holds
// base imported objects under the fixture's keys.
func (c *cluster) checkAcknowledgedWithBase(n *Node, h *history, base int) {
	c.t.Helper()
	st, err := c.cli.State(context.Background(), n.URL, true)
	require.NoError(c.t, err)
	legacyKeys := 0
	present := map[string]bool{}
	for _, o := range st.Dump {
		if strings.HasPrefix(o.Key, "legacy/") {
			legacyKeys++
			continue
		}
		present[o.Key] = true
	}
	require.Equal(c.t, base, legacyKeys)
	for k := range h.acked {
		require.True(c.t, present[k], "acknowledged put %s missing", k)
	}
}

func (c *cluster) etcdClient() *clientv3.Client {
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.etcd.Endpoints(), DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	require.NoError(c.t, err)
	c.t.Cleanup(func() { cli.Close() })
	return cli
}

// A master told to import a broken legacy snapshot, or to import into a
// namespace that already holds data, exits non-zero with one clear line
// before it writes anything: no etcd key, no snapshot object.
func TestLegacyImportRefusals(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	group := proc.NewGroup()
	defer group.Close(5 * time.Second)
	ec, err := etcd.Start(ctx, group, etcd.Options{Members: 1, Binary: etcdBin, Dir: filepath.Join(t.TempDir(), "etcd")})
	require.NoError(t, err)
	cli, err := clientv3.New(clientv3.Config{Endpoints: ec.Endpoints(), DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	require.NoError(t, err)
	defer cli.Close()

	run := func(t *testing.T, cluster string, cfg map[string]any) (string, int) {
		ps, err := ports.Free(1)
		require.NoError(t, err)
		full := map[string]any{"cluster_id": cluster, "listen": ports.Addr(ps[0]), "etcd_endpoints": ec.Endpoints(), "environment": "development"}
		for k, v := range cfg {
			full[k] = v
		}
		data, err := yaml.Marshal(full)
		require.NoError(t, err)
		path := filepath.Join(t.TempDir(), "m.yaml")
		require.NoError(t, os.WriteFile(path, data, 0o644))
		rctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		out, err := exec.CommandContext(rctx, masterBin, "--config", path).CombinedOutput()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "the master must exit by itself: %s", out)
		return string(out), ee.ExitCode()
	}
	plainLine := func(out string) string {
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "master: ") {
				return l
			}
		}
		return ""
	}
	noKeys := func(t *testing.T, cluster string) {
		resp, err := cli.Get(ctx, keyspace.Must(cluster).Root()+"/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
		require.NoError(t, err)
		var keys []string
		for _, kv := range resp.Kvs {
			keys = append(keys, string(kv.Key))
		}
		require.Empty(t, keys, "nothing written to etcd")
	}
	noObjects := func(t *testing.T, store string) {
		var files []string
		require.NoError(t, filepath.WalkDir(store, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				files = append(files, p)
			}
			return err
		}))
		require.Empty(t, files, "no snapshot object left in the store")
	}

	for _, tc := range []struct {
		fixture, code, says string
	}{
		{"truncated", "legacy_truncated", "legacy snapshot truncated"},
		{"manifest-mismatch", "legacy_manifest_mismatch", "legacy manifest mismatch"},
		{"draining", "legacy_not_importable", "legacy snapshot not importable"},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			root, _ := fixtureRoot(t, tc.fixture)
			store := t.TempDir()
			cluster := "broken-" + tc.fixture
			out, code := run(t, cluster, importConfig(root, store))
			require.Equal(t, 1, code)
			line := plainLine(out)
			require.Contains(t, line, "master: legacy import refused: ", out)
			require.Contains(t, line, tc.says)
			require.Contains(t, out, fmt.Sprintf(`"code":"%s"`, tc.code))
			noKeys(t, cluster)
			noObjects(t, store)
		})
	}
	t.Run("missing root", func(t *testing.T) {
		out, code := run(t, "no-root", importConfig(filepath.Join(t.TempDir(), "nowhere"), t.TempDir()))
		require.Equal(t, 1, code)
		require.Contains(t, plainLine(out), "is not a directory")
		noKeys(t, "no-root")
	})
	t.Run("namespace with data", func(t *testing.T) {
		root, _ := fixtureRoot(t, "small")
		_, err := cli.Put(ctx, keyspace.Must("busy").DurablePrefix(), `{"schema_version":1,"batch_id":3,"last_seq":9}`)
		require.NoError(t, err)
		out, code := run(t, "busy", importConfig(root, t.TempDir()))
		require.Equal(t, 1, code)
		require.Contains(t, plainLine(out), "namespace is not empty")
		require.Contains(t, plainLine(out), "durable prefix at batch 3")
	})
	t.Run("snapshot-only configuration", func(t *testing.T) {
		out, code := run(t, "snaponly", map[string]any{"enable_oplog": false, "enable_snapshot": true})
		require.Equal(t, 2, code)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		require.Len(t, lines, 1, "%s", out)
		require.Contains(t, lines[0], "legacy snapshot-only mode, which is removed: set enable_oplog: true")
		noKeys(t, "snaponly")
	})
}
