package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/stretchr/testify/require"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/oplogha/oplogha/impl/connect"
	"github.com/oplogha/oplogha/impl/contract/keyspace"
)

// resetEnv is a real etcd (embedded, in process) and a real S3 server
// (gofakes3 with its memory backend, over HTTP) with bucket "snap".
type resetEnv struct {
	etcd   string
	cli    *clientv3.Client
	s3     string
	core   *minio.Core
	bucket string
}

// startResetEtcd runs a single-member embedded etcd (as impl/internal/etcdtest,
// which cmd/ cannot import), over TLS when tlsInfo is set.
func startResetEtcd(t *testing.T, tlsInfo *transport.TLSInfo) string {
	t.Helper()
	cfg := embed.NewConfig()
	cfg.Name = "reset"
	cfg.Dir = t.TempDir()
	cfg.UnsafeNoFsync = true
	cfg.Logger = "zap"
	cfg.LogLevel = "error"
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	scheme := "http"
	if tlsInfo != nil {
		scheme = "https"
		cfg.ClientTLSInfo = *tlsInfo
	}
	cu, _ := url.Parse(scheme + "://127.0.0.1:0")
	pu, _ := url.Parse("http://127.0.0.1:0")
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*cu}, []url.URL{*cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*pu}, []url.URL{*pu}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	e, err := embed.StartEtcd(cfg)
	require.NoError(t, err)
	t.Cleanup(e.Close)
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(30 * time.Second):
		t.Fatal("embedded etcd not ready after 30s")
	}
	return scheme + "://" + e.Clients[0].Addr().String()
}

func newResetEnv(t *testing.T) *resetEnv {
	t.Helper()
	env := &resetEnv{etcd: startResetEtcd(t, nil), bucket: "snap"}
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{env.etcd}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	require.NoError(t, err)
	t.Cleanup(func() { cli.Close() })
	env.cli = cli

	backend := s3mem.New()
	require.NoError(t, backend.CreateBucket(env.bucket))
	srv := httptest.NewServer(gofakes3.New(backend, gofakes3.WithLogger(gofakes3.DiscardLog())).Server())
	t.Cleanup(srv.Close)
	env.s3 = srv.URL
	t.Setenv(connect.EnvS3AccessKey, "reset-test-access")
	t.Setenv(connect.EnvS3SecretKey, "reset-test-secret")
	u, _ := url.Parse(srv.URL)
	env.core, err = minio.NewCore(u.Host, &minio.Options{Creds: credentials.NewStaticV4("reset-test-access", "reset-test-secret", ""),
		Region: "us-east-1", BucketLookup: minio.BucketLookupPath})
	require.NoError(t, err)
	return env
}

// run runs oplogctl reset with the environment's etcd and S3 flags (prefix "p").
func (env *resetEnv) run(t *testing.T, sub, cluster string, extra ...string) (string, string, error) {
	t.Helper()
	args := append([]string{sub, "--etcd", env.etcd, "--cluster-id", cluster,
		"--s3-endpoint", env.s3, "--s3-bucket", env.bucket, "--s3-prefix", "p"}, extra...)
	return runResetArgs(t, args...)
}

func runResetArgs(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out, errOut bytes.Buffer
	err := runReset(ctx, args, &out, &errOut)
	return out.String(), errOut.String(), err
}

func (env *resetEnv) put(t *testing.T, key, val string, opts ...clientv3.OpOption) {
	t.Helper()
	_, err := env.cli.Put(context.Background(), key, val, opts...)
	require.NoError(t, err)
}

func (env *resetEnv) putObject(t *testing.T, key string) {
	t.Helper()
	data := []byte("snapshot bytes of " + key)
	_, err := env.core.Client.PutObject(context.Background(), env.bucket, key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{})
	require.NoError(t, err)
}

func (env *resetEnv) objects(t *testing.T, prefix string) []string {
	t.Helper()
	var keys []string
	for oi := range env.core.Client.ListObjects(context.Background(), env.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		require.NoError(t, oi.Err)
		keys = append(keys, oi.Key)
	}
	return keys
}

// etcdKeys is every key under prefix with its value.
func (env *resetEnv) etcdKeys(t *testing.T, prefix string) map[string]string {
	t.Helper()
	resp, err := env.cli.Get(context.Background(), prefix, clientv3.WithPrefix())
	require.NoError(t, err)
	out := map[string]string{}
	for _, kv := range resp.Kvs {
		out[string(kv.Key)] = string(kv.Value)
	}
	return out
}

