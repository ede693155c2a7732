package master

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"reflect"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/oplogha/oplogha/impl/contract/keyspace"
	"github.com/oplogha/oplogha/impl/legacy"
	"github.com/oplogha/oplogha/impl/oplog"
	"github.com/oplogha/oplogha/impl/snapshot"
	"github.com/oplogha/oplogha/impl/state"
)

// Config is the master's configuration. Every key is a YAML key of the
// --config file and also a command-line flag of the same name, which wins
// over the file. Names follow the RFC "Configuration" table and Mooncake's flags.
type Config struct {
	ClusterID          string   `yaml:"cluster_id" help:"cluster namespace: etcd keys live under /oplog/{cluster_id}"`
	NodeID             string   `yaml:"node_id" help:"this node's name in logs and the election (default: the listen address)"`
	Listen             string   `yaml:"listen" help:"client API listen address, host:port"`
	AdvertiseURL       string   `yaml:"advertise_url" help:"client API URL other nodes hand out (default http://{listen})"`
	EtcdEndpoints      []string `yaml:"etcd_endpoints" help:"etcd client URLs, comma-separated"`
	EtcdDialTimeoutMS  int      `yaml:"etcd_dial_timeout_ms" help:"etcd dial timeout"`
	EtcdRequestTimeout int      `yaml:"etcd_request_timeout_ms" help:"timeout of one etcd request on the write path"`
	LeaderLeaseSeconds int      `yaml:"leader_lease_seconds" help:"TTL of the election session lease"`
	EtcdQuotaBytes     int64    `yaml:"etcd_quota_backend_bytes" help:"the --quota-backend-bytes etcd runs with (etcd cannot report it), for the capacity gauges"`
	EtcdStatusMS       int      `yaml:"etcd_status_interval_ms" help:"how often dbSize, dbSizeInUse, revision and alarms are read through the maintenance API"`
	EtcdCAFile         string   `yaml:"etcd_ca_file" help:"CA bundle (PEM) that signs the etcd members' certificates; with https:// endpoints"`
	EtcdCertFile       string   `yaml:"etcd_cert_file" help:"client certificate (PEM) presented to etcd (mutual TLS)"`
	EtcdKeyFile        string   `yaml:"etcd_key_file" help:"private key (PEM) of etcd_cert_file"`
	EtcdUsername       string   `yaml:"etcd_username" help:"etcd user (authentication on): its role should allow only /oplog/{cluster_id}/"`
	EtcdPasswordFile   string   `yaml:"etcd_password_file" help:"file holding etcd_username's password (never on the command line or in the config)"`

	EnableOplog          bool `yaml:"enable_oplog" help:"replicate through the batch OpLog in etcd (the new mode)"`
	OplogPollIntervalMS  int  `yaml:"oplog_poll_interval_ms" help:"standby poll interval"`
	OplogBatchMaxEntries int  `yaml:"oplog_batch_max_entries" help:"most entries group-committed into one batch"`
	OplogReadPageSize    int  `yaml:"oplog_read_page_size" help:"batches per etcd range read when the OpLog is replayed (bootstrap, catch-up, apply)"`
	OplogBatchMaxBytes   int  `yaml:"oplog_batch_max_bytes" help:"most bytes of encoded batch record in one batch (one etcd request: keep it 64 KiB under etcd's --max-request-bytes)"`

	EnableStandbySnapshot     bool    `yaml:"enable_standby_snapshot" help:"standbys capture and publish snapshots"`
	SnapshotIntervalSeconds   int     `yaml:"snapshot_interval_seconds" help:"minimum interval between normal snapshots"`
	SnapshotReadTimeoutSecs   int     `yaml:"snapshot_read_timeout_seconds" help:"bootstrap: most time one snapshot object's read may take before the snapshot counts as unreadable and recovery moves on"`
	SnapshotMinAdvanceBatches int     `yaml:"snapshot_min_advance_batches" help:"minimum cursor advance beyond latest for a normal snapshot"`
	MaxSnapshotLagBatches     int     `yaml:"max_snapshot_lag_batches" help:"admission-only maximum lag behind the durable prefix"`
	SnapshotChunkObjectCount  int     `yaml:"snapshot_chunk_object_count" help:"objects per snapshot chunk object (upstream's name and default)"`
	MaxUncompactedBatches     int     `yaml:"max_uncompacted_batches" help:"capacity trigger that may bypass the interval"`
	MaxSnapshotCaptureBytes   int64   `yaml:"max_snapshot_capture_bytes" help:"hard capture memory budget"`
	SnapshotWorkDir           string  `yaml:"snapshot_work_dir" help:"temporary encoding directory (required in production)"`
	SnapshotGCGraceMultiplier float64 `yaml:"snapshot_gc_grace_multiplier" help:"GC grace as a multiple of the snapshot interval"`
	SnapshotStallMultiplier   float64 `yaml:"snapshot_stall_multiplier" help:"snapshot_stalled is raised when latest is older than this many intervals while the OpLog has moved past it"`
	EnableSnapshotGC          bool    `yaml:"enable_snapshot_gc" help:"delete old and orphan snapshot objects"`
	EnableOplogPruning        bool    `yaml:"enable_oplog_pruning" help:"advance the compaction floor and delete covered batches"`
	SnapshotBootstrapMode     string  `yaml:"snapshot_bootstrap_mode" help:"pointer | legacy-import (import one old primary snapshot into a fresh namespace, then pointer mode)"`
	LegacyImportRoot          string  `yaml:"legacy_import_root" help:"legacy-import: the old master's object store root, holding mooncake_master_snapshot/{cluster_id}/: a directory, or s3://BUCKET/PREFIX on s3_endpoint"`
	LegacyImportClusterID     string  `yaml:"legacy_import_cluster_id" help:"legacy-import: the old cluster namespace under the root (default: cluster_id)"`
	LegacyImportSnapshotID    string  `yaml:"legacy_import_snapshot_id" help:"legacy-import: the snapshot to import, YYYYMMDD_HHMMSS_mmm (default: the one latest.txt names)"`
	EnableSnapshot            bool    `yaml:"enable_snapshot" help:"the removed legacy primary snapshot writer: only false is accepted (standbys publish snapshots: enable_standby_snapshot)"`

	ObjectStore                 string `yaml:"object_store" help:"snapshot store: s3 | local (empty: none)"`
	S3Endpoint                  string `yaml:"s3_endpoint" help:"S3 endpoint URL"`
	S3Bucket                    string `yaml:"s3_bucket" help:"bucket dedicated to snapshots"`
	S3Prefix                    string `yaml:"s3_prefix" help:"key prefix dedicated to snapshots"`
	S3Region                    string `yaml:"s3_region" help:"S3 region"`
	S3CredentialsFile           string `yaml:"s3_credentials_file" help:"file with access_key_id and secret_access_key (YAML); else the env variables below"`
	S3AccessKeyEnv              string `yaml:"s3_access_key_env" help:"environment variable holding the access key id"`
	S3SecretKeyEnv              string `yaml:"s3_secret_key_env" help:"environment variable holding the secret access key"`
	S3CAFile                    string `yaml:"s3_ca_file" help:"CA bundle (PEM) for an https:// s3_endpoint (default: the system pool)"`
	LocalStoreDir               string `yaml:"local_store_dir" help:"directory used as the snapshot store (tests, development, shared filesystems)"`
	Environment                 string `yaml:"environment" help:"production | development"`
	AllowLocalStoreInProduction bool   `yaml:"allow_local_store_in_production" help:"accept local_store_dir in production: it is an explicitly shared filesystem"`

	LogLevel string `yaml:"log_level" help:"debug | info | warn | error"`

	Tenants []string `yaml:"tenants" help:"the tenants the client API accepts; empty: every tenant"`
}

