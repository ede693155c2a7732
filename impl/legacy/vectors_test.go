package legacy_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/impl/legacy"
	"github.com/oplogha/oplogha/impl/objstore/localdir"
	"github.com/oplogha/oplogha/impl/state"
)

// vectors are the golden legacy snapshots upstream's own code wrote
// (testdata/upstream/README.md), each with the expected.json of what
// upstream's decoder recovered from it.
const vectors = "testdata/upstream"

var vectorNames = []string{"empty", "small", "many", "draining"}

func source(root string) legacy.Source {
	return legacy.Source{Store: &localdir.Store{Root: root}}
}

func readVectorExpected(t *testing.T, name string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(vectors, name, "expected.json"))
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m))
	return m
}

func readVector(t *testing.T, name string) (*legacy.Snapshot, string, *legacy.File) {
	t.Helper()
	src := source(filepath.Join(vectors, name))
	id, latest, err := src.LatestFile(context.Background(), "mooncake_cluster")
	require.NoError(t, err)
	snap, err := src.Read(context.Background(), "mooncake_cluster", id)
	require.NoError(t, err)
	return snap, id, &latest
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
			snap, id, latest := readVector(t, name)
			got := asJSON(t, legacy.Inspect("mooncake_cluster", snap, id, latest))
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

// Every vector but draining imports, and the state holds exactly the
// decoded objects: each by tenant and key bytes (key_hex), with its size,
// client, pins and group, and each replica on its segment's endpoint at
// its address less the segment's base, with its length, id and status;
// each segment by endpoint with its name and capacity. The comparison reads
// expected.json, not the reader's own view.
func TestVectorsImportExactlyWhatUpstreamDecodes(t *testing.T) {
	status := map[string]state.ReplicaStatus{"UNDEFINED": state.ReplicaUndefined, "INITIALIZED": state.ReplicaInitialized, "PROCESSING": state.ReplicaProcessing,
		"COMPLETE": state.ReplicaComplete, "REMOVED": state.ReplicaRemoved, "FAILED": state.ReplicaFailed}
	for _, name := range []string{"empty", "small", "many"} {
		t.Run(name, func(t *testing.T) {
			exp := readVectorExpected(t, name)
			src := source(filepath.Join(vectors, name))
			snap, err := src.Open(context.Background(), "mooncake_cluster", exp["snapshot_id"].(string))
			require.NoError(t, err)
			dec := exp["decoded"].(map[string]any)
			segs := dec["segments"].([]any)
			objs := dec["objects"].([]any)
			n, s := snap.State.Len()
			require.Equal(t, len(objs), n)
			require.Equal(t, len(segs), s)
			require.Equal(t, legacy.ImportCursor(0), snap.State.Cursor(), "descriptor seq 0: batch 1 seq 1")
			base := map[string]uint64{}
			for _, x := range segs {
				sg := x.(map[string]any)
				got, ok := snap.State.Segment(sg["endpoint"].(string))
				require.True(t, ok, "segment %v", sg["endpoint"])
				require.Equal(t, state.Segment{Endpoint: sg["endpoint"].(string), Name: sg["name"].(string),
					Capacity: uint64(sg["capacity"].(float64)), Kind: state.ReplicaMemory}, got)
				base[sg["endpoint"].(string)] = uint64(sg["base"].(float64))
			}
			for _, x := range objs {
				o := x.(map[string]any)
				key, err := hex.DecodeString(o["key_hex"].(string))
				require.NoError(t, err)
				got, ok := snap.State.Object(o["tenant"].(string), string(key))
				require.True(t, ok, "object %v/%v", o["tenant"], o["key"])
				cid, err := state.ParseUUID(o["client_id"].(string))
				require.NoError(t, err)
				want := state.Object{ClientID: cid, Size: uint64(o["size"].(float64)), GroupID: o["group_id"].(string),
					DataType: uint32(o["data_type"].(float64)), HardPinned: o["hard_pinned"].(bool)}
				for _, y := range o["replicas"].([]any) {
					r := y.(map[string]any)
					require.Equal(t, "MEMORY", r["type"])
					ep := r["endpoint"].(string)
					want.Replicas = append(want.Replicas, state.Replica{ID: uint64(r["id"].(float64)), Kind: state.ReplicaMemory, Segment: ep,
						Offset: uint64(r["address"].(float64)) - base[ep], Length: uint64(r["length"].(float64)), Status: status[r["status"].(string)]})
				}
				require.Equal(t, want, got)
			}
		})
	}
}

// draining: upstream's decoder drops the four objects with a replica on the
// DRAINING segment (and its full restore then fails, starting empty). This
// importer refuses the snapshot rather than import the other two: see the
// package doc.
func TestDrainingVectorIsRefused(t *testing.T) {
	src := source(filepath.Join(vectors, "draining"))
	snap, err := src.Read(context.Background(), "mooncake_cluster", "20260101_000000_005")
	require.NoError(t, err, "the snapshot reads")
	require.Len(t, snap.Decoded.Skipped, 4)
	require.Len(t, snap.Decoded.Objects, 2)
	snap, err = src.Open(context.Background(), "mooncake_cluster", "20260101_000000_005")
	require.ErrorIs(t, err, legacy.ErrNotImportable)
	require.ErrorContains(t, err, "drops 4 of the 6 objects written")
	require.ErrorContains(t, err, "segment drain:2 (6804376087003398175-4127) is DRAINING")
	require.Nil(t, snap)
}