func (env *resetEnv) lease(t *testing.T) clientv3.LeaseID {
	t.Helper()
	l, err := env.cli.Grant(context.Background(), 120)
	require.NoError(t, err)
	return l.ID
}

var emptyLine = regexp.MustCompile(`^namespace /oplog/([^ ]+) is empty at revision ([0-9]+)\n$`)

// populateNeighbours writes namespaces that share /oplog/ and the object
// prefix with c1 (one whose id starts with "c1") and must never be touched.
func (env *resetEnv) populateNeighbours(t *testing.T) {
	t.Helper()
	env.put(t, keyspace.Must("other").SnapshotLatest(), `{"pointer":"other"}`)
	env.put(t, keyspace.Must("other").Batch(1), "[1]")
	env.put(t, keyspace.Must("c10").Batch(7), "[7]")
	env.put(t, "/oplog/c1", "not below /oplog/c1/")
	env.putObject(t, "p/c10/00000000000000000007-ab-cd/descriptor.json")
	env.putObject(t, "p/other/00000000000000000001-ab-cd/descriptor.json")
	env.putObject(t, "p/c1") // an object named like the prefix, not below it
}

func TestResetCheckEmptyNamespace(t *testing.T) {
	env := newResetEnv(t)
	env.populateNeighbours(t)
	out, errOut, err := env.run(t, "check", "c1")
	require.NoError(t, err, "stdout:\n%s\nstderr:\n%s", out, errOut)
	m := emptyLine.FindStringSubmatch(out)
	require.NotNil(t, m, "want exactly one line, got %q", out)
	require.Equal(t, "c1", m[1])
	require.Empty(t, errOut)

	// Without an object store the etcd verdict stands and stderr says the
	// objects were not checked.
	out, errOut, err = runResetArgs(t, "check", "--etcd", env.etcd, "--cluster-id", "c1")
	require.NoError(t, err)
	require.Regexp(t, emptyLine, out)
	require.Contains(t, errOut, "snapshot objects not checked")
}

func TestResetCheckResidue(t *testing.T) {
	env := newResetEnv(t)
	env.populateNeighbours(t)
	cases := []struct {
		name   string
		seed   func(t *testing.T, ks keyspace.Keyspace)
		expect []string // substrings of stdout
	}{
		{"batch", func(t *testing.T, ks keyspace.Keyspace) { env.put(t, ks.Batch(3), "[1,3]") },
			[]string{"key /oplog/c-batch/batches/00000000000000000003  [batches]", "batches                    1"}},
		{"durable-prefix", func(t *testing.T, ks keyspace.Keyspace) {
			env.put(t, ks.DurablePrefix(), `{"schema_version":1,"batch_id":0,"last_seq":0}`)
		}, []string{"key /oplog/c-durable-prefix/durable_prefix  [durable_prefix]"}},
		{"pointer", func(t *testing.T, ks keyspace.Keyspace) { env.put(t, ks.SnapshotLatest(), `{}`) },
			[]string{"key /oplog/c-pointer/snapshot/latest  [snapshot/latest]"}},
		{"fallback", func(t *testing.T, ks keyspace.Keyspace) { env.put(t, ks.SnapshotFallback(), `{}`) },
			[]string{"[snapshot/fallback]"}},
		{"floor", func(t *testing.T, ks keyspace.Keyspace) {
			env.put(t, ks.CompactionFloor(), `{"schema_version":1,"batch_id":9}`)
		}, []string{"key /oplog/c-floor/snapshot/compaction_floor  [snapshot/compaction_floor]"}},
		{"legacy-import", func(t *testing.T, ks keyspace.Keyspace) { env.put(t, ks.LegacyImport(), `{}`) },
			[]string{"[snapshot/legacy_import]"}},
		{"unknown", func(t *testing.T, ks keyspace.Keyspace) { env.put(t, ks.Root()+"/mystery/key", "?") },
			[]string{"key /oplog/c-unknown/mystery/key  [unknown]", "unknown                    1"}},
		{"leased-writer", func(t *testing.T, ks keyspace.Keyspace) {
			id := env.lease(t)
			env.put(t, ks.SnapshotMaintenance(), "token", clientv3.WithLease(id))
		}, []string{"[snapshot/maintenance]", "alive, ttl", "1 attached keys in /oplog/c-leased-writer/", "1 live leases"}},
		{"leader", func(t *testing.T, ks keyspace.Keyspace) {
			// A real election, as a master campaigns.
			sess, err := concurrency.NewSession(env.cli, concurrency.WithTTL(60))
			require.NoError(t, err)
			t.Cleanup(func() { sess.Close() })
			require.NoError(t, concurrency.NewElection(sess, ks.Leader()).Campaign(context.Background(), "node-a"))
		}, []string{"[leader]", "alive, ttl", "1 live leases"}},
		{"object", func(t *testing.T, ks keyspace.Keyspace) {
			env.putObject(t, "p/c-object/00000000000000000004-ab-cd/descriptor.json")
		}, []string{"object p/c-object/00000000000000000004-ab-cd/descriptor.json", "1 objects and 0 incomplete uploads in s3://snap/p/c-object/"}},
		{"upload", func(t *testing.T, ks keyspace.Keyspace) {
			_, err := env.core.NewMultipartUpload(context.Background(), env.bucket, "p/c-upload/00000000000000000004-ab-cd/chunks/000000.bin", minio.PutObjectOptions{})
			require.NoError(t, err)
		}, []string{"upload p/c-upload/00000000000000000004-ab-cd/chunks/000000.bin  upload id", "0 objects and 1 incomplete uploads"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cluster := "c-" + c.name
			ks := keyspace.Must(cluster)
			c.seed(t, ks)
			out, errOut, err := env.run(t, "check", cluster)
			require.ErrorIs(t, err, errVerdict, "stdout:\n%s\nstderr:\n%s", out, errOut)
			require.Contains(t, out, "namespace /oplog/"+cluster+" is NOT empty at revision ")
			for _, want := range c.expect {
				require.Contains(t, out, want)
			}
			require.NotRegexp(t, emptyLine, out)
			// Only this namespace's residue is named.
			require.NotContains(t, out, "/oplog/other/")
			require.NotContains(t, out, "/oplog/c10/")
			require.NotContains(t, out, "p/c10/")
		})
	}
}