// DefaultConfig has the RFC defaults: snapshots, GC and pruning off.
func DefaultConfig() Config {
	return Config{
		EtcdDialTimeoutMS: 5000,
		// An append whose proposal a dying etcd leader dropped is never
		// answered: after this long the writer re-reads and sends it again.
		// It is the stall every etcd leader loss costs the write path, so
		// it is well under etcd's own 5 s + 2 election timeouts.
		EtcdRequestTimeout:        2000,
		LeaderLeaseSeconds:        5,
		EtcdQuotaBytes:            2 << 30, // etcd's default quota
		EtcdStatusMS:              5000,
		SnapshotStallMultiplier:   3,
		EnableOplog:               true,
		OplogPollIntervalMS:       100,
		OplogBatchMaxEntries:      1024,
		OplogReadPageSize:         256,
		OplogBatchMaxBytes:        oplog.DefaultBatchMaxBytes,
		SnapshotIntervalSeconds:   300,
		SnapshotReadTimeoutSecs:   10,
		SnapshotMinAdvanceBatches: 1,
		MaxSnapshotLagBatches:     1000,
		SnapshotChunkObjectCount:  snapshot.DefaultChunkObjects,
		MaxUncompactedBatches:     100_000,
		MaxSnapshotCaptureBytes:   8 << 30,
		SnapshotGCGraceMultiplier: 1.5,
		SnapshotBootstrapMode:     "pointer",
		S3Region:                  "us-east-1",
		S3AccessKeyEnv:            "OPLOGHA_S3_ACCESS_KEY_ID",
		S3SecretKeyEnv:            "OPLOGHA_S3_SECRET_ACCESS_KEY",
		Environment:               "production",
		LogLevel:                  "info",
	}
}

