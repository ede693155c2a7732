package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// vectors are the legacy snapshots upstream's own code wrote, each with the
// expected.json of what upstream's decoder recovered from it.
const vectors = "../../impl/contract/testdata/upstream/legacy"

func oplogctl(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, &out, &errOut)
	return out.String(), errOut.String(), code
}

// tree is every file under dir with its digest.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			out[p+"/"] = "dir"
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		out[p] = hex.EncodeToString(sum[:])
		return nil
	}))
	return out
}

// inspect --json on each vector prints exactly what upstream's decoder
// recovered — every field of expected.json the files determine, with its
// name and shape — plus the import verdict; the snapshot is refused for
// draining only; nothing under the directory changes.
func TestLegacyInspectJSONMatchesUpstream(t *testing.T) {
	for _, name := range []string{"empty", "small", "many", "draining"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(vectors, name)
			data, err := os.ReadFile(filepath.Join(dir, "expected.json"))
			require.NoError(t, err)
			var exp map[string]any
			require.NoError(t, json.Unmarshal(data, &exp))
			before := tree(t, dir)

			stdout, stderr, code := oplogctl(t, "legacy", "inspect", dir, "--json")
			var got map[string]any
			require.NoError(t, json.Unmarshal([]byte(stdout), &got), "stdout: %.500s\nstderr: %s", stdout, stderr)
			for k := range got {
				if k != "import" {
					require.Contains(t, exp, k, "a field expected.json does not have")
				}
			}
			for _, k := range []string{"cluster_id", "snapshot_id", "latest_txt", "manifest_txt", "descriptor_txt", "files", "written_but_not_decoded"} {
				require.Equal(t, exp[k], got[k], k)
			}
			ed, gd := exp["decoded"].(map[string]any), got["decoded"].(map[string]any)
			require.Len(t, gd, len(ed))
			for k := range ed {
				require.Equal(t, ed[k], gd[k], "decoded.%s", k)
			}
			imp := got["import"].(map[string]any)
			if name == "draining" {
				require.Equal(t, 1, code)
				require.Equal(t, "refused", imp["outcome"])
				require.Contains(t, stderr, "legacy snapshot not importable")
			} else {
				require.Equal(t, 0, code, stderr)
				require.Equal(t, "ok", imp["outcome"])
				require.EqualValues(t, len(ed["objects"].([]any)), imp["objects"])
				require.EqualValues(t, len(ed["segments"].([]any)), imp["segments"])
			}
			require.Equal(t, before, tree(t, dir), "inspect wrote nothing")
		})
	}
}

// The text report names the segments, every object with its replicas, what
// upstream's decoder drops and why, what stays behind, and the verdict.
func TestLegacyInspectText(t *testing.T) {
	out, _, code := oplogctl(t, "legacy", "inspect", filepath.Join(vectors, "small"))
	require.Equal(t, 0, code)
	for _, want := range []string{
		"legacy snapshot 20260101_000000_002 of cluster mooncake_cluster",
		"node-a:12345  name node-a:12345  id 6804376087003398145-4097  client 13915559898621411329-8193  base " +
			"0x300000000  capacity 16777216  used 1343746  status OK",
		`"tenant-a" "été"  777 bytes  shard 833`,
		"replica 10 COMPLETE MEMORY on node-b:12346 at 0x40004d001, 777 bytes",
		"tasks: 1 (copy and move tasks",
		"import: ok: 11 objects on 2 segments, at batch 1 seq 1",
	} {
		require.Contains(t, out, want)
	}
	out, _, code = oplogctl(t, "legacy", "inspect", "--cluster-id", "mooncake_cluster", filepath.Join(vectors, "draining"))
	require.Equal(t, 1, code)
	require.Contains(t, out, `"default" "d-3": memory replica on a segment whose status is not OK (drain:2)`)
	require.Contains(t, out, "drain:2  name drain:2  id 6804376087003398175-4127  client 13915559898621411359-8223  "+
		"base 0x400000000  capacity 16777216  used -  status DRAINING")
	require.Contains(t, out, "import: REFUSED: 20260101_000000_005: legacy snapshot not importable: upstream's decoder drops 4 of the 6 objects written")

	// An older snapshot by id, and a damaged one: the error names the file.
	out, _, code = oplogctl(t, "legacy", "inspect", "../../fixtures/legacy/small", "--snapshot", "20260620_142012_007")
	require.Equal(t, 0, code)
	require.Contains(t, out, "import: ok: 120 objects on 2 segments, at batch 1 seq 4100")
	// Disk, local-disk and DFS replicas are listed with their fields, and imported.
	out, _, code = oplogctl(t, "legacy", "inspect", "../../fixtures/legacy/offloaded")
	require.Equal(t, 0, code, out)
	for _, want := range []string{
		"COMPLETE DISK in /mnt/mooncake-disk/tenant-b/legacy/0008/obj-00001, ",
		"PROCESSING LOCAL_DISK on client 2008-1 (10.0.8.1:17000), ",
		"COMPLETE DFS in /dfs/mooncake/legacy/0008/obj-00006 at offset 12582912 (aligned ",
		"import: ok: 48 objects on 2 segments, at batch 1 seq 2600",
	} {
		require.Contains(t, out, want)
	}
	require.NotContains(t, out, "REFUSED")
	_, stderr, code := oplogctl(t, "legacy", "inspect", "../../fixtures/legacy/truncated")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "legacy snapshot truncated: ")
	require.Contains(t, stderr, "mooncake_master_snapshot/mooncake_cluster/20260620_143012_007/metadata")
}

// A wrong command line says what is wrong and exits 2, before reading
// anything.
func TestUsageErrors(t *testing.T) {
	dir := filepath.Join(vectors, "small")
	for _, c := range []struct {
		args []string
		says string
	}{
		{nil, "usage: oplogctl"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"legacy"}, "want a subcommand: inspect"},
		{[]string{"legacy", "import", dir}, `unknown subcommand "import"`},
		{[]string{"legacy", "inspect"}, "want one DIR"},
		{[]string{"legacy", "inspect", dir, dir}, "got 2 arguments"},
		{[]string{"legacy", "inspect", dir, "--yaml"}, "flag provided but not defined: -yaml"},
		{[]string{"legacy", "inspect", filepath.Join(dir, "expected.json")}, "is not a directory"},
		{[]string{"legacy", "inspect", dir, "--snapshot", "latest"}, "--snapshot: legacy snapshot id malformed"},
		{[]string{"reset"}, "want a subcommand: check, delete or new-namespace"},
		{[]string{"reset", "check", "--etcd", "http://127.0.0.1:1"}, "--cluster-id"},
		{[]string{"reset", "check", "--cluster-id", "c1", "--timeout", "0s"}, "--timeout 0s: want > 0"},
	} {
		stdout, stderr, code := oplogctl(t, c.args...)
		require.Equal(t, 2, code, "%q: %s%s", c.args, stdout, stderr)
		require.Contains(t, stderr, c.says, "%q", c.args)
		require.Empty(t, stdout, "%q", c.args)
	}
	out, _, code := oplogctl(t, "help")
	require.Equal(t, 0, code)
	require.True(t, strings.HasPrefix(out, "usage: oplogctl"))
	out, _, code = oplogctl(t, "legacy", "inspect", "-h")
	require.Equal(t, 0, code)
	require.Contains(t, out, "-json")
}
