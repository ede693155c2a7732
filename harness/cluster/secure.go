package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/oplogha/oplogha/impl/contract/keyspace"

	"github.com/oplogha/oplogha/harness/etcd"
	"github.com/oplogha/oplogha/harness/pki"
	"github.com/oplogha/oplogha/harness/proc"
)

// Secured is a run's security material: its CA, the certificates of etcd,
// the S3 server, the harness and the masters, the etcd users, and every
// secret the run made, so the log audit can look for them. Certificates,
// keys and password files live under the run's pki directory, which the
// bundle never copies.
type Secured struct {
	CA *pki.Authority
	// MasterUser is the etcd user every master runs as (auth only); its
	// role reaches /oplog/{cluster_id}/ and nothing else.
	MasterUser   string
	MasterCert   pki.Pair
	PasswordFile string // MasterUser's password, 0600

	etcd   *etcd.Security
	s3Cert pki.Pair
	auth   bool

	mu      sync.Mutex
	secrets []string
}

// secretHex is a fresh random secret: hex, so the log audit can find it
// among the hex runs of any text.
func secretHex() string {
	b := make([]byte, 20)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

func secure(dir string, shape Shape, hosts []string) (*Secured, error) {
	ca, err := pki.New(filepath.Join(dir, "pki"), shape.ClusterID)
	if err != nil {
		return nil, err
	}
	ca.Hosts = hosts
	s := &Secured{CA: ca, auth: shape.Security.Auth, MasterUser: "master-" + shape.ClusterID}
	member, err := ca.Issue("etcd-member", "etcd-member", pki.Peer)
	if err != nil {
		return nil, err
	}
	harness, err := ca.Issue("harness", etcd.RootUser, pki.Client)
	if err != nil {
		return nil, err
	}
	if s.MasterCert, err = ca.Issue("master", s.MasterUser, pki.Client); err != nil {
		return nil, err
	}
	if s.s3Cert, err = ca.Issue("s3", "s3", pki.Server); err != nil {
		return nil, err
	}
	clientTLS, err := ca.ClientTLS(harness)
	if err != nil {
		return nil, err
	}
	s.etcd = &etcd.Security{CAFile: ca.CAFile, Member: member, ClientTLS: clientTLS}
	if s.auth {
		s.etcd.RootPassword = secretHex()
		s.add(s.etcd.RootPassword)
	}
	return s, nil
}

// authorize turns etcd authentication on (root for the harness) and makes
// the masters' user with its prefix role; a no-op without auth.
func (s *Secured) authorize(ctx context.Context, ec *etcd.Cluster, shape Shape) error {
	if !s.auth {
		return nil
	}
	if err := ec.EnableAuth(ctx); err != nil {
		return err
	}
	pw := secretHex()
	s.add(pw)
	s.PasswordFile = filepath.Join(s.CA.Dir, "master.password")
	if err := os.WriteFile(s.PasswordFile, []byte(pw+"\n"), 0o600); err != nil {
		return fmt.Errorf("master password file: %w", err)
	}
	ks, err := keyspace.New(shape.ClusterID)
	if err != nil {
		return err
	}
	return ec.GrantPrefix(ctx, s.MasterUser, pw, ks.Root()+"/")
}

// masterConfig is what every master's configuration gets: the CA, its
// client certificate and, with auth, its user and password file.
func (s *Secured) masterConfig() map[string]any {
	cfg := map[string]any{"etcd_ca_file": s.CA.CAFile, "etcd_cert_file": s.MasterCert.Cert, "etcd_key_file": s.MasterCert.Key}
	if s.auth {
		cfg["etcd_username"], cfg["etcd_password_file"] = s.MasterUser, s.PasswordFile
	}
	return cfg
}

func (s *Secured) add(secret string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.secrets = append(s.secrets, secret)
}

// Secrets are every password and secret key the run made.
func (s *Secured) Secrets() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.secrets...)
}

// IssueClient signs one more client certificate (a refused-credentials
// case: an identity etcd knows nothing about, or none at all).
func (s *Secured) IssueClient(name, cn string) (pki.Pair, error) {
	return s.CA.Issue(name, cn, pki.Client)
}

// nodeHosts are the addresses of every node of the shape: certificates are
// valid for each (all 127.0.0.1 on the process runtime).
func nodeHosts(group *proc.Group, shape Shape) []string {
	seen := map[string]bool{"127.0.0.1": true}
	var out []string
	add := func(name string) {
		if h := group.Host(name); !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
	}
	add("toxiproxy")
	add(shape.S3)
	for i := 0; i < shape.EtcdMembers; i++ {
		add(fmt.Sprintf("etcd-%d", i))
	}
	for i := 0; i < shape.Masters; i++ {
		add(fmt.Sprintf("master-%d", i))
	}
	return out
}
