package s3server_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/harness/s3server"
)

// Lines as versitygw writes them (--access-log), the requester's key id
// replaced.
const accessLog = `log starts 2026-12-06 08:32:43.832634898 +0000 UTC m=+0.043350029
AKID bkt [06/December/2026:08:32:46 +0000] 127.0.0.1 AKID OOC8BY8BZYQ325BX s3_CreateBucket - /bkt/ 200 - 0 0 1 1 - MinIO (linux; amd64) minio-go/v7.4.1 - I9r9= SigV4 - AuthHeader s3.us-east-1.amazonaws.com - arn:aws:s3:::/bkt/ Yes
AKID bkt [06/December/2026:08:32:46 +0000] 127.0.0.1 AKID 5MLH6V4IS3OZ2LYF s3_PutObject root/batch-oplog/12-345/objects/0.bin /bkt/root/batch-oplog/12-345/objects/0.bin 200 - 0 5 2 2 - MinIO (linux; amd64) minio-go/v7.4.1 - zl1Z= SigV4 - AuthHeader s3.us-east-1.amazonaws.com - arn:aws:s3:::/bkt/root/batch-oplog/12-345/objects/0.bin Yes
AKID bkt [06/December/2026:08:32:46 +0000] 127.0.0.1 AKID 4Y4FMNIC2XMR9BR7 s3_DeleteObject root/batch-oplog/12-345/objects/0.bin /bkt/root/batch-oplog/12-345/objects/0.bin 204 - 0 0 2 2 - MinIO (linux; amd64) minio-go/v7.4.1 - 6dEz= SigV4 - AuthHeader s3.us-east-1.amazonaws.com - arn:aws:s3:::/bkt/root/batch-oplog/12-345/objects/0.bin Yes
`

// TestReadAccessLog: the requests under a prefix, with operation, key and
// status and never the requester; a cap that truncates; a malformed line
// stops the read with what came before; a missing log is fs.ErrNotExist.
func TestReadAccessLog(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "access-log.txt")
	require.NoError(t, os.WriteFile(path, []byte(accessLog), 0o644))
	under := func(key string) bool { return strings.HasPrefix(key, "root/") }
	reqs, truncated, err := s3server.ReadAccessLog(path, under, 10)
	require.NoError(t, err)
	require.False(t, truncated)
	at := time.Date(2026, 12, 6, 8, 32, 46, 0, time.UTC)
	require.Equal(t, []s3server.Request{
		{Op: "s3_PutObject", Key: "root/batch-oplog/12-345/objects/0.bin", Status: 200, At: at},
		{Op: "s3_DeleteObject", Key: "root/batch-oplog/12-345/objects/0.bin", Status: 204, At: at},
	}, reqs)

	reqs, truncated, err = s3server.ReadAccessLog(path, under, 1)
	require.NoError(t, err)
	require.True(t, truncated)
	require.Len(t, reqs, 1)

	require.NoError(t, os.WriteFile(path, []byte(accessLog+"AKID bkt [06/December/2026:08:32:47 +0000] 127.0.0.1 AKID X s3_PutObj"), 0o644))
	reqs, _, err = s3server.ReadAccessLog(path, under, 10)
	require.ErrorIs(t, err, s3server.ErrAccessLog)
	require.Len(t, reqs, 2)

	_, _, err = s3server.ReadAccessLog(filepath.Join(dir, "none.txt"), under, 10)
	require.True(t, errors.Is(err, fs.ErrNotExist), "%v", err)
}
