// Package connect reaches one cluster namespace from an operator's command:
// the etcd client (endpoints, TLS, user and password file) and the snapshot
// store (S3 or a local directory) that a master's configuration names, with
// the validation every oplogctl command shares. Settings are checked before
// anything is contacted; each wrong one is an *OptionError naming its flag.
package connect

import (
	"cmp"
	"context"
	"crypto/tls"
	"fmt"
	"net/url"
	"os"
	"path"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/oplogha/oplogha/etcdclient"
	"github.com/oplogha/oplogha/impl/contract/keyspace"
	"github.com/oplogha/oplogha/impl/objstore"
	"github.com/oplogha/oplogha/impl/objstore/localdir"
	"github.com/oplogha/oplogha/impl/objstore/s3"
)

// Environment variables holding the S3 credentials (the master's defaults
// for s3_access_key_env and s3_secret_key_env).
const (
	EnvS3AccessKey = "OPLOGHA_S3_ACCESS_KEY_ID"
	EnvS3SecretKey = "OPLOGHA_S3_SECRET_ACCESS_KEY"
)

// Target names a cluster namespace and where its keys and snapshot objects
// live: the connection flags of every oplogctl command, and what a master's
// configuration says (etcd_endpoints, cluster_id, the etcd TLS and auth
// files, s3_* or local_store_dir).
type Target struct {
	Etcd             string // etcd client URLs, comma-separated
	ClusterID        string // keys under /oplog/{ClusterID}, objects under {S3Prefix}/{ClusterID}/
	EtcdCACert       string // CA bundle (PEM) verifying the etcd servers
	EtcdCert         string // client certificate (PEM), with EtcdKey
	EtcdKey          string
	EtcdUser         string // with EtcdPasswordFile
	EtcdPasswordFile string // the file holding the password (never printed)
	S3Endpoint       string // http(s)://host:port
	S3Bucket         string
	S3Prefix         string
	S3Region         string
	LocalStoreDir    string // a directory used as the store instead of S3
}

// OptionError is a setting that is wrong in itself or with another (a
// usage error of the command): nothing was contacted.
type OptionError struct{ msg string }

func (e *OptionError) Error() string { return e.msg }

// Errorf returns an *OptionError.
func Errorf(format string, args ...any) error {
	return &OptionError{msg: fmt.Sprintf(format, args...)}
}

// Validate checks every setting that needs no connection and no file: the
// cluster id, settings that go in pairs, the etcd URLs
// against the TLS settings (when etcd is named) and the object store's.
// Every failure is an *OptionError.
func (o Target) Validate() error {
	if _, err := keyspace.New(o.ClusterID); err != nil {
		return Errorf("--cluster-id: %v", err)
	}
	if (o.EtcdCert == "") != (o.EtcdKey == "") {
		return Errorf("--etcd-cert and --etcd-key go together")
	}
	if (o.EtcdUser == "") != (o.EtcdPasswordFile == "") {
		return Errorf("--etcd-user and --etcd-password-file go together")
	}
	if o.Etcd != "" {
		eps, err := o.endpoints()
		if err != nil {
			return err
		}
		if _, err := o.tlsWanted(eps); err != nil {
			return err
		}
	}
	return o.ValidateStore()
}

// ValidateConnect is Validate for the commands that talk to etcd: it also
// wants endpoints.
func (o Target) ValidateConnect() error {
	if err := o.Validate(); err != nil {
		return err
	}
	_, err := o.endpoints()
	return err
}

// endpoints splits --etcd.
func (o Target) endpoints() ([]string, error) {
	var eps []string
	for e := range strings.SplitSeq(o.Etcd, ",") {
		if e = strings.TrimSpace(e); e != "" {
			eps = append(eps, e)
		}
	}
	if len(eps) == 0 {
		return nil, Errorf("--etcd: want one or more client URLs, comma-separated")
	}
	return eps, nil
}

// etcdTLS builds the client TLS configuration, nil for plaintext. TLS is on
// when a CA, a client certificate or an https:// endpoint is given; a
// plaintext http:// endpoint together with TLS flags is refused rather than
// silently dialled without TLS.
func (o Target) etcdTLS(eps []string) (*tls.Config, error) {
	if on, err := o.tlsWanted(eps); !on || err != nil {
		return nil, err
	}
	if (o.EtcdCert == "") != (o.EtcdKey == "") {
		return nil, Errorf("--etcd-cert and --etcd-key go together")
	}
	cfg, err := etcdclient.LoadTLS(o.EtcdCACert, o.EtcdCert, o.EtcdKey)
	if err != nil {
		return nil, fmt.Errorf("--etcd-cacert/--etcd-cert/--etcd-key: %w", err)
	}
	return cfg, nil
}

