package master

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func validConfig() Config {
	c := DefaultConfig()
	c.ClusterID = "c1"
	c.Listen = "127.0.0.1:7000"
	c.EtcdEndpoints = []string{"http://127.0.0.1:2379"}
	return c
}

func withSnapshots(c Config) Config {
	c.EnableStandbySnapshot = true
	c.ObjectStore = "s3"
	c.S3Endpoint = "http://127.0.0.1:9000"
	c.S3Bucket = "snapshots"
	c.SnapshotWorkDir = "/var/tmp/snap"
	return c
}

func TestValidConfigsPass(t *testing.T) {
	require.Empty(t, validConfig().Validate(), "defaults: OpLog on, snapshots, GC and pruning off")
	full := withSnapshots(validConfig())
	full.EnableSnapshotGC, full.EnableOplogPruning = true, true
	require.Empty(t, full.Validate())
	dev := validConfig()
	dev.Environment = "development"
	dev.EnableStandbySnapshot, dev.ObjectStore, dev.LocalStoreDir = true, "local", "/tmp/store"
	require.Empty(t, dev.Validate(), "development may use a local dir without a work dir")
	shared := withSnapshots(validConfig())
	shared.ObjectStore, shared.S3Endpoint, shared.S3Bucket = "local", "", ""
	shared.LocalStoreDir, shared.AllowLocalStoreInProduction = "/mnt/shared", true
	require.Empty(t, shared.Validate(), "an explicitly shared filesystem in production")
	imp := withSnapshots(validConfig())
	imp.SnapshotBootstrapMode, imp.LegacyImportRoot = "legacy-import", "s3://old-snapshots/store-root"
	imp.LegacyImportSnapshotID, imp.LegacyImportClusterID = "20260620_143012_007", "mooncake_cluster"
	require.Empty(t, imp.Validate(), "an explicit legacy import from S3")
	require.Equal(t, "mooncake_cluster", imp.legacyClusterID())
	imp.LegacyImportRoot, imp.LegacyImportClusterID = "/var/lib/mooncake/snapshots", ""
	require.Empty(t, imp.Validate(), "an explicit legacy import from a directory")
	require.Equal(t, "c1", imp.legacyClusterID())
}