// seedFull writes residue of every kind into cluster: batches, prefix, view,
// pointers, floor, import record, an unknown key, a leased writer, an
// election key, a lease shared with a key outside the namespace, objects and
// an incomplete upload. It returns the election session's lease and the
// shared lease.
func (env *resetEnv) seedFull(t *testing.T, cluster string) (clientv3.LeaseID, clientv3.LeaseID) {
	t.Helper()
	ks := keyspace.Must(cluster)
	for id := uint64(1); id <= 3; id++ {
		env.put(t, ks.Batch(id), "[1]")
	}
	env.put(t, ks.DurablePrefix(), `{"schema_version":1,"batch_id":3,"last_seq":9}`)
	env.put(t, ks.ProducerView(), "2")
	env.put(t, ks.SnapshotLatest(), "{}")
	env.put(t, ks.SnapshotFallback(), "{}")
	env.put(t, ks.CompactionFloor(), `{"schema_version":1,"batch_id":1}`)
	env.put(t, ks.LegacyImport(), "{}")
	env.put(t, ks.Root()+"/mystery", "?")
	env.put(t, ks.SnapshotMaintenance(), "token", clientv3.WithLease(env.lease(t)))
	sess, err := concurrency.NewSession(env.cli, concurrency.WithTTL(60))
	require.NoError(t, err)
	t.Cleanup(func() { sess.Close() })
	require.NoError(t, concurrency.NewElection(sess, ks.Leader()).Campaign(context.Background(), "node-a"))
	shared := env.lease(t)
	env.put(t, ks.Root()+"/shared", "x", clientv3.WithLease(shared))
	env.put(t, "/elsewhere/lock", "y", clientv3.WithLease(shared))
	env.putObject(t, "p/"+cluster+"/00000000000000000003-ab-cd/descriptor.json")
	env.putObject(t, "p/"+cluster+"/00000000000000000003-ab-cd/manifest.json")
	env.putObject(t, "p/"+cluster+"/_probe/node-a-00")
	_, err = env.core.NewMultipartUpload(context.Background(), env.bucket, "p/"+cluster+"/00000000000000000004-ab-cd/chunks/000000.bin", minio.PutObjectOptions{})
	require.NoError(t, err)
	return sess.Lease(), shared
}

