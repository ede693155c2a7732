package master

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/oplogha/oplogha/etcdclient"
)

// ErrEtcdRefused is returned by Run when etcd refuses this master's
// credentials: its certificate, its user or its role. It is not retried: a
// master that cannot be authorised never becomes a writer, and says why.
var ErrEtcdRefused = errors.New("etcd refused this master")

// etcdClientConfig is the client configuration of cfg (etcdclient's, as
// every client of the project): endpoints, TLS from the CA, certificate and
// key files, user and password (from its file).
func (c Config) etcdClientConfig() (clientv3.Config, error) {
	o := etcdclient.Options{Endpoints: c.EtcdEndpoints, DialTimeout: c.dialTimeout()}
	if c.EtcdCAFile != "" || c.EtcdCertFile != "" || strings.HasPrefix(strings.Join(c.EtcdEndpoints, ","), "https://") {
		tc, err := etcdclient.LoadTLS(c.EtcdCAFile, c.EtcdCertFile, c.EtcdKeyFile)
		if err != nil {
			return o.Config(), fmt.Errorf("etcd TLS: %w", err)
		}
		o.TLS = tc
	}
	if c.EtcdUsername != "" {
		pw, err := etcdclient.ReadPassword(c.EtcdPasswordFile)
		if err != nil {
			return o.Config(), fmt.Errorf("etcd_password_file: %w", err)
		}
		o.Username, o.Password = c.EtcdUsername, pw
	}
	return o.Config(), nil
}

// checkEtcdTLS completes a TLS handshake with each reachable member before
// any client is made: a refused certificate surfaces here, where gRPC would
// retry it forever. Unreachable members are not a refusal; every reachable
// one refusing is.
func checkEtcdTLS(ctx context.Context, cc clientv3.Config) error {
	if cc.TLS == nil {
		return nil
	}
	refused := 0
	var first error
	for _, ep := range cc.Endpoints {
		err := tlsProbe(ctx, ep, cc.TLS)
		if err == nil {
			continue
		}
		if !isTLSRefusal(err) {
			continue // unreachable, reset or slow: not a refusal
		}
		refused++
		if first == nil {
			first = fmt.Errorf("%s: %w", ep, err)
		}
	}
	if refused > 0 && refused == len(cc.Endpoints) {
		return fmt.Errorf("%w: TLS: %v", ErrEtcdRefused, first)
	}
	return nil
}

// dialEtcd makes the client; with a user, that authenticates, so a wrong
// password is refused here; an unavailable cluster is waited for.
func (m *Master) dialEtcd(ctx context.Context, cc clientv3.Config) (*clientv3.Client, error) {
	for {
		cli, err := clientv3.New(cc)
		if err == nil {
			return cli, nil
		}
		if isAuthError(err) {
			return nil, fmt.Errorf("%w: authentication of user %q: %v", ErrEtcdRefused, cc.Username, err)
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("etcd client: %w", err)
		}
		m.log.Warn("etcd not reachable yet", "phase", "start", "code", "etcd_unavailable", "err", err)
		sleep(ctx, time.Second)
	}
}

// checkEtcdAccess reads the namespace once, linearizably: a wrong user or
// role surfaces as an authentication or permission error, not retried.
func (m *Master) checkEtcdAccess(ctx context.Context, cli *clientv3.Client) error {
	rctx, cancel := context.WithTimeout(ctx, m.cfg.dialTimeout())
	defer cancel()
	_, err := cli.Get(rctx, m.ks.ProducerView())
	switch {
	case err == nil:
		return nil
	case errors.Is(err, rpctypes.ErrPermissionDenied):
		return fmt.Errorf("%w: user %q may not read %s (its role must grant read/write on the prefix %s): %v",
			ErrEtcdRefused, m.cfg.EtcdUsername, m.ks.ProducerView(), m.ks.Root()+"/", err)
	case errors.Is(err, rpctypes.ErrAuthFailed), errors.Is(err, rpctypes.ErrUserEmpty), errors.Is(err, rpctypes.ErrInvalidAuthToken):
		return fmt.Errorf("%w: authentication of user %q: %v", ErrEtcdRefused, m.cfg.EtcdUsername, err)
	}
	if s := err.Error(); strings.Contains(s, "user name is empty") || strings.Contains(s, "authentication failed") {
		return fmt.Errorf("%w: authentication: %v", ErrEtcdRefused, err)
	}
	return nil // unavailable or slow: not a refusal; the roles loop retries
}

// tlsProbe completes a TLS handshake with the member at ep and waits a
// moment for a refusal: with TLS 1.3 a server that rejects the client's
// certificate says so only after the client's side of the handshake ended.
func tlsProbe(ctx context.Context, ep string, tc *tls.Config) error {
	u, err := url.Parse(ep)
	if err != nil {
		return err
	}
	d := tls.Dialer{NetDialer: &net.Dialer{Timeout: 3 * time.Second}, Config: tc.Clone()}
	d.Config.NextProtos = []string{"h2"}
	if d.Config.ServerName == "" {
		d.Config.ServerName = u.Hostname()
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := d.DialContext(pctx, "tcp", u.Host)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	buf := make([]byte, 1)
	_, err = conn.Read(buf)
	var netErr net.Error
	if err == nil || errors.As(err, &netErr) && netErr.Timeout() {
		return nil // the server spoke HTTP/2, or waited for our preface
	}
	if strings.Contains(err.Error(), "tls:") {
		return err
	}
	return nil
}

// isTLSRefusal tells a refused handshake (an alert from the server, a
// certificate this side cannot verify) from a link that is down, reset or
// slow, which is not a refusal and is waited out like any outage.
func isTLSRefusal(err error) bool {
	var alert tls.AlertError
	var verify *tls.CertificateVerificationError
	var rec tls.RecordHeaderError
	if errors.As(err, &alert) || errors.As(err, &verify) || errors.As(err, &rec) {
		return true
	}
	s := err.Error()
	return strings.Contains(s, "remote error: tls:") || strings.Contains(s, "x509:")
}

func isAuthError(err error) bool {
	return errors.Is(err, rpctypes.ErrAuthFailed) || errors.Is(err, rpctypes.ErrPermissionDenied) ||
		strings.Contains(err.Error(), "authentication failed")
}