func TestInvalidCombinationsAreRejected(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*Config)
		want   string
	}{
		{"no cluster id", func(c *Config) { c.ClusterID = "" }, "cluster_id:"},
		{"nested cluster id", func(c *Config) { c.ClusterID = "a/b" }, "cluster_id:"},
		{"cluster id upstream refuses", func(c *Config) { c.ClusterID = "a b" }, `cluster_id: cluster id "a b": byte 1`},
		{"cluster id naming no directory", func(c *Config) { c.ClusterID = "../" }, "names no directory under s3_prefix"},
		{"legacy cluster id naming no directory", func(c *Config) {
			*c = withSnapshots(*c)
			c.SnapshotBootstrapMode, c.LegacyImportRoot, c.LegacyImportClusterID = "legacy-import", "/old", "."
		}, `legacy_import_cluster_id: "." names no directory`},
		{"no listen", func(c *Config) { c.Listen = "" }, "listen: required"},
		{"no etcd", func(c *Config) { c.EtcdEndpoints = nil }, "etcd_endpoints: required"},
		{"etcd not a URL", func(c *Config) { c.EtcdEndpoints = []string{"127.0.0.1:2379"} }, "want an http:// or https:// URL"},
		{"oplog off", func(c *Config) { c.EnableOplog = false }, "enable_oplog: false is not supported"},
		{"legacy snapshot-only mode", func(c *Config) { *c = withSnapshots(*c); c.EnableOplog = false }, "legacy snapshot-only mode"},
		{"publication without store", func(c *Config) { c.EnableStandbySnapshot = true; c.SnapshotWorkDir = "/w" },
			"enable_standby_snapshot: requires a shared object store"},
		{"publication without etcd", func(c *Config) { *c = withSnapshots(*c); c.EtcdEndpoints = nil }, "enable_standby_snapshot: requires etcd"},
		{"gc without store", func(c *Config) { c.EnableSnapshotGC = true }, "enable_snapshot_gc: requires a shared object store"},
		{"gc without publication", func(c *Config) {
			c.EnableSnapshotGC = true
			c.ObjectStore, c.S3Endpoint, c.S3Bucket = "s3", "http://x", "b"
		}, "enable_snapshot_gc: requires enable_standby_snapshot"},
		{"pruning without store", func(c *Config) { c.EnableOplogPruning = true }, "enable_oplog_pruning: requires a shared object store"},
		{"pruning without etcd", func(c *Config) { *c = withSnapshots(*c); c.EnableOplogPruning = true; c.EtcdEndpoints = nil },
			"enable_oplog_pruning: requires etcd"},
		{"pruning without publication", func(c *Config) {
			c.EnableOplogPruning = true
			c.ObjectStore, c.S3Endpoint, c.S3Bucket = "s3", "http://x", "b"
		}, "enable_oplog_pruning: requires enable_standby_snapshot"},
		{"node-local dir in production", func(c *Config) {
			*c = withSnapshots(*c)
			c.ObjectStore, c.S3Endpoint, c.S3Bucket, c.LocalStoreDir = "local", "", "", "/data/snap"
		}, "not an HA store"},
		{"local without dir", func(c *Config) { c.ObjectStore = "local"; c.Environment = "development" }, "object_store: local requires local_store_dir"},
		{"s3 without bucket", func(c *Config) { c.ObjectStore, c.S3Endpoint = "s3", "http://x" }, "object_store: s3 requires s3_endpoint and s3_bucket"},
		{"s3 endpoint not a URL", func(c *Config) { c.ObjectStore, c.S3Endpoint, c.S3Bucket = "s3", "x:9000", "b" }, "s3_endpoint:"},
		{"both stores", func(c *Config) {
			c.ObjectStore, c.S3Endpoint, c.S3Bucket, c.LocalStoreDir = "s3", "http://x", "b", "/d"
		}, "local_store_dir: set while object_store is s3"},
		{"store settings without a store", func(c *Config) { c.S3Endpoint = "http://x" }, "say which store"},
		{"unknown store", func(c *Config) { c.ObjectStore = "gcs" }, `object_store: "gcs"`},
		{"no work dir in production", func(c *Config) { *c = withSnapshots(*c); c.SnapshotWorkDir = "" }, "snapshot_work_dir: required in production"},
		{"zero lag bound", func(c *Config) { c.MaxSnapshotLagBatches = 0 }, "max_snapshot_lag_batches: must be > 0"},
		{"zero interval", func(c *Config) { c.SnapshotIntervalSeconds = 0 }, "snapshot_interval_seconds: must be > 0"},
		{"zero advance", func(c *Config) { c.SnapshotMinAdvanceBatches = 0 }, "snapshot_min_advance_batches: must be >= 1"},
		{"zero uncompacted trigger", func(c *Config) { c.MaxUncompactedBatches = 0 }, "max_uncompacted_batches: must be > 0"},
		{"zero capture budget", func(c *Config) { c.MaxSnapshotCaptureBytes = 0 }, "max_snapshot_capture_bytes: must be > 0"},
		{"grace below one interval", func(c *Config) { c.SnapshotGCGraceMultiplier = 0.5 }, "snapshot_gc_grace_multiplier: must be >= 1"},
		{"batch too large", func(c *Config) { c.OplogBatchMaxEntries = 20000 }, "oplog_batch_max_entries: must be 1..10000"},
		{"batch bytes over the client's send limit", func(c *Config) { c.OplogBatchMaxBytes = 2 << 20 }, "oplog_batch_max_bytes: must be 786432..2031616"},
		{"batch bytes under one entry", func(c *Config) { c.OplogBatchMaxBytes = 512 << 10 }, "oplog_batch_max_bytes: must be 786432..2031616"},
		{"zero poll", func(c *Config) { c.OplogPollIntervalMS = 0 }, "oplog_poll_interval_ms: must be > 0"},
		{"zero lease", func(c *Config) { c.LeaderLeaseSeconds = 0 }, "leader_lease_seconds: must be > 0"},
		{"bad bootstrap mode", func(c *Config) { c.SnapshotBootstrapMode = "catalog" }, "snapshot_bootstrap_mode:"},
		{"legacy snapshot-only mode, old flag", func(c *Config) { c.EnableSnapshot = true; c.EnableOplog = false },
			"legacy snapshot-only mode, which is removed: set enable_oplog: true"},
		{"legacy primary writer", func(c *Config) { c.EnableSnapshot = true }, "enable_snapshot: the legacy primary snapshot writer is removed"},
		{"legacy import without root",
			func(c *Config) { *c = withSnapshots(*c); c.SnapshotBootstrapMode = "legacy-import" },
			"legacy-import requires legacy_import_root"},
		{"legacy import without store",
			func(c *Config) { c.SnapshotBootstrapMode, c.LegacyImportRoot = "legacy-import", "/old" },
			"legacy-import requires a shared object store"},
		{"legacy import from S3 without S3", func(c *Config) {
			c.Environment, c.ObjectStore, c.LocalStoreDir = "development", "local", "/d"
			c.SnapshotBootstrapMode, c.LegacyImportRoot = "legacy-import", "s3://old/prefix"
		}, "needs object_store: s3"},
		{"legacy import root of another scheme", func(c *Config) {
			*c = withSnapshots(*c)
			c.SnapshotBootstrapMode, c.LegacyImportRoot = "legacy-import", "gs://old"
		}, "want a directory or s3://BUCKET/PREFIX"},
		{"legacy import bad id", func(c *Config) {
			*c = withSnapshots(*c)
			c.SnapshotBootstrapMode, c.LegacyImportRoot, c.LegacyImportSnapshotID = "legacy-import", "/old", "latest"
		}, "legacy_import_snapshot_id:"},
		{"legacy import settings in pointer mode", func(c *Config) { c.LegacyImportRoot = "/old" }, "legacy_import_*: set while snapshot_bootstrap_mode is pointer"},
		{"bad environment", func(c *Config) { c.Environment = "staging" }, "environment:"},
		{"bad log level", func(c *Config) { c.LogLevel = "loud" }, "log_level:"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := validConfig()
			tc.mutate(&c)
			errs := c.Validate()
			require.NotEmpty(t, errs)
			var lines []string
			for _, e := range errs {
				require.NotContains(t, e.Error(), "\n", "one line each")
				lines = append(lines, e.Error())
			}
			require.Contains(t, strings.Join(lines, "\n"), tc.want)
		})
	}
}

