package retention

import (
	"bytes"
	"net/url"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/impl/contract/batchsnap"
	"github.com/oplogha/oplogha/impl/objstore"
	"github.com/oplogha/oplogha/impl/snapshot"
	"github.com/oplogha/oplogha/tests/s3store"
)

// GC aborts an unfinished multipart upload a writer left under the
// snapshot prefix (its parts take space no object listing shows) once it is
// older than the grace period and belongs to a group below S_new; an upload
// newer than S_new (maybe in flight) stays.
func TestGCAbortsUnfinishedUploads(t *testing.T) {
	wd := newWorld(t)
	wd.published(4)
	sNew := wd.published(4)

	cfg, err := s3store.Config(wd.srv, "snapshots")
	require.NoError(t, err)
	u, err := url.Parse(cfg.Endpoint)
	require.NoError(t, err)
	core, err := minio.NewCore(u.Host, &minio.Options{Creds: credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""),
		BucketLookup: minio.BucketLookupPath, Transport: cfg.Transport})
	require.NoError(t, err)
	start := func(batch uint64) string {
		key := batchsnap.Artifacts(storePrefix, snapshot.NewID(batch, 0x99).String()).ObjectChunk(0)
		id, err := core.NewMultipartUpload(ctxT(t), "snapshots", key, minio.PutObjectOptions{})
		require.NoError(t, err)
		part := bytes.Repeat([]byte{7}, 5<<20)
		_, err = core.PutObjectPart(ctxT(t), "snapshots", key, id, 1, bytes.NewReader(part), int64(len(part)), minio.PutObjectPartOptions{})
		require.NoError(t, err)
		return key
	}
	stale := start(sNew.LastIncludedBatchID - 1)
	inFlight := start(sNew.LastIncludedBatchID + 10)

	o := opts(time.Minute)
	o.Now = func() time.Time { return time.Now().Add(time.Hour) }
	rep, err := wd.cycle(t, wd.st, o)
	require.NoError(t, err)
	require.Equal(t, 1, rep.UploadsAborted)

	ups, err := wd.st.(objstore.Uploads).ListUploads(ctxT(t), storePrefix+"/")
	require.NoError(t, err)
	var keys []string
	for _, up := range ups {
		keys = append(keys, up.Key)
	}
	require.NotContains(t, keys, stale, "the stale upload is aborted")
	require.Contains(t, keys, inFlight, "an upload newer than S_new stays")
}
