package legacysnap_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/impl/contract/legacysnap"
)

func readVectorExpected(t *testing.T, name string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(vectors, name, "expected.json"))
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m))
	return m
}

// asJSON round-trips v through JSON into generic values, as expected.json
// is read.
func asJSON(t *testing.T, v any) map[string]any {
	t.Helper()
	data, err := json.Marshal(v)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m))
	return m
}

// The reader decodes each vector to exactly what upstream's decoder
// recovered: every field of "decoded" (segments with their allocator's
// count, tasks, local-disk state, every object and replica) and the objects
// upstream writes but drops ("written_but_not_decoded"), with the files'
// sizes and digests.
func TestVectorsDecodeAsUpstream(t *testing.T) {
	for _, name := range vectorNames {
		t.Run(name, func(t *testing.T) {
			exp := readVectorExpected(t, name)
			src := source(filepath.Join(vectors, name))
			id, latest, err := src.LatestFile(context.Background(), "mooncake_cluster")
			require.NoError(t, err)
			snap, err := src.Read(context.Background(), "mooncake_cluster", id)
			require.NoError(t, err)
			got := asJSON(t, legacysnap.NewView("mooncake_cluster", snap, id, &latest))
			for _, k := range []string{"cluster_id", "snapshot_id", "latest_txt", "manifest_txt", "descriptor_txt", "files", "written_but_not_decoded"} {
				require.Equal(t, exp[k], got[k], k)
			}
			// decoded, field by field, so that a difference names its place.
			ed, gd := exp["decoded"].(map[string]any), got["decoded"].(map[string]any)
			require.ElementsMatch(t, keys(ed), keys(gd))
			for k := range ed {
				if k != "objects" {
					require.Equal(t, ed[k], gd[k], "decoded.%s", k)
				}
			}
			eo, gobj := ed["objects"].([]any), gd["objects"].([]any)
			require.Len(t, gobj, len(eo))
			for i := range eo {
				require.Equal(t, eo[i], gobj[i], "decoded.objects[%d]", i)
			}
		})
	}
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// draining: upstream's decoder drops the four objects with a replica on the
// DRAINING segment and keeps two; the reader records the four with the
// reason, and counts the segment's allocator as upstream leaves it.
func TestDrainingVectorDecodesAsUpstream(t *testing.T) {
	snap, err := source(filepath.Join(vectors, "draining")).Read(context.Background(), "mooncake_cluster", "20260101_000000_005")
	require.NoError(t, err)
	require.Len(t, snap.Decoded.Skipped, 4)
	require.Len(t, snap.Decoded.Objects, 2)
	for _, s := range snap.Decoded.Skipped {
		require.Equal(t, legacysnap.SkipSegmentNotOK, s.Reason)
	}
}
