package s3server_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/oplogha/oplogha/impl/contract/batchsnap"

	"github.com/minio/minio-go/v7"
	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/harness/bin"
	"github.com/oplogha/oplogha/harness/pki"
	"github.com/oplogha/oplogha/harness/proc"
	"github.com/oplogha/oplogha/harness/s3server"
	"github.com/oplogha/oplogha/impl/objstore"
	"github.com/oplogha/oplogha/impl/objstore/s3"
	"github.com/oplogha/oplogha/tests/s3store"
)

// TestVersityOverTLSWithAScopedWriter: versitygw serves https with the
// run's certificate, and a writer identity made by the harness reaches the
// snapshot prefix only — what versitygw enforces, measured.
func TestVersityOverTLSWithAScopedWriter(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c, err := bin.NewCache(".", nil)
	require.NoError(t, err)
	b, err := c.Path(ctx, s3server.Versity)
	require.NoError(t, err)
	dir := t.TempDir()
	ca, err := pki.New(filepath.Join(dir, "pki"), "s3 test")
	require.NoError(t, err)
	cert, err := ca.Issue("s3", "versitygw", pki.Server)
	require.NoError(t, err)
	group := proc.NewGroup()
	t.Cleanup(func() { require.NoError(t, group.Close(5*time.Second)) })
	srv, err := s3server.StartWith(ctx, group, s3server.Options{Kind: s3server.Versity, Binary: b.Path,
		Dir: filepath.Join(dir, "s3"), TLS: &cert, CAFile: ca.CAFile, IAM: true})
	require.NoError(t, err)
	require.Contains(t, srv.Endpoint, "https://")

	// Root makes the snapshot bucket and a bucket the writer must not reach.
	_, _, err = s3store.Open(ctx, srv, "snapshots", 0, "snapshots/probe")
	require.NoError(t, err)
	_, _, err = s3store.Open(ctx, srv, "other", 0, "x/probe")
	require.NoError(t, err)
	id, err := srv.CreateWriter(ctx, "snapshots", "snap")
	require.NoError(t, err)

	// The master's backend with the writer's identity: a verified put under
	// the prefix works, with versitygw's checksums trusted.
	cfg, err := s3store.Config(srv, "snapshots")
	require.NoError(t, err)
	cfg.AccessKey, cfg.SecretKey = id.AccessKey, id.SecretKey
	st, err := s3.New(cfg)
	require.NoError(t, err)
	trust, err := objstore.Probe(ctx, st, "snap/c1/_probe/x")
	require.NoError(t, err)
	require.True(t, trust.ServerValidatesChecksums)
	data := payload(64<<10, 7)
	_, err = objstore.VerifiedPut(ctx, st, trust, "snap/c1/s1/objects/0.bin", bytes.NewReader(data), int64(len(data)), batchsnap.CRC32C(data))
	require.NoError(t, err)
	infos, err := st.List(ctx, "snap/c1/")
	require.NoError(t, err)
	require.NotEmpty(t, infos)

	denied := func(t *testing.T, err error) {
		t.Helper()
		require.Error(t, err)
		require.Equal(t, "AccessDenied", minio.ToErrorResponse(err).Code, "%v", err)
	}
	w, err := srv.Client(id)
	require.NoError(t, err)
	t.Run("object outside the prefix", func(t *testing.T) {
		_, err := w.PutObject(ctx, "snapshots", "elsewhere/x", bytes.NewReader([]byte("x")), 1, minio.PutObjectOptions{})
		denied(t, err)
	})
	t.Run("another bucket", func(t *testing.T) {
		_, err := w.PutObject(ctx, "other", "snap/x", bytes.NewReader([]byte("x")), 1, minio.PutObjectOptions{})
		denied(t, err)
		_, err = w.StatObject(ctx, "other", "x/probe", minio.StatObjectOptions{})
		require.Error(t, err)
	})
	t.Run("bucket creation", func(t *testing.T) {
		denied(t, w.MakeBucket(ctx, "writer-made", minio.MakeBucketOptions{}))
	})
	t.Run("bucket policy", func(t *testing.T) {
		denied(t, w.SetBucketPolicy(ctx, "snapshots", ""))
	})
	t.Run("admin API", func(t *testing.T) {
		wsrv := *srv
		wsrv.AccessKey, wsrv.SecretKey = id.AccessKey, id.SecretKey
		_, err := wsrv.CreateWriter(ctx, "snapshots", "snap")
		require.Error(t, err)
	})
	t.Run("plain http is refused", func(t *testing.T) {
		plain := *srv
		plain.Endpoint, plain.CAFile = "http://"+srv.Endpoint[len("https://"):], ""
		pc, err := s3store.Config(&plain, "snapshots")
		require.NoError(t, err)
		pst, err := s3.New(pc)
		require.NoError(t, err)
		_, err = pst.List(ctx, "snap/")
		require.Error(t, err)
	})
	t.Run("an untrusted certificate is refused", func(t *testing.T) {
		other, err := pki.New(filepath.Join(dir, "other-ca"), "other")
		require.NoError(t, err)
		bad := *srv
		bad.CAFile = other.CAFile
		bc, err := s3store.Config(&bad, "snapshots")
		require.NoError(t, err)
		bst, err := s3.New(bc)
		require.NoError(t, err)
		_, err = bst.List(ctx, "snap/")
		require.ErrorContains(t, err, "certificate")
	})
}
