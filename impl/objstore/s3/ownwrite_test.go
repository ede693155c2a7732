package s3_test

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
	"net/http"
	"net/url"
	"testing"

	"github.com/oplogha/oplogha/impl/contract/batchsnap"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/harness/s3server"
	"github.com/oplogha/oplogha/impl/objstore"
	"github.com/oplogha/oplogha/impl/objstore/s3"
)

const partSize = 5 << 20

// requireStored checks that key holds exactly data.
func requireStored(t *testing.T, st *s3.Store, key string, data []byte) {
	t.Helper()
	got, n, err := objstore.ReadbackCRC(ctx(t), st, key)
	require.NoError(t, err)
	require.Equal(t, int64(len(data)), n)
	require.Equal(t, batchsnap.CRC32C(data), got)
}

// A create-only PUT whose reply is lost is retried by minio-go; the retry
// meets the object its own first attempt stored (412) and must not fail the
// put.
func TestLostPutReplyIsOwnWrite(t *testing.T) {
	srv := startVersity(t)
	const key = "c1/lost/single.bin"
	link := newLossyLink(putOf(key))
	st := newStore(t, srv, link, partSize)
	data := payload(64<<10, 1)
	err := st.PutIfAbsent(ctx(t), key, bytes.NewReader(data), int64(len(data)), batchsnap.CRC32C(data))
	require.Equal(t, []exchange{{Status: http.StatusOK, Dropped: true}, {Status: http.StatusPreconditionFailed}}, link.exchanges(),
		"the first PUT stored the object, its reply was lost, minio-go's retry met 412")
	require.NoError(t, err)
	requireStored(t, st, key, data)
}

// The same over multipart: the reply of CompleteMultipartUpload is lost and
// minio-go sends Complete again.
func TestLostCompleteReplyIsOwnWrite(t *testing.T) {
	srv := startVersity(t)
	const key = "c1/lost/multipart.bin"
	link := newLossyLink(completeOf(key))
	st := newStore(t, srv, link, partSize)
	data := payload(11<<20+7, 2)
	err := st.PutIfAbsent(ctx(t), key, bytes.NewReader(data), int64(len(data)), batchsnap.CRC32C(data))
	ex := link.exchanges()
	require.Len(t, ex, 2, "Complete was retried")
	require.Equal(t, exchange{Status: http.StatusOK, Dropped: true}, ex[0])
	t.Logf("versitygw answers the retried Complete with %d", ex[1].Status)
	require.NoError(t, err)
	requireStored(t, st, key, data)
}

// Complete refused (412) over an object with our size and full-object
// checksum is taken as our own write: a server that evaluates If-None-Match
// before it recognises a repeated Complete would answer a retried Complete
// so, where versitygw (above) answers 200.
func TestCompleteOverOwnBytesIsOwnWrite(t *testing.T) {
	srv := startVersity(t)
	const key = "c1/again/multipart.bin"
	link := newRecorder(completeOf(key))
	st := newStore(t, srv, link, partSize)
	data := payload(11<<20+7, 3)
	crc := batchsnap.CRC32C(data)
	require.NoError(t, newStore(t, srv, nil, partSize).PutIfAbsent(ctx(t), key, bytes.NewReader(data), int64(len(data)), crc))
	err := st.PutIfAbsent(ctx(t), key, bytes.NewReader(data), int64(len(data)), crc)
	require.Equal(t, []exchange{{Status: http.StatusPreconditionFailed}}, link.exchanges())
	require.NoError(t, err)
	requireStored(t, st, key, data)
	ups, err := rawCore(t, srv).ListMultipartUploads(ctx(t), bucket, "c1/again/", "", "", "", 1000)
	require.NoError(t, err)
	require.Empty(t, ups.Uploads, "the refused upload is aborted")
}

// Anything at the key that cannot be shown to be our bytes is a collision.
func TestCollisionWithOtherObjectFails(t *testing.T) {
	srv := startVersity(t)
	st := newStore(t, srv, nil, partSize)
	put := func(key string, data []byte) error {
		return st.PutIfAbsent(ctx(t), key, bytes.NewReader(data), int64(len(data)), batchsnap.CRC32C(data))
	}
	for name, c := range map[string]struct{ first, second []byte }{
		"single, same size other bytes":    {payload(4096, 10), payload(4096, 11)},
		"single, other size":               {payload(4096, 10), payload(4097, 10)},
		"multipart, same size other bytes": {payload(11<<20, 12), payload(11<<20, 13)},
		"multipart over a single object":   {payload(4096, 14), payload(11<<20, 14)},
	} {
		t.Run(name, func(t *testing.T) {
			key := "c1/collide/" + name
			require.NoError(t, put(key, c.first))
			require.ErrorIs(t, put(key, c.second), objstore.ErrExists)
			requireStored(t, st, key, c.first)
		})
	}
	t.Run("same bytes without a stored crc32c", func(t *testing.T) {
		// versitygw keeps the checksum the writer chose: an object put with
		// CRC32 (IEEE) has no CRC32C to compare, so it cannot be proven ours.
		key := "c1/collide/crc32-only"
		data := payload(4096, 15)
		opts := minio.PutObjectOptions{DisableContentSha256: true, DisableMultipart: true,
			UserMetadata: map[string]string{"x-amz-checksum-crc32": crc32Base64(data)}}
		_, err := rawCore(t, srv).PutObject(ctx(t), bucket, key, bytes.NewReader(data), int64(len(data)), "", "", opts)
		require.NoError(t, err)
		info, err := st.Head(ctx(t), key)
		require.NoError(t, err)
		require.Nil(t, info.CRC32C)
		require.ErrorIs(t, put(key, data), objstore.ErrExists)
	})
}

func crc32Base64(b []byte) string {
	var o [4]byte
	binary.BigEndian.PutUint32(o[:], crc32.ChecksumIEEE(b))
	return base64.StdEncoding.EncodeToString(o[:])
}

// rawCore is a minio client of srv for what the store does not do.
func rawCore(t *testing.T, srv *s3server.Server) *minio.Core {
	t.Helper()
	u, err := url.Parse(srv.Endpoint)
	require.NoError(t, err)
	c, err := minio.NewCore(u.Host, &minio.Options{Creds: credentials.NewStaticV4(srv.AccessKey, srv.SecretKey, ""),
		Region: "us-east-1", BucketLookup: minio.BucketLookupPath})
	require.NoError(t, err)
	return c
}
