package s3_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/harness/s3server"
	"github.com/oplogha/oplogha/harness/s3server/s3servertest"
	"github.com/oplogha/oplogha/impl/objstore"
	"github.com/oplogha/oplogha/impl/objstore/s3"
)

// begin starts a multipart upload of key with one part, as a writer that
// died before Complete leaves it.
func begin(t *testing.T, core *minio.Core, key string) string {
	t.Helper()
	id, err := core.NewMultipartUpload(ctx(t), bucket, key, minio.PutObjectOptions{})
	require.NoError(t, err)
	data := payload(1000, 1)
	_, err = core.PutObjectPart(ctx(t), bucket, key, id, 1, bytes.NewReader(data), int64(len(data)), minio.PutObjectPartOptions{})
	require.NoError(t, err)
	return id
}

func TestUploadsListAndAbort(t *testing.T) {
	srv := startVersity(t)
	st := newStore(t, srv, nil, partSize)
	core := rawCore(t, srv)
	ups, err := st.ListUploads(ctx(t), "")
	require.NoError(t, err)
	require.Empty(t, ups)

	// S3 times are whole seconds.
	before := time.Now().Truncate(time.Second)
	const key = "gc/c1/snap/chunks/000000.bin"
	id := begin(t, core, key)
	otherID := begin(t, core, "gc0/c1/x.bin") // shares the prefix's text, not its folder
	thirdID := begin(t, core, "elsewhere/y.bin")
	after := time.Now()

	ups, err = st.ListUploads(ctx(t), "gc/")
	require.NoError(t, err)
	require.Len(t, ups, 1, "only the upload under the prefix")
	require.Equal(t, key, ups[0].Key)
	require.Equal(t, id, ups[0].UploadID)
	require.False(t, ups[0].Initiated.Before(before), "initiated %v, upload began after %v", ups[0].Initiated, before)
	require.False(t, ups[0].Initiated.After(after), "initiated %v, listed at %v", ups[0].Initiated, after)

	require.NoError(t, st.AbortUpload(ctx(t), key, id))
	ups, err = st.ListUploads(ctx(t), "gc/")
	require.NoError(t, err)
	require.Empty(t, ups)
	require.NoError(t, st.AbortUpload(ctx(t), key, id), "aborting an upload that is gone is not an error")
	require.NoError(t, st.AbortUpload(ctx(t), "gc/never", "6f0c6a4e-1e0f-4a4b-9d51-5a2f3c1d0e9b"))

	ups, err = st.ListUploads(ctx(t), "")
	require.NoError(t, err)
	require.ElementsMatch(t, []string{otherID, thirdID}, uploadIDs(ups), "the others are untouched")
}

// Listing goes on past the first page, and a GC pass that aborts what it
// lists until nothing is left ends with every upload gone, even where
// versitygw cannot continue a page inside one key's uploads.
func TestUploadsPaging(t *testing.T) {
	srv := startVersity(t)
	st := newStore(t, srv, nil, partSize)
	s3.SetUploadPage(st, 2)
	core := rawCore(t, srv)
	var all []string
	for _, k := range []string{"p/a", "p/b", "p/b", "p/c", "p/d", "p/e"} {
		all = append(all, begin(t, core, k))
	}
	var aborted []string
	for round := 1; ; round++ {
		require.LessOrEqual(t, round, 3, "uploads keep coming back")
		ups, err := st.ListUploads(ctx(t), "p/")
		require.NoError(t, err)
		if len(ups) == 0 {
			break
		}
		ids := uploadIDs(ups)
		require.ElementsMatch(t, ids, uniq(ids), "an upload is listed once")
		if round == 1 {
			require.GreaterOrEqual(t, len(ups), 5, "the listing went past the first page")
		}
		t.Logf("round %d lists %d uploads", round, len(ups))
		for _, u := range ups {
			require.NoError(t, st.AbortUpload(ctx(t), u.Key, u.UploadID))
		}
		aborted = append(aborted, ids...)
	}
	require.ElementsMatch(t, all, aborted)
}

// gofakes3 answers NoSuchUpload for a bucket that has never had an upload.
func TestUploadsOnGofakes3(t *testing.T) {
	srv := s3servertest.Start(t, s3server.FakeS3)
	st := newStore(t, srv, nil, partSize)
	ups, err := st.ListUploads(ctx(t), "")
	require.NoError(t, err)
	require.Empty(t, ups)
	id := begin(t, rawCore(t, srv), "gc/x")
	ups, err = st.ListUploads(ctx(t), "gc/")
	require.NoError(t, err)
	require.Equal(t, []string{id}, uploadIDs(ups))
	require.NoError(t, st.AbortUpload(ctx(t), "gc/x", id))
	require.NoError(t, st.AbortUpload(ctx(t), "gc/x", id))
}

func uploadIDs(ups []objstore.Upload) []string {
	var ids []string
	for _, u := range ups {
		ids = append(ids, u.UploadID)
	}
	return ids
}

func uniq(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}
