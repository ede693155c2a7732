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
// (impl/contract/testdata/upstream/legacy/README.md), each with the
// expected.json of what upstream's decoder recovered from it. That the
// contract's reader decodes them exactly so is legacysnap's test; these
// test the import.
const vectors = "../contract/testdata/upstream/legacy"

var vectorNames = []string{"empty", "small", "many", "draining"}

// Inspect gives each vector's "decoded" exactly (the contract's view) and
// the verdict: imported whole, but for draining.
func TestInspectVectors(t *testing.T) {
	for _, name := range vectorNames {
		t.Run(name, func(t *testing.T) {
			exp := readVectorExpected(t, name)
			src := source(filepath.Join(vectors, name))
			id, latest, err := src.LatestFile(context.Background(), "mooncake_cluster")
			require.NoError(t, err)
			snap, err := src.Read(context.Background(), "mooncake_cluster", id)
			require.NoError(t, err)
			in := legacy.Inspect("mooncake_cluster", snap, id, &latest)
			data, err := json.Marshal(in)
			require.NoError(t, err)
			var got map[string]any
			require.NoError(t, json.Unmarshal(data, &got))
			require.Equal(t, exp["decoded"], got["decoded"])
			require.Equal(t, exp["files"], got["files"])
			if name == "draining" {
				require.Equal(t, "refused", in.Import.Outcome)
				return
			}
			require.Equal(t, "ok", in.Import.Outcome, in.Import.Error)
			require.Equal(t, len(snap.Decoded.Objects), in.Import.Objects)
		})
	}
}

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
