// Package s3store connects the master's snapshot backend
// (impl/objstore/s3) to an S3 server the harness runs (harness/s3server),
// for the tests and benchmarks that drive the backend itself. It lives
// apart from harness/s3server so that the harness reaches the
// implementation only through the contract; the harness makes buckets and
// reads objects with its own clients.
package s3store

import (
	"context"

	"github.com/oplogha/oplogha/harness/s3server"
	"github.com/oplogha/oplogha/impl/objstore"
	"github.com/oplogha/oplogha/impl/objstore/s3"
)

// Config is the backend configuration of bucket on srv with its root
// credentials.
func Config(srv *s3server.Server, bucket string) (s3.Config, error) {
	tr, err := srv.Transport()
	if err != nil {
		return s3.Config{}, err
	}
	return s3.Config{Endpoint: srv.Endpoint, Bucket: bucket, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey, Transport: tr}, nil
}

// Open connects the backend to bucket on srv, creating the bucket if it is
// missing, and probes whether the server's checksums can be trusted
// (objstore.Probe, under probeKey). partSize 0 is the backend's default.
func Open(ctx context.Context, srv *s3server.Server, bucket string, partSize int64, probeKey string) (*s3.Store, objstore.Trust, error) {
	cfg, err := Config(srv, bucket)
	if err != nil {
		return nil, objstore.Trust{}, err
	}
	cfg.PartSize = partSize
	st, err := s3.New(cfg)
	if err != nil {
		return nil, objstore.Trust{}, err
	}
	if err := st.EnsureBucket(ctx); err != nil {
		return nil, objstore.Trust{}, err
	}
	trust, err := objstore.Probe(ctx, st, probeKey)
	if err != nil {
		return nil, objstore.Trust{}, err
	}
	return st, trust, nil
}