// ErrUsage marks a command line that could not be parsed.
var ErrUsage = errors.New("usage")

// LoadConfig reads --config FILE (if given) over the defaults, then applies
// the other flags over it. It does not validate; call Validate.
func LoadConfig(args []string) (Config, error) {
	cfg := DefaultConfig()
	fs := flag.NewFlagSet("master", flag.ContinueOnError)
	fs.SetOutput(new(bytes.Buffer))
	file := fs.String("config", "", "YAML configuration file")
	overrides := Config{}
	bindFlags(fs, &overrides)
	if err := fs.Parse(args); err != nil {
		return cfg, fmt.Errorf("%w: %v", ErrUsage, err)
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("%w: unexpected argument %q", ErrUsage, fs.Arg(0))
	}
	if *file != "" {
		data, err := os.ReadFile(*file)
		if err != nil {
			return cfg, fmt.Errorf("config: %w", err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
			return cfg, fmt.Errorf("config %s: %w", *file, err)
		}
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	dst, src := reflect.ValueOf(&cfg).Elem(), reflect.ValueOf(&overrides).Elem()
	for i := 0; i < dst.NumField(); i++ {
		if set[yamlName(dst.Type().Field(i))] {
			dst.Field(i).Set(src.Field(i))
		}
	}
	return cfg, nil
}

func yamlName(f reflect.StructField) string { return strings.Split(f.Tag.Get("yaml"), ",")[0] }

// bindFlags registers one flag per Config field, named by its YAML key.
func bindFlags(fs *flag.FlagSet, c *Config) {
	v := reflect.ValueOf(c).Elem()
	for i := 0; i < v.NumField(); i++ {
		f, fv := v.Type().Field(i), v.Field(i)
		name, help := yamlName(f), f.Tag.Get("help")
		switch p := fv.Addr().Interface().(type) {
		case *string:
			fs.StringVar(p, name, "", help)
		case *bool:
			fs.BoolVar(p, name, false, help)
		case *int:
			fs.IntVar(p, name, 0, help)
		case *int64:
			fs.Int64Var(p, name, 0, help)
		case *float64:
			fs.Float64Var(p, name, 0, help)
		case *[]string:
			fs.Func(name, help+" (comma-separated)", func(s string) error {
				*p = splitList(s)
				return nil
			})
		default:
			panic(fmt.Sprintf("config field %s: unsupported type %T", f.Name, p))
		}
	}
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// FlagHelp lists every key with its help, for --help.
func FlagHelp() string {
	var b strings.Builder
	b.WriteString("usage: master --config FILE [--KEY VALUE …]\nkeys (YAML key = flag name):\n")
	t := reflect.TypeOf(Config{})
	def := reflect.ValueOf(DefaultConfig())
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		fmt.Fprintf(&b, "  %-32s %s (default %v)\n", yamlName(f), f.Tag.Get("help"), def.Field(i).Interface())
	}
	return b.String()
}

// Validate returns one error per invalid setting or combination, each a
// single line naming the keys involved.
func (c Config) Validate() []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	if ks, err := keyspace.New(c.ClusterID); err != nil {
		bad("cluster_id: %v", err)
	} else if pathDots(ks.ClusterID()) {
		bad("cluster_id: %q is a valid key component but names no directory under s3_prefix (the cluster's snapshot objects "+
			"live in {s3_prefix}/{cluster_id})", c.ClusterID)
	}
	if c.Listen == "" {
		bad("listen: required (host:port of the client API)")
	}
	switch snapshots := c.EnableStandbySnapshot || c.EnableSnapshot; {
	case snapshots && !c.EnableOplog:
		bad("snapshots on with enable_oplog: false is the legacy snapshot-only mode, which is removed: set enable_oplog: true " +
			"(standbys then publish snapshots through the batch OpLog with enable_standby_snapshot: true); to bring the old " +
			"snapshots over, import one once with snapshot_bootstrap_mode: legacy-import and legacy_import_root")
	case !c.EnableOplog:
		bad("enable_oplog: false is not supported: this master replicates only through the batch OpLog in etcd; set enable_oplog: true")
	case c.EnableSnapshot:
		bad("enable_snapshot: the legacy primary snapshot writer is removed: the primary never snapshots; set " +
			"enable_snapshot: false and enable_standby_snapshot: true")
	}
	if len(c.EtcdEndpoints) == 0 {
		bad("etcd_endpoints: required: the OpLog, election, pointers and floor live in etcd")
	}
	for _, ep := range c.EtcdEndpoints {
		if !strings.HasPrefix(ep, "http://") && !strings.HasPrefix(ep, "https://") {
			bad("etcd_endpoints: %q: want an http:// or https:// URL", ep)
		}
	}
	positive := map[string]int{
		"etcd_dial_timeout_ms": c.EtcdDialTimeoutMS, "etcd_request_timeout_ms": c.EtcdRequestTimeout,
		"leader_lease_seconds": c.LeaderLeaseSeconds, "oplog_poll_interval_ms": c.OplogPollIntervalMS,
		"snapshot_interval_seconds": c.SnapshotIntervalSeconds, "max_snapshot_lag_batches": c.MaxSnapshotLagBatches,
		"max_uncompacted_batches": c.MaxUncompactedBatches, "etcd_status_interval_ms": c.EtcdStatusMS,
		"snapshot_chunk_object_count": c.SnapshotChunkObjectCount, "snapshot_read_timeout_seconds": c.SnapshotReadTimeoutSecs,
	}
	for _, k := range sortedKeys(positive) {
		if positive[k] <= 0 {
			bad("%s: must be > 0, got %d", k, positive[k])
		}
	}
	if c.SnapshotMinAdvanceBatches < 1 {
		bad("snapshot_min_advance_batches: must be >= 1 (a snapshot needs at least one new complete batch), got %d", c.SnapshotMinAdvanceBatches)
	}
	if c.OplogReadPageSize < 1 || c.OplogReadPageSize > 10_000 {
		bad("oplog_read_page_size: must be 1..10000, got %d", c.OplogReadPageSize)
	}
	if c.OplogBatchMaxEntries < 1 || c.OplogBatchMaxEntries > 10_000 {
		bad("oplog_batch_max_entries: must be 1..10000 (one batch is one etcd request), got %d", c.OplogBatchMaxEntries)
	}
	if c.OplogBatchMaxBytes < 768<<10 || c.OplogBatchMaxBytes > 2<<20-64<<10 {
		bad("oplog_batch_max_bytes: must be 786432..2031616 (room for one entry of the largest payload the API accepts; under "+
			"the etcd client's 2 MiB send limit), got %d", c.OplogBatchMaxBytes)
	}
	if c.MaxSnapshotCaptureBytes <= 0 {
		bad("max_snapshot_capture_bytes: must be > 0, got %d", c.MaxSnapshotCaptureBytes)
	}
	if c.EtcdQuotaBytes <= 0 {
		bad("etcd_quota_backend_bytes: must be > 0 (etcd's --quota-backend-bytes; its default is 2147483648), got %d", c.EtcdQuotaBytes)
	}
	if c.SnapshotStallMultiplier < 1 {
		bad("snapshot_stall_multiplier: must be >= 1, got %g", c.SnapshotStallMultiplier)
	}
	if c.SnapshotGCGraceMultiplier < 1 {
		bad("snapshot_gc_grace_multiplier: must be >= 1 (a grace shorter than one interval can delete a recent upload), got %g", c.SnapshotGCGraceMultiplier)
	}
	switch c.Environment {
	case "production", "development":
	default:
		bad("environment: %q: want production or development", c.Environment)
	}
	errs = append(errs, c.validateLegacyImport()...)
	errs = append(errs, c.validateTenants()...)
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		bad("log_level: %q: want debug, info, warn or error", c.LogLevel)
	}
	errs = append(errs, c.validateStore()...)
	errs = append(errs, c.validateSecurity()...)
	return errs
}

