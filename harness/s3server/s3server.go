// Package s3server runs an S3-compatible server for one run: versitygw (the
// default: full-object checksums, If-None-Match, versioning) or gofakes3 (a
// checksum-less server, for the readback path), each a local process on a
// free loopback port with per-run credentials passed by environment, never
// on the command line.
package s3server

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/oplogha/oplogha/harness/pki"
	"github.com/oplogha/oplogha/harness/ports"
	"github.com/oplogha/oplogha/harness/proc"
)

// Kinds of server.
const (
	Versity  = "versitygw"
	FakeS3   = "gofakes3"
	Endpoint = "http"
)

// Server is a running S3 server.
type Server struct {
	Kind      string
	Name      string // process name in the group
	Endpoint  string // http://127.0.0.1:port
	AccessKey string
	SecretKey string
	Dir       string
	CAFile    string // with https: the CA clients trust
	// AccessLog is the server's record of every request it served, in the
	// S3 server access log format (versitygw; "" for a server that keeps
	// none): what was written, deleted and read, whoever sent it. It holds
	// the requester's access key id, so it is kept apart from the logs a
	// bundle copies; ReadAccessLog reads what the audits need.
	AccessLog string
}

// Transport is the HTTP transport a client of this server needs: one that
// trusts CAFile for https, nil (minio-go's default) for http.
func (s *Server) Transport() (http.RoundTripper, error) {
	if s.CAFile == "" {
		return nil, nil
	}
	data, err := os.ReadFile(s.CAFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("%s holds no PEM certificate", s.CAFile)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return tr, nil
}

func secret(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// Start starts a server of kind with its data under dir, plain http.
func Start(ctx context.Context, group *proc.Group, kind, binary, dir string) (*Server, error) {
	return StartWith(ctx, group, Options{Kind: kind, Binary: binary, Dir: dir})
}

// Options shape a server.
type Options struct {
	Kind, Binary, Dir string
	// TLS, when set, serves https with this certificate; CAFile is what
	// clients trust (versitygw only).
	TLS    *pki.Pair
	CAFile string
	// IAM turns on versitygw's internal IAM (users beside root, bucket
	// policies), kept under Dir/iam.
	IAM bool
}

// StartWith starts a server shaped by o.
func StartWith(ctx context.Context, group *proc.Group, o Options) (*Server, error) {
	kind, dir := o.Kind, o.Dir
	ps, err := ports.Free(1)
	if err != nil {
		return nil, err
	}
	addr := ports.On(group.Host(kind), ps[0])
	s := &Server{Kind: kind, Name: kind, Endpoint: "http://" + addr, Dir: dir, AccessKey: "oplogha" + secret(4), SecretKey: secret(16)}
	spec := proc.Spec{Name: kind, Path: o.Binary, Dir: dir, Log: filepath.Join(dir, kind+".log")}
	if (o.TLS != nil || o.IAM) && kind != Versity {
		return nil, fmt.Errorf("s3 server %s: TLS and IAM are set up for %s only", kind, Versity)
	}
	switch kind {
	case Versity:
		root, vers, meta := filepath.Join(dir, "root"), filepath.Join(dir, "versions"), filepath.Join(dir, "sidecar")
		for _, d := range []string{root, vers, meta} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return nil, err
			}
		}
		s.AccessLog = filepath.Join(dir, "access-log.txt")
		spec.Args = []string{"--port", addr, "--quiet", "--access-log", s.AccessLog}
		if o.TLS != nil {
			spec.Args = append(spec.Args, "--cert", o.TLS.Cert, "--key", o.TLS.Key)
			s.Endpoint, s.CAFile = "https://"+addr, o.CAFile
		}
		if o.IAM {
			iam := filepath.Join(dir, "iam")
			if err := os.MkdirAll(iam, 0o700); err != nil {
				return nil, err
			}
			spec.Args = append(spec.Args, "--iam-dir", iam)
		}
		spec.Args = append(spec.Args, "posix", "--versioning-dir", vers, "--sidecar", meta, root)
		spec.Env = []string{"ROOT_ACCESS_KEY_ID=" + s.AccessKey, "ROOT_SECRET_ACCESS_KEY=" + s.SecretKey}
	case FakeS3:
		// gofakes3 does not check signatures: any credentials are accepted.
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		spec.Args = []string{"-host", addr, "-backend", "memory", "-quiet"}
	default:
		return nil, fmt.Errorf("s3 server kind %q: want %s or %s", kind, Versity, FakeS3)
	}
	if _, err := group.Start(spec); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return s, nil
		}
		if p, ok := group.Get(kind); ok && !p.Running() {
			return nil, fmt.Errorf("%s exited at start: see %s", kind, spec.Log)
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, fmt.Errorf("%s not listening on %s after 20s", kind, addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// EnsureBucket makes bucket on this server, with the root credentials,
// unless it exists.
func (s *Server) EnsureBucket(ctx context.Context, bucket string) error {
	cli, err := s.rootClient()
	if err != nil {
		return err
	}
	ok, err := cli.BucketExists(ctx, bucket)
	if err != nil {
		return fmt.Errorf("bucket %s: %w", bucket, err)
	}
	if ok {
		return nil
	}
	if err := cli.MakeBucket(ctx, bucket, minio.MakeBucketOptions{}); err != nil {
		return fmt.Errorf("make bucket %s: %w", bucket, err)
	}
	return nil
}
