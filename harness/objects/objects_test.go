package objects

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/harness/s3server"
	"github.com/oplogha/oplogha/harness/s3server/s3servertest"
)

func ctxT(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

func read(t *testing.T, r Reader, key string) []byte {
	t.Helper()
	rc, size, err := r.GetObject(ctxT(t), key)
	require.NoError(t, err)
	defer rc.Close()
	data, err := io.ReadAll(rc)
	require.NoError(t, err)
	require.Equal(t, int64(len(data)), size)
	return data
}

// A local store lists the keys under a prefix in order, without uploads in
// flight, and gets each by key; a missing key is ErrNotFound.
func TestDirListsAndGets(t *testing.T) {
	root := t.TempDir()
	for k, v := range map[string]string{"snaps/c1/a/descriptor.json": "d", "snaps/c1/a/chunks/000000.bin": "chunk",
		"snaps/c10/b/x": "other cluster", "snaps/c1/a/.put-123": "in flight"} {
		p := filepath.Join(root, filepath.FromSlash(k))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(v), 0o644))
	}
	r := Dir(root)
	list, err := r.List(ctxT(t), "snaps/c1/")
	require.NoError(t, err)
	require.Equal(t, []Object{{Key: "snaps/c1/a/chunks/000000.bin", Size: 5}, {Key: "snaps/c1/a/descriptor.json", Size: 1}}, list)
	require.Equal(t, "chunk", string(read(t, r, "snaps/c1/a/chunks/000000.bin")))
	_, _, err = r.GetObject(ctxT(t), "snaps/c1/a/missing")
	require.ErrorIs(t, err, ErrNotFound)
	_, _, err = r.GetObject(ctxT(t), "../escape")
	require.Error(t, err)
	require.NoError(t, r.(Putter).PutObject(ctxT(t), "snaps/c2/objects/0.bin", []byte("placed")))
	require.Equal(t, "placed", string(read(t, r, "snaps/c2/objects/0.bin")))
	require.Error(t, r.(Putter).PutObject(ctxT(t), "../escape", nil))
	list, err = Dir(filepath.Join(root, "none")).List(ctxT(t), "")
	require.NoError(t, err)
	require.Empty(t, list, "a store nothing was written to yet lists nothing")
}

// Against a real S3 server (versitygw), a listing longer than one page
// (1000 keys) comes back whole and in order, and every object reads back
// with its size.
func TestS3ListsEveryPageAndGets(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	srv := s3servertest.Start(t, s3server.Versity)
	tr, err := srv.Transport()
	require.NoError(t, err)

	// Written by a plain minio-go client, not by anything under test.
	w, err := minio.New(srv.Endpoint[len("http://"):],
		&minio.Options{Creds: credentials.NewStaticV4(srv.AccessKey, srv.SecretKey, ""), Region: "us-east-1",
			BucketLookup: minio.BucketLookupPath, Transport: tr})
	require.NoError(t, err)
	require.NoError(t, w.MakeBucket(ctx, "snaps", minio.MakeBucketOptions{}))
	const n = 1005
	for i := range n {
		data := bytes.Repeat([]byte{byte(i)}, i%7+1)
		_, err := w.PutObject(ctx, "snaps", fmt.Sprintf("c1/s/chunks/%06d.bin", i), bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{})
		require.NoError(t, err)
	}
	_, err = w.PutObject(ctx, "snaps", "c10/other", bytes.NewReader([]byte("x")), 1, minio.PutObjectOptions{})
	require.NoError(t, err)

	r, err := S3(srv.Endpoint, "snaps", srv.AccessKey, srv.SecretKey, tr)
	require.NoError(t, err)
	list, err := r.List(ctx, "c1/")
	require.NoError(t, err)
	require.Len(t, list, n, "every page of the listing")
	for i, o := range list {
		require.Equal(t, fmt.Sprintf("c1/s/chunks/%06d.bin", i), o.Key)
		require.Equal(t, int64(i%7+1), o.Size)
	}
	require.Equal(t, bytes.Repeat([]byte{byte(12)}, 12%7+1), read(t, r, "c1/s/chunks/000012.bin"))
	_, _, err = r.GetObject(ctx, "c1/s/missing")
	require.True(t, errors.Is(err, ErrNotFound), "missing key: %v", err)

	// The harness places an object through the server's own API.
	require.NoError(t, r.(Putter).PutObject(ctx, "c1/t/objects/0.bin", []byte("placed")))
	require.Equal(t, []byte("placed"), read(t, r, "c1/t/objects/0.bin"))
}