// validateSecurity checks the TLS and authentication settings: certificate
// and key together, TLS files only with https endpoints, a password file
// only with a user, and every named file readable.
func (c Config) validateSecurity() []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if (c.EtcdCertFile == "") != (c.EtcdKeyFile == "") {
		bad("etcd_cert_file and etcd_key_file: set both (mutual TLS) or neither")
	}
	tlsSet := c.EtcdCAFile != "" || c.EtcdCertFile != ""
	for _, ep := range c.EtcdEndpoints {
		if tlsSet && strings.HasPrefix(ep, "http://") {
			bad("etcd_endpoints: %q is plain http while etcd TLS files are set: use https:// endpoints", ep)
			break
		}
	}
	if (c.EtcdUsername == "") != (c.EtcdPasswordFile == "") {
		bad("etcd_username and etcd_password_file: set both (etcd authentication) or neither")
	}
	if c.S3CAFile != "" && !strings.HasPrefix(c.S3Endpoint, "https://") {
		bad("s3_ca_file: set while s3_endpoint %q is not https://", c.S3Endpoint)
	}
	for _, f := range []struct{ key, path string }{
		{"etcd_ca_file", c.EtcdCAFile}, {"etcd_cert_file", c.EtcdCertFile}, {"etcd_key_file", c.EtcdKeyFile},
		{"etcd_password_file", c.EtcdPasswordFile}, {"s3_ca_file", c.S3CAFile},
	} {
		if f.path == "" {
			continue
		}
		if _, err := os.Stat(f.path); err != nil {
			bad("%s: %v", f.key, err)
		}
	}
	return errs
}

