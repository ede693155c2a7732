package masters

import (
	"context"

	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.yaml.in/yaml/v3"

	"github.com/oplogha/oplogha/harness/client"
	"github.com/oplogha/oplogha/harness/etcd"
	"github.com/oplogha/oplogha/harness/pki"
	"github.com/oplogha/oplogha/harness/ports"
	"github.com/oplogha/oplogha/harness/proc"
)

// secureEtcd is a 3-member etcd with mutual TLS on client and peer links
// and authentication on: root for the harness, master-c1 with a role on
// /oplog/c1/ and intruder with a role on /oplog/other/ only.
type secureEtcd struct {
	ec        *etcd.Cluster
	ca        *pki.Authority
	dir       string
	passwords map[string]string // user → password file
}

func startSecureEtcd(t *testing.T) *secureEtcd {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	ca, err := pki.New(filepath.Join(dir, "pki"), "security test")
	require.NoError(t, err)
	member, err := ca.Issue("member", "etcd-member", pki.Peer)
	require.NoError(t, err)
	harness, err := ca.Issue("harness", etcd.RootUser, pki.Client)
	require.NoError(t, err)
	tc, err := ca.ClientTLS(harness)
	require.NoError(t, err)
	group := proc.NewGroup()
	t.Cleanup(func() { require.NoError(t, group.Close(5*time.Second)) })
	ec, err := etcd.Start(ctx, group, etcd.Options{Members: 3, Binary: etcdBin, Dir: filepath.Join(dir, "etcd"),
		Security: &etcd.Security{CAFile: ca.CAFile, Member: member, ClientTLS: tc, RootPassword: "0123456789abcdef0123"}})
	require.NoError(t, err)
	require.NoError(t, ec.EnableAuth(ctx))
	s := &secureEtcd{ec: ec, ca: ca, dir: dir, passwords: map[string]string{}}
	for user, prefix := range map[string]string{"master-c1": "/oplog/c1/", "intruder": "/oplog/other/"} {
		pw := "pw-" + user + "-fedcba9876543210"
		require.NoError(t, ec.GrantPrefix(ctx, user, pw, prefix))
		f := filepath.Join(dir, "pki", user+".password")
		require.NoError(t, os.WriteFile(f, []byte(pw+"\n"), 0o600))
		s.passwords[user] = f
	}
	wrong := filepath.Join(dir, "pki", "wrong.password")
	require.NoError(t, os.WriteFile(wrong, []byte("not-the-password\n"), 0o600))
	s.passwords["wrong"] = wrong
	return s
}

// runMaster starts one master with cfg over the base settings and returns
// its exit error and stderr once it exits, or nil, "" and the process still
// running when it is still up after wait (the caller stops it).
func (s *secureEtcd) runMaster(t *testing.T, name string, cfg map[string]any, wait time.Duration) (exited bool, stderr string, listen string) {
	t.Helper()
	ps, err := ports.Free(1)
	require.NoError(t, err)
	listen = ports.Addr(ps[0])
	base := map[string]any{"cluster_id": "c1", "listen": listen, "etcd_endpoints": s.ec.Endpoints(),
		"environment": "development", "leader_lease_seconds": 2, "etcd_dial_timeout_ms": 3000}
	for k, v := range cfg {
		base[k] = v
	}
	data, err := yaml.Marshal(base)
	require.NoError(t, err)
	path := filepath.Join(s.dir, name+".yaml")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	out := &lockedBuffer{}
	cmd := exec.Command(masterBin, "--config", path)
	cmd.Stderr = out
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		require.Error(t, err, "a refused master exits non-zero")
		return true, out.String(), listen
	case <-time.After(wait):
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			<-done
		})
		return false, out.String(), listen
	}
}

// lastLine is what an operator reads: the master's final stderr line.
func lastLine(stderr string) string {
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	return lines[len(lines)-1]
}

// TestRefusedCredentials: a master whose certificate, user, password or
// role etcd refuses exits non-zero with one line that says which, and
// writes nothing; the right identity becomes primary.
func TestRefusedCredentials(t *testing.T) {
	s := startSecureEtcd(t)
	good, err := s.ca.Issue("master", "master-c1", pki.Client)
	require.NoError(t, err)
	stranger, err := pki.New(filepath.Join(s.dir, "other-ca"), "stranger")
	require.NoError(t, err)
	foreign, err := stranger.Issue("foreign", "master-c1", pki.Client)
	require.NoError(t, err)
	nobody, err := s.ca.Issue("nobody", "nobody", pki.Client)
	require.NoError(t, err)
	withCert := func(p pki.Pair, user string) map[string]any {
		cfg := map[string]any{"etcd_ca_file": s.ca.CAFile}
		if p.Cert != "" {
			cfg["etcd_cert_file"], cfg["etcd_key_file"] = p.Cert, p.Key
		}
		if user != "" {
			name := user
			if user == "wrong" {
				name = "master-c1"
			}
			cfg["etcd_username"], cfg["etcd_password_file"] = name, s.passwords[user]
		}
		return cfg
	}
	cases := []struct {
		name string
		cfg  map[string]any
		want []string
	}{
		{"no client certificate", withCert(pki.Pair{}, "master-c1"), []string{"etcd refused this master: TLS", "certificate required"}},
		{"certificate of another CA", withCert(foreign, "master-c1"), []string{"etcd refused this master: TLS", "certificate"}},
		{"role on another prefix", withCert(good, "intruder"), []string{"etcd refused this master",
			`user "intruder" may not read /oplog/c1/producer_view`, "permission denied"}},
		{"wrong password", withCert(good, "wrong"), []string{"etcd refused this master", "authentication failed"}},
		{"certificate of a user etcd does not know", withCert(nobody, ""), []string{"etcd refused this master"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			exited, stderr, _ := s.runMaster(t, strings.ReplaceAll(tc.name, " ", "-"), tc.cfg, 40*time.Second)
			require.True(t, exited, "a refused master must exit, not retry forever; stderr:\n%s", stderr)
			line := lastLine(stderr)
			require.True(t, strings.HasPrefix(line, "master: "), "one plain line last: %q", line)
			for _, w := range tc.want {
				require.Contains(t, line, w)
			}
		})
	}

	// Nothing above wrote a key: the namespace is still empty.
	cli, err := s.ec.Client(nil)
	require.NoError(t, err)
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := cli.Get(ctx, "/oplog/", clientWithPrefix()...)
	require.NoError(t, err)
	require.Zero(t, resp.Count, "refused masters wrote nothing")

	t.Run("the right identity serves", func(t *testing.T) {
		exited, stderr, listen := s.runMaster(t, "good", withCert(good, "master-c1"), 3*time.Second)
		require.False(t, exited, "stderr:\n%s", stderr)
		c := client.New(5 * time.Second)
		deadline := time.Now().Add(30 * time.Second)
		for {
			h, err := c.Health(ctx, "http://"+listen)
			if err == nil && h.Serving {
				break
			}
			require.True(t, time.Now().Before(deadline), "the master never served: %v %+v", err, h)
			time.Sleep(100 * time.Millisecond)
		}
		resp, err := cli.Get(ctx, "/oplog/c1/producer_view")
		require.NoError(t, err)
		require.Len(t, resp.Kvs, 1, "the primary claimed its view")
	})
}

func clientWithPrefix() []clientv3.OpOption {
	return []clientv3.OpOption{clientv3.WithPrefix(), clientv3.WithCountOnly()}
}

// lockedBuffer is a stderr the test can read while the process writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