func TestResetDeleteRefusedWithoutConfirm(t *testing.T) {
	env := newResetEnv(t)
	env.seedFull(t, "c1")
	keysBefore, objsBefore := env.etcdKeys(t, "/oplog/"), env.objects(t, "p/")
	for _, confirm := range [][]string{nil, {"--confirm", "c2"}, {"--confirm", "C1"}, {"--confirm", ""}} {
		out, _, err := env.run(t, "delete", "c1", confirm...)
		require.Error(t, err, "confirm %q", confirm)
		require.Contains(t, err.Error(), "refused")
		require.Empty(t, out)
	}
	require.Equal(t, keysBefore, env.etcdKeys(t, "/oplog/"), "a refused delete deleted keys")
	require.Equal(t, objsBefore, env.objects(t, "p/"), "a refused delete deleted objects")
	_, _, err := env.run(t, "check", "c1")
	require.ErrorIs(t, err, errVerdict)
}

func TestResetDeleteEmptiesNamespaceOnly(t *testing.T) {
	env := newResetEnv(t)
	env.populateNeighbours(t)
	sessLease, shared := env.seedFull(t, "c1")
	other, c10 := env.etcdKeys(t, "/oplog/other/"), env.etcdKeys(t, "/oplog/c10/")
	otherObjs, c10Objs := env.objects(t, "p/other/"), env.objects(t, "p/c10/")

	out, errOut, err := env.run(t, "delete", "c1", "--confirm", "c1")
	require.NoError(t, err, "stdout:\n%s\nstderr:\n%s", out, errOut)
	require.Contains(t, out, "reset delete /oplog/c1: found 13 keys")
	require.Contains(t, out, "revoked lease ")
	require.Contains(t, out, "kept lease ")
	require.Contains(t, out, "under /oplog/c1/ at revision")
	require.Contains(t, out, "deleted 3 objects and aborted 1 incomplete uploads under s3://snap/p/c1/")
	require.Contains(t, errOut, "warning: live leases")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Regexp(t, `^namespace /oplog/c1 is empty at revision [0-9]+$`, lines[len(lines)-1])

	// Nothing of c1 is left, in etcd or the store.
	require.Empty(t, env.etcdKeys(t, "/oplog/c1/"))
	require.Empty(t, env.objects(t, "p/c1/"))
	res, err := env.core.ListMultipartUploads(context.Background(), env.bucket, "p/c1/", "", "", "", 100)
	require.NoError(t, err)
	require.Empty(t, res.Uploads)
	ttl, err := env.cli.TimeToLive(context.Background(), sessLease)
	require.NoError(t, err)
	require.Equal(t, int64(-1), ttl.TTL, "the election lease was not revoked")

	// The neighbours are untouched: /oplog/other/, /oplog/c10/, the key
	// /oplog/c1 itself, the lease shared with a key outside, their objects.
	require.Equal(t, other, env.etcdKeys(t, "/oplog/other/"))
	require.Equal(t, c10, env.etcdKeys(t, "/oplog/c10/"))
	got, err := env.cli.Get(context.Background(), "/oplog/c1")
	require.NoError(t, err)
	require.Len(t, got.Kvs, 1, "the key /oplog/c1 (not below /oplog/c1/) was deleted")
	require.Equal(t, map[string]string{"/elsewhere/lock": "y"}, env.etcdKeys(t, "/elsewhere/"))
	ttl, err = env.cli.TimeToLive(context.Background(), shared)
	require.NoError(t, err)
	require.Positive(t, ttl.TTL, "a lease holding a key outside the namespace was revoked")
	require.Equal(t, otherObjs, env.objects(t, "p/other/"))
	require.Equal(t, c10Objs, env.objects(t, "p/c10/"))
	require.Contains(t, env.objects(t, "p/c1"), "p/c1", "the object p/c1 (not below p/c1/) was deleted")

	// The check agrees, and a second delete is a no-op that ends empty.
	out, _, err = env.run(t, "check", "c1")
	require.NoError(t, err)
	require.Regexp(t, emptyLine, out)
	out, _, err = env.run(t, "delete", "c1", "--confirm", "c1")
	require.NoError(t, err, out)
	require.Contains(t, out, "deleted 0 keys")
}