func (c Config) validateLegacyImport() []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	set := c.LegacyImportRoot != "" || c.LegacyImportClusterID != "" || c.LegacyImportSnapshotID != ""
	switch c.SnapshotBootstrapMode {
	case "pointer":
		if set {
			bad("legacy_import_*: set while snapshot_bootstrap_mode is pointer: set snapshot_bootstrap_mode: legacy-import to import an old snapshot, or remove them")
		}
		return errs
	case "legacy-import":
	default:
		bad("snapshot_bootstrap_mode: %q: want pointer or legacy-import", c.SnapshotBootstrapMode)
		return errs
	}
	if c.LegacyImportRoot == "" {
		bad("snapshot_bootstrap_mode: legacy-import requires legacy_import_root (the old master's object store root: the " +
			"directory or s3://BUCKET/PREFIX holding mooncake_master_snapshot/{cluster_id}/latest.txt)")
	}
	if c.ObjectStore == "" {
		bad("snapshot_bootstrap_mode: legacy-import requires a shared object store (object_store): the import becomes a schema-v1 snapshot there")
	}
	if strings.HasPrefix(c.LegacyImportRoot, "s3://") {
		if c.ObjectStore != "s3" {
			bad("legacy_import_root: %q is in S3, which needs object_store: s3 (its endpoint and credentials are used)", c.LegacyImportRoot)
		}
		if b, _, _ := strings.Cut(strings.TrimPrefix(c.LegacyImportRoot, "s3://"), "/"); b == "" {
			bad("legacy_import_root: %q: want s3://BUCKET/PREFIX", c.LegacyImportRoot)
		}
	} else if strings.Contains(c.LegacyImportRoot, "://") {
		bad("legacy_import_root: %q: want a directory or s3://BUCKET/PREFIX", c.LegacyImportRoot)
	}
	if c.LegacyImportClusterID != "" {
		if ks, err := keyspace.New(c.LegacyImportClusterID); err != nil {
			bad("legacy_import_cluster_id: %v", err)
		} else if pathDots(ks.ClusterID()) {
			bad("legacy_import_cluster_id: %q names no directory under legacy_import_root", c.LegacyImportClusterID)
		}
	}
	if c.LegacyImportSnapshotID != "" {
		if err := legacy.CheckID(c.LegacyImportSnapshotID); err != nil {
			bad("legacy_import_snapshot_id: %v", err)
		}
	}
	return errs
}

