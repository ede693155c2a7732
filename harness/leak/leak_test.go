package leak

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const secret = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b"

func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, body := range files {
		p := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	}
	return root
}

func TestScanFindsEachKindOfLeak(t *testing.T) {
	s, err := Hash([]string{secret})
	require.NoError(t, err)
	require.NotContains(t, s.Salt+s.Hashed[0].SHA256, secret)
	var n Needles
	n.Add("g0-c1-000042", "tenant key g0-c1-000042")
	n.Add("eyJzaXplIjoxMDI0fQ==", "payload of batch 7")
	n.Add("short", "never searched")
	require.Equal(t, 1, n.Skipped)

	clean := map[string]string{
		"meta.json":             `{"scenario":"smoke","sha256":"` + strings.Repeat("ab", 32) + `"}`,
		"history.jsonl":         `{"key":"g0-c1-000042"}`, // client data outside logs is the history itself
		"logs/masters/m-0.log":  `{"msg":"published","snapshot_id":"00000000000000000042-1a2b3c4d5e6f7081-0011223344556677"}`,
		"logs/etcd/etcd-0.log":  `{"msg":"apply request took too long","key":"/oplog/c/batches/00000000000000000007","value_size":412}`,
		"nodes/master-0.json":   `{"dump":[{"key":"g0-c1-000042"}]}`,
		"logs/masters/m-0.yaml": "etcd_password_file: /tmp/run/pki/master.password\n",
	}
	found, files, err := Scan(tree(t, clean), s, &n, "logs")
	require.NoError(t, err)
	require.Empty(t, found)
	require.Equal(t, len(clean), files)

	for name, c := range map[string]struct{ file, body, want string }{
		"secret in a log":             {"logs/masters/m-0.log", `{"msg":"s3 ready","secret":"` + secret + `"}`, "a secret of the run"},
		"secret inside a longer hex":  {"meta.json", `{"x":"00` + strings.ToUpper(secret) + `ff"}`, "a secret of the run"},
		"secret in the bundle itself": {"scenario.yaml", "password: x" + secret, "a secret of the run"},
		"private key":                 {"logs/s3/versitygw.log", "-----BEGIN EC PRIVATE KEY-----", "PEM private key"},
		"presigned URL": {"logs/masters/m-0.log",
			"GET /b/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AK%2F2026&X-Amz-Signature=0123456789abcdef0123", "presigned S3 URL"},
		"authorization header": {"logs/masters/m-0.log",
			"Authorization: AWS4-HMAC-SHA256 Credential=AK/20261203/us-east-1/s3/aws4_request", "Authorization header"},
		"tenant key in a process log": {"logs/masters/m-1.log", `{"msg":"put failed","object":"tenant-1/g0-c1-000042"}`, "tenant key g0-c1-000042"},
		"payload in a process log":    {"logs/etcd/etcd-1.log", `value:"eyJzaXplIjoxMDI0fQ=="`, "payload of batch 7"},
	} {
		t.Run(name, func(t *testing.T) {
			files := map[string]string{}
			for k, v := range clean {
				files[k] = v
			}
			files[c.file] = c.body
			found, _, err := Scan(tree(t, files), s, &n, "logs")
			require.NoError(t, err)
			require.Len(t, found, 1, "%v", found)
			require.Equal(t, c.file, found[0].File)
			require.Contains(t, found[0].What, c.want)
		})
	}
}

func TestHashRefusesASecretItCouldNotFind(t *testing.T) {
	_, err := Hash([]string{"not hex at all, a passphrase"})
	require.Error(t, err)
	_, err = Hash([]string{"abc123"})
	require.Error(t, err)
}
