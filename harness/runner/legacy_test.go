package runner

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/impl/contract/legacysnap"
)

const legacyFixtures = "../../fixtures/legacy"

func readExpectJSON(t *testing.T, name string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(legacyFixtures, name, "expect.json"))
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m))
	return m
}

// A fixture's base is what its files hold, read through the contract, with
// the digest its expect.json gives; an older snapshot named explicitly
// takes the digest expect.json gives it.
func TestLegacyBaseOfFixtures(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"small", "empty", "zero-cursor"} {
		t.Run(name, func(t *testing.T) {
			exp := readExpectJSON(t, name)
			b, err := readLegacyBase(ctx, "fixtures/legacy/"+name, filepath.Join(legacyFixtures, name), "mooncake_cluster", "")
			require.NoError(t, err)
			require.Equal(t, exp["snapshot_id"], b.LegacySnapshotID)
			require.Equal(t, exp["state_digest"], b.Digest)
			require.Equal(t, exp["last_included_seq"], float64(b.LegacySeq))
			require.Equal(t, exp["objects"], float64(len(b.Objects)))
			require.Equal(t, exp["segments"], float64(b.Segments))
			for i := 1; i < len(b.Objects); i++ {
				p, o := b.Objects[i-1], b.Objects[i]
				require.True(t, p.Tenant < o.Tenant || (p.Tenant == o.Tenant && p.Key < o.Key), "objects in (tenant, key) order")
			}
			for _, o := range b.Objects {
				require.NotZero(t, o.Size)
				require.NotEmpty(t, o.Tenant)
			}
		})
	}
	exp := readExpectJSON(t, "small")
	older := exp["older"].([]any)[0].(map[string]any)
	b, err := readLegacyBase(ctx, "fixtures/legacy/small", filepath.Join(legacyFixtures, "small"), "mooncake_cluster", older["snapshot_id"].(string))
	require.NoError(t, err)
	require.Equal(t, older["state_digest"], b.Digest)
	require.Len(t, b.Objects, int(older["objects"].(float64)))
}

// A root the harness cannot judge an import of is refused with the reason:
// a broken snapshot, one upstream's decoder drops objects of, one without
// an expected digest, one whose counts contradict expect.json.
func TestLegacyBaseRefusals(t *testing.T) {
	ctx := context.Background()
	_, err := readLegacyBase(ctx, "truncated", filepath.Join(legacyFixtures, "truncated"), "mooncake_cluster", "")
	require.ErrorIs(t, err, legacysnap.ErrTruncated)
	_, err = readLegacyBase(ctx, "draining", filepath.Join(legacyFixtures, "draining"), "mooncake_cluster", "")
	require.ErrorContains(t, err, "upstream's decoder drops")
	_, err = readLegacyBase(ctx, "small", filepath.Join(legacyFixtures, "small"), "other_cluster", "")
	require.ErrorIs(t, err, legacysnap.ErrNotFound)

	// the small fixture without its expect.json, then with a wrong count
	root := t.TempDir()
	require.NoError(t, os.CopyFS(root, os.DirFS(filepath.Join(legacyFixtures, "small"))))
	require.NoError(t, os.Remove(filepath.Join(root, "expect.json")))
	_, err = readLegacyBase(ctx, "copy", root, "mooncake_cluster", "")
	require.ErrorContains(t, err, "expect.json")
	exp := readExpectJSON(t, "small")
	exp["objects"] = exp["objects"].(float64) + 1
	data, err := json.Marshal(exp)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, "expect.json"), data, 0o644))
	_, err = readLegacyBase(ctx, "copy", root, "mooncake_cluster", "")
	require.ErrorContains(t, err, "expect.json says 241")
	delete(exp, "state_digest")
	exp["objects"] = exp["objects"].(float64) - 1
	data, err = json.Marshal(exp)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, "expect.json"), data, 0o644))
	_, err = readLegacyBase(ctx, "copy", root, "mooncake_cluster", "")
	require.ErrorContains(t, err, "no state digest")
}

// The getter is confined to the root: a key leaving it reads nothing.
func TestRootGetterStaysInTheRoot(t *testing.T) {
	dir, err := os.OpenRoot(filepath.Join(legacyFixtures, "small"))
	require.NoError(t, err)
	defer dir.Close()
	_, err = rootGetter{dir}.Get(context.Background(), "../empty/expect.json")
	require.Error(t, err)
	rc, err := rootGetter{dir}.Get(context.Background(), "expect.json")
	require.NoError(t, err)
	require.NoError(t, rc.Close())
}