func TestLoadConfigFileThenFlags(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.yaml")
	require.NoError(t, os.WriteFile(path,
		[]byte("cluster_id: fromfile\nlisten: 127.0.0.1:1\n"+
			"etcd_endpoints: [http://a:1, http://b:2]\nmax_snapshot_lag_batches: 7\n"), 0o644))
	c, err := LoadConfig([]string{"--config", path, "--max_snapshot_lag_batches", "9", "--etcd_endpoints", "http://c:3,http://d:4", "--enable_snapshot_gc"})
	require.NoError(t, err)
	require.Equal(t, "fromfile", c.ClusterID)
	require.Equal(t, 9, c.MaxSnapshotLagBatches, "a flag wins over the file")
	require.Equal(t, []string{"http://c:3", "http://d:4"}, c.EtcdEndpoints)
	require.True(t, c.EnableSnapshotGC)
	require.Equal(t, 1.5, c.SnapshotGCGraceMultiplier, "defaults stay where neither sets a key")

	require.NoError(t, os.WriteFile(path, []byte("cluster_id: x\nmax_snapshot_lag: 5\n"), 0o644))
	_, err = LoadConfig([]string{"--config", path})
	require.ErrorContains(t, err, "max_snapshot_lag")
	_, err = LoadConfig([]string{"--no_such_flag"})
	require.ErrorIs(t, err, ErrUsage)
	require.Contains(t, FlagHelp(), "max_snapshot_lag_batches")
}