func TestResetLocalStore(t *testing.T) {
	env := newResetEnv(t)
	dir := t.TempDir()
	for _, rel := range []string{"p/c1/00000000000000000002-ab-cd/descriptor.json", "p/c10/00000000000000000002-ab-cd/descriptor.json"} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, rel), []byte("x"), 0o644))
	}
	args := []string{"--etcd", env.etcd, "--cluster-id", "c1", "--local-store-dir", dir, "--s3-prefix", "p"}
	out, _, err := runResetArgs(t, append([]string{"check"}, args...)...)
	require.ErrorIs(t, err, errVerdict)
	require.Contains(t, out, "object p/c1/00000000000000000002-ab-cd/descriptor.json  1 bytes")
	out, _, err = runResetArgs(t, append([]string{"delete", "--confirm", "c1"}, args...)...)
	require.NoError(t, err, out)
	require.NoFileExists(t, filepath.Join(dir, "p/c1/00000000000000000002-ab-cd/descriptor.json"))
	require.FileExists(t, filepath.Join(dir, "p/c10/00000000000000000002-ab-cd/descriptor.json"))
	// A store directory that does not exist holds nothing, and is not created.
	missing := filepath.Join(dir, "absent")
	out, _, err = runResetArgs(t, "check", "--etcd", env.etcd, "--cluster-id", "c1", "--local-store-dir", missing)
	require.NoError(t, err, out)
	require.NoDirExists(t, missing)
}

func TestResetNewNamespace(t *testing.T) {
	out, _, err := runResetArgs(t, "new-namespace", "--cluster-id", "prod", "--new-cluster-id", "prod-2",
		"--etcd", "https://e1:2379", "--etcd-user", "ops", "--etcd-password-file", "/run/secrets/pw",
		"--s3-endpoint", "https://s3.example", "--s3-bucket", "snaps", "--s3-prefix", "mc")
	require.NoError(t, err)
	require.Contains(t, out, "cluster_id: prod-2")
	require.Contains(t, out, "oplogctl reset check --etcd https://e1:2379 --cluster-id prod-2 --etcd-user ops "+
		"--etcd-password-file /run/secrets/pw --s3-endpoint https://s3.example --s3-bucket snaps --s3-prefix mc")
	require.Contains(t, out, `"namespace /oplog/prod-2 is empty at revision R"`)
	require.Contains(t, out, "oplogctl reset delete --etcd https://e1:2379 --cluster-id prod")
	require.Contains(t, out, "--confirm prod")
	require.Contains(t, out, "mc/prod-2/")

	out, _, err = runResetArgs(t, "new-namespace", "--cluster-id", "prod")
	require.NoError(t, err)
	require.Regexp(t, `cluster_id: prod-r[0-9]{8}t[0-9]{6}z`, out)

	_, _, err = runResetArgs(t, "new-namespace", "--cluster-id", "prod", "--new-cluster-id", "prod")
	require.ErrorContains(t, err, "fresh")
	_, _, err = runResetArgs(t, "new-namespace", "--cluster-id", "prod", "--new-cluster-id", "a/b")
	require.Error(t, err)
}

func TestResetFlagErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{}, "subcommand"},
		{[]string{"wipe"}, "unknown subcommand"},
		{[]string{"check", "--etcd", "http://127.0.0.1:1"}, "--cluster-id"},
		{[]string{"check", "--cluster-id", "c1"}, "--etcd"},
		{[]string{"check", "--etcd", "http://127.0.0.1:1", "--cluster-id", "c1", "--etcd-cacert", filepath.Join(dir, "ca.pem")}, "plaintext http://"},
		{[]string{"check", "--etcd", "https://127.0.0.1:1", "--cluster-id", "c1", "--etcd-cert", "x.pem"}, "--etcd-cert and --etcd-key go together"},
		{[]string{"check", "--etcd", "127.0.0.1:1", "--cluster-id", "c1", "--etcd-user", "root"}, "--etcd-user and --etcd-password-file go together"},
		{[]string{"check", "--etcd", "127.0.0.1:1", "--cluster-id", "c1", "--s3-endpoint", "http://h:1"}, "--s3-bucket"},
		{[]string{"check", "--etcd", "127.0.0.1:1", "--cluster-id", "c1", "--s3-endpoint", "http://h:1", "--s3-bucket", "b",
			"--local-store-dir", dir}, "name one object store"},
	} {
		_, _, err := runResetArgs(t, c.args...)
		require.ErrorContains(t, err, c.want, "%q", c.args)
	}
}