// tlsWanted says whether the client uses TLS, and refuses TLS settings
// with a plaintext endpoint.
func (o Target) tlsWanted(eps []string) (bool, error) {
	flags := o.EtcdCACert != "" || o.EtcdCert != "" || o.EtcdKey != ""
	secure := false
	for _, e := range eps {
		switch {
		case strings.HasPrefix(e, "https://"):
			secure = true
		case strings.HasPrefix(e, "http://") && flags:
			return false, Errorf("--etcd %s is plaintext http:// but TLS flags are set: use https://", e)
		}
	}
	return flags || secure, nil
}

// etcdPassword reads the password file (one line; the trailing newline is
// not part of the password).
func (o Target) etcdPassword() (string, error) {
	if (o.EtcdUser == "") != (o.EtcdPasswordFile == "") {
		return "", Errorf("--etcd-user and --etcd-password-file go together")
	}
	if o.EtcdPasswordFile == "" {
		return "", nil
	}
	pw, err := etcdclient.ReadPassword(o.EtcdPasswordFile)
	if err != nil {
		return "", fmt.Errorf("--etcd-password-file: %w", err)
	}
	return pw, nil
}

// EtcdClient connects with the TLS and auth flags.
func (o Target) EtcdClient(ctx context.Context) (*clientv3.Client, error) {
	eps, err := o.endpoints()
	if err != nil {
		return nil, err
	}
	tc, err := o.etcdTLS(eps)
	if err != nil {
		return nil, err
	}
	pw, err := o.etcdPassword()
	if err != nil {
		return nil, err
	}
	return etcdclient.New(etcdclient.Options{Endpoints: eps, DialTimeout: 10 * time.Second, TLS: tc,
		Username: o.EtcdUser, Password: pw, Context: ctx})
}

// ObjectRoot is {s3_prefix}/{cluster_id}/, the master's storePrefix plus
// the slash that keeps a neighbour namespace (C10 next to C1) out.
func (o Target) ObjectRoot() string { return path.Join(o.S3Prefix, o.ClusterID) + "/" }

// ValidateStore checks the object store settings: S3 or a directory, not both.
func (o Target) ValidateStore() error {
	switch {
	case o.S3Endpoint != "" && o.LocalStoreDir != "":
		return Errorf("--s3-endpoint and --local-store-dir: name one object store")
	case o.S3Endpoint == "" && o.S3Bucket != "":
		return Errorf("--s3-bucket without --s3-endpoint")
	case o.S3Endpoint == "":
		return nil
	case o.S3Bucket == "":
		return Errorf("--s3-endpoint needs --s3-bucket")
	}
	if u, err := url.Parse(o.S3Endpoint); err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return Errorf("--s3-endpoint %q: want http(s)://host:port", o.S3Endpoint)
	}
	return nil
}

// Store opens the snapshot store the settings name, for reading; nil when
// they name none. A local directory must exist (a reader never creates
// one); S3 credentials come from EnvS3AccessKey and EnvS3SecretKey.
func (o Target) Store() (objstore.Store, error) {
	if err := o.ValidateStore(); err != nil {
		return nil, err
	}
	switch {
	case o.LocalStoreDir != "":
		fi, err := os.Stat(o.LocalStoreDir)
		if err != nil {
			return nil, fmt.Errorf("--local-store-dir: %w", err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("--local-store-dir %s: not a directory", o.LocalStoreDir)
		}
		return &localdir.Store{Root: o.LocalStoreDir}, nil
	case o.S3Endpoint == "":
		return nil, nil
	}
	access, secret := os.Getenv(EnvS3AccessKey), os.Getenv(EnvS3SecretKey)
	if access == "" || secret == "" {
		return nil, fmt.Errorf("S3 credentials: set %s and %s", EnvS3AccessKey, EnvS3SecretKey)
	}
	st, err := s3.New(s3.Config{Endpoint: o.S3Endpoint, Bucket: o.S3Bucket, Region: cmp.Or(o.S3Region, "us-east-1"), AccessKey: access, SecretKey: secret})
	if err != nil {
		return nil, fmt.Errorf("s3 client: %w", err)
	}
	return st, nil
}