// pathDots reports whether a cluster id, valid as a key component, is "."
// or "..": as a path element it names the directory it should be in, or the
// one above, so it cannot name a cluster's objects.
func pathDots(id string) bool { return id == "." || id == ".." }

// legacyClusterID is the old namespace an import reads.
func (c Config) legacyClusterID() string {
	if c.LegacyImportClusterID != "" {
		return c.LegacyImportClusterID
	}
	return c.ClusterID
}

func (c Config) validateStore() []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	needStore := map[string]bool{"enable_standby_snapshot": c.EnableStandbySnapshot,
		"enable_snapshot_gc": c.EnableSnapshotGC, "enable_oplog_pruning": c.EnableOplogPruning}
	for _, k := range []string{"enable_standby_snapshot", "enable_snapshot_gc", "enable_oplog_pruning"} {
		if needStore[k] && c.ObjectStore == "" {
			bad("%s: requires a shared object store (object_store: s3, or local with local_store_dir)", k)
		}
		if needStore[k] && len(c.EtcdEndpoints) == 0 {
			bad("%s: requires etcd (etcd_endpoints)", k)
		}
	}
	if c.EnableSnapshotGC && !c.EnableStandbySnapshot {
		bad("enable_snapshot_gc: requires enable_standby_snapshot (GC runs in the publication cycle under the maintenance lease)")
	}
	if c.EnableOplogPruning && !c.EnableStandbySnapshot {
		bad("enable_oplog_pruning: requires enable_standby_snapshot (the floor only advances behind two published snapshots)")
	}
	if c.EnableStandbySnapshot && c.Environment == "production" && c.SnapshotWorkDir == "" {
		bad("snapshot_work_dir: required in production when enable_standby_snapshot is on")
	}
	switch c.ObjectStore {
	case "":
		if c.S3Endpoint != "" || c.LocalStoreDir != "" {
			bad("object_store: empty, but s3_endpoint or local_store_dir is set: say which store (s3 or local)")
		}
	case "s3":
		if c.S3Endpoint == "" || c.S3Bucket == "" {
			bad("object_store: s3 requires s3_endpoint and s3_bucket")
		}
		if c.S3Endpoint != "" && !strings.HasPrefix(c.S3Endpoint, "http://") && !strings.HasPrefix(c.S3Endpoint, "https://") {
			bad("s3_endpoint: %q: want an http:// or https:// URL", c.S3Endpoint)
		}
		if c.LocalStoreDir != "" {
			bad("local_store_dir: set while object_store is s3")
		}
	case "local":
		if c.LocalStoreDir == "" {
			bad("object_store: local requires local_store_dir")
		}
		if c.Environment == "production" && !c.AllowLocalStoreInProduction {
			bad("object_store: local in production is a node-local directory, not an HA store; use s3, or set " +
				"allow_local_store_in_production: true for an explicitly shared filesystem")
		}
	default:
		bad("object_store: %q: want s3 or local", c.ObjectStore)
	}
	return errs
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Durations derived from the millisecond and second settings.
func (c Config) pollInterval() time.Duration {
	return time.Duration(c.OplogPollIntervalMS) * time.Millisecond
}
func (c Config) requestTimeout() time.Duration {
	return time.Duration(c.EtcdRequestTimeout) * time.Millisecond
}
func (c Config) dialTimeout() time.Duration {
	return time.Duration(c.EtcdDialTimeoutMS) * time.Millisecond
}

// advertise is the client API URL handed to clients of standbys.
func (c Config) advertise() string {
	if c.AdvertiseURL != "" {
		return c.AdvertiseURL
	}
	return "http://" + c.Listen
}

func (c Config) nodeID() string {
	if c.NodeID != "" {
		return c.NodeID
	}
	return c.Listen
}

// validateTenants checks the tenants list: each name within the key bound,
// none twice. The empty tenant is listed as YAML ""; it and "default" are
// one tenant (checkRef).
func (c Config) validateTenants() []error {
	var errs []error
	seen := make(map[string]bool, len(c.Tenants))
	for _, t := range c.Tenants {
		switch {
		case len(t) > state.MaxKeyBytes:
			errs = append(errs, fmt.Errorf("tenants: a name of %d bytes: at most %d", len(t), state.MaxKeyBytes))
		case seen[t]:
			errs = append(errs, fmt.Errorf("tenants: %q listed twice", t))
		}
		seen[t] = true
	}
	return errs
}