// writePKI writes a CA, a server certificate for 127.0.0.1 and a client
// certificate, PEM, into dir.
func writePKI(t *testing.T, dir string) (ca, serverCert, serverKey, clientCert, clientKey string) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "reset-test-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	require.NoError(t, err)
	caCert, err := x509.ParseCertificate(caDER)
	require.NoError(t, err)
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600))
		return p
	}
	leaf := func(name string, serial int64, usage []x509.ExtKeyUsage) (string, string) {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: usage,
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &k.PublicKey, caKey)
		require.NoError(t, err)
		kder, err := x509.MarshalECPrivateKey(k)
		require.NoError(t, err)
		return write(name+".pem", "CERTIFICATE", der), write(name+"-key.pem", "EC PRIVATE KEY", kder)
	}
	ca = write("ca.pem", "CERTIFICATE", caDER)
	serverCert, serverKey = leaf("server", 2, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth})
	clientCert, clientKey = leaf("reset-client", 3, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth})
	return
}

// TestResetTLSAndAuth runs check and delete against an etcd that requires
// client certificates and has auth enabled, with the password from a file.
func TestResetTLSAndAuth(t *testing.T) {
	dir := t.TempDir()
	ca, sc, sk, cc, ck := writePKI(t, dir)
	ep := startResetEtcd(t, &transport.TLSInfo{CertFile: sc, KeyFile: sk, TrustedCAFile: ca, ClientCertAuth: true})
	const password = "s3cret-Pa55word"
	pwFile := filepath.Join(dir, "password")
	require.NoError(t, os.WriteFile(pwFile, []byte(password+"\n"), 0o600))

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	caPEM, err := os.ReadFile(ca)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(caPEM))
	cert, err := tls.LoadX509KeyPair(cc, ck)
	require.NoError(t, err)
	admin, err := clientv3.New(clientv3.Config{Endpoints: []string{ep}, DialTimeout: 5 * time.Second, Logger: zap.NewNop(),
		TLS: &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool, Certificates: []tls.Certificate{cert}}})
	require.NoError(t, err)
	_, err = admin.Put(ctx, keyspace.Must("c1").SnapshotLatest(), "{}")
	require.NoError(t, err)
	_, err = admin.Put(ctx, keyspace.Must("other").SnapshotLatest(), "{}")
	require.NoError(t, err)
	_, err = admin.UserAdd(ctx, "root", password)
	require.NoError(t, err)
	_, err = admin.UserGrantRole(ctx, "root", "root")
	require.NoError(t, err)
	_, err = admin.AuthEnable(ctx)
	require.NoError(t, err)
	admin.Close()

	base := []string{"--etcd", ep, "--cluster-id", "c1", "--etcd-cacert", ca, "--etcd-cert", cc, "--etcd-key", ck,
		"--etcd-user", "root", "--etcd-password-file", pwFile}
	out, errOut, err := runResetArgs(t, append([]string{"check"}, base...)...)
	require.ErrorIs(t, err, errVerdict, "stdout:\n%s\nstderr:\n%s", out, errOut)
	require.Contains(t, out, "key /oplog/c1/snapshot/latest  [snapshot/latest]")
	out2, errOut2, err := runResetArgs(t, append([]string{"delete", "--confirm", "c1"}, base...)...)
	require.NoError(t, err, "stdout:\n%s\nstderr:\n%s", out2, errOut2)
	require.Regexp(t, `namespace /oplog/c1 is empty at revision [0-9]+\n$`, out2)
	for _, s := range []string{out, errOut, out2, errOut2} {
		require.NotContains(t, s, password)
	}

	// A wrong password fails (and is not printed either); so does a
	// missing client certificate.
	bad := filepath.Join(dir, "bad")
	require.NoError(t, os.WriteFile(bad, []byte("wrong-password-xyz\n"), 0o600))
	badArgs := append([]string{"check"}, base...)
	badArgs[len(badArgs)-1] = bad
	out, errOut, err = runResetArgs(t, badArgs...)
	require.Error(t, err)
	require.False(t, errors.Is(err, errVerdict))
	require.NotContains(t, out+errOut+err.Error(), "wrong-password-xyz")
	_, _, err = runResetArgs(t, "check", "--etcd", ep, "--cluster-id", "c1", "--etcd-cacert", ca,
		"--etcd-user", "root", "--etcd-password-file", pwFile, "--timeout", "5s")
	require.Error(t, err)
}
