// Package etcdclient is the one etcd client configuration of the project:
// the master, the operator's CLI (impl/connect) and the harness dial etcd
// through Options.Config, so TLS, authentication, keepalive and logging are
// set the same way everywhere. It stands outside impl/ and harness/ so that
// both use it while the harness still reads nothing of impl but its
// contract.
package etcdclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// Options are what differ between clients: where, as whom, how long to dial.
type Options struct {
	Endpoints []string
	// TLS is nil for plaintext.
	TLS                *tls.Config
	Username, Password string
	// DialTimeout defaults to 5 s.
	DialTimeout time.Duration
	// Context, when set, bounds the client's life.
	Context context.Context
}

// Keepalive pings: a member cut off by a partition drops packets and never
// resets the connection; without pings gRPC keeps it READY and every
// request and stream pinned to it stalls. 5 s is etcd's default
// --grpc-keepalive-min-time: pinging more often makes the server answer
// too_many_pings.
const (
	KeepAliveTime    = 5 * time.Second
	KeepAliveTimeout = 2 * time.Second
)

// Config is the client configuration for o.
func (o Options) Config() clientv3.Config {
	dial := o.DialTimeout
	if dial <= 0 {
		dial = 5 * time.Second
	}
	return clientv3.Config{
		Endpoints: o.Endpoints, DialTimeout: dial, TLS: o.TLS,
		Username: o.Username, Password: o.Password,
		DialKeepAliveTime: KeepAliveTime, DialKeepAliveTimeout: KeepAliveTimeout, PermitWithoutStream: true,
		Logger: zap.NewNop(), Context: o.Context,
	}
}

// New connects with o.
func New(o Options) (*clientv3.Client, error) {
	cli, err := clientv3.New(o.Config())
	if err != nil {
		return nil, fmt.Errorf("etcd %s: %w", strings.Join(o.Endpoints, ","), err)
	}
	return cli, nil
}

// LoadTLS is a client TLS configuration from PEM files: caFile to trust
// (empty: the system pool), certFile and keyFile to present (both or
// neither). Errors name the file at fault.
func LoadTLS(caFile, certFile, keyFile string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		data, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(data) {
			return nil, fmt.Errorf("CA file %s: no PEM certificate in it", caFile)
		}
		cfg.RootCAs = pool
	}
	if (certFile == "") != (keyFile == "") {
		return nil, errors.New("a client certificate needs both its cert and key file")
	}
	if certFile != "" {
		c, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{c}
	}
	return cfg, nil
}

// ErrEmptyPassword: a password file holds nothing but line ends.
var ErrEmptyPassword = errors.New("password file is empty")

// ReadPassword reads a password file: one line, whose line end is not part
// of the password.
func ReadPassword(file string) (string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	pw := strings.TrimRight(string(data), "\r\n")
	if pw == "" {
		return "", fmt.Errorf("%s: %w", file, ErrEmptyPassword)
	}
	return pw, nil
}
