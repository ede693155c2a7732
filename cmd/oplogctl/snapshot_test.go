package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// snapshotVectors is the snapshot directory upstream's writer wrote, with
// expected.json.
const snapshotVectors = "../../impl/contract/testdata/upstream/snapshot/directory"

func decodeJSON(t *testing.T, data []byte) map[string]any {
	t.Helper()
	var v map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&v))
	return v
}

// TestSnapshotInspectJSONEqualsExpected: on each variant of upstream's
// snapshot directory, --json is expected.json (the common members, and the
// variant's descriptor, manifest and files).
func TestSnapshotInspectJSONEqualsExpected(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(snapshotVectors, "expected.json"))
	require.NoError(t, err)
	exp := decodeJSON(t, raw)
	for name, vv := range exp["variants"].(map[string]any) {
		variant := vv.(map[string]any)
		out, errOut, code := oplogctl(t, "snapshot", "inspect", filepath.Join(snapshotVectors, name), "--root", "snapshots", "--id", "42-7", "--json")
		require.Equal(t, 0, code, errOut)
		want := map[string]any{}
		for k, v := range exp {
			if k != "variants" {
				want[k] = v
			}
		}
		for _, k := range []string{"descriptor", "manifest", "files"} {
			want[k] = variant[k]
		}
		wj, _ := json.Marshal(want)
		gj, _ := json.Marshal(decodeJSON(t, []byte(out)))
		require.JSONEq(t, string(wj), string(gj), name)
	}
}

// TestSnapshotInspectNamesTheDamage: a copy of the snapshot with one chunk
// damaged is reported with every object's state and the object at fault
// (exit 1); a bad id is a usage error (exit 2).
func TestSnapshotInspectNamesTheDamage(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(snapshotVectors, "ndebug")
	require.NoError(t, filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o755))
		return os.WriteFile(filepath.Join(dir, rel), data, 0o644)
	}))
	chunk := filepath.Join(dir, "snapshots/batch-oplog/42-7/objects/1.bin")
	data, err := os.ReadFile(chunk)
	require.NoError(t, err)
	data[100] ^= 1
	require.NoError(t, os.WriteFile(chunk, data, 0o644))
	out, _, code := oplogctl(t, "snapshot", "inspect", dir, "--descriptor", "snapshots/batch-oplog/42-7/descriptor.json")
	require.Equal(t, 1, code)
	require.Contains(t, out, "objects/0.bin")
	require.Contains(t, out, "objects/1.bin                              347  9f15265d  not verified")
	require.Contains(t, out, "FAIL: object chunk 1: snapshot object size or CRC32C mismatch: snapshots/batch-oplog/42-7/objects/1.bin has CRC32C")
	_, errOut, code := oplogctl(t, "snapshot", "inspect", dir, "--root", "snapshots", "--id", "00042-7")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--id: malformed snapshot id")
	_, errOut, code = oplogctl(t, "snapshot", "inspect", dir)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "name the snapshot once")
}
