package state

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/impl/contract/batchsnap"
	"github.com/oplogha/oplogha/impl/contract/metadata"
)

// SnapshotChecker gives ObjectFromSnapshot's verdict on every entry, one
// scratch object reused across entries of different shapes.
func TestSnapshotCheckerAgreesWithObjectFromSnapshot(t *testing.T) {
	mem := metadata.ReplicaFields{ID: 1, Index: 0, Status: metadata.ReplicaComplete,
		Buffer: metadata.BufferDescriptor{Size: 8, BufferAddress: 64, Protocol: "tcp", TransportEndpoint: "10.0.0.1:1"}}
	disk := metadata.ReplicaFields{ID: 2, Index: 2, Status: metadata.ReplicaComplete, Disk: metadata.DiskDescriptor{FilePath: "/d/x", ObjectSize: 8}}
	entry := func(pinned batchsnap.Pinned, group string, reps ...metadata.ReplicaFields) batchsnap.ObjectEntry {
		return batchsnap.ObjectEntry{TenantID: "t", Key: "k", Metadata: batchsnap.ObjectMetadata{Size: 8, Replicas: reps, GroupID: group, HardPinned: pinned}}
	}
	badStatus, badIndex := mem, disk
	badStatus.Status = 9
	badIndex.Index = 7
	long := string(make([]byte, MaxKeyBytes+1))
	cases := []batchsnap.ObjectEntry{
		entry(batchsnap.PinnedTrue, "g", mem, disk),
		entry(batchsnap.PinnedUnset, ""),
		entry(batchsnap.PinnedFalse, "", disk),
		entry(batchsnap.Pinned(3), "", mem),
		entry(batchsnap.PinnedFalse, long, mem),
		entry(batchsnap.PinnedFalse, "", mem, badStatus),
		entry(batchsnap.PinnedFalse, "", badIndex),
		entry(batchsnap.PinnedTrue, "g", mem),
	}
	var c SnapshotChecker
	for i := range cases {
		_, _, want := ObjectFromSnapshot(&cases[i])
		got := c.Check(&cases[i])
		if want == nil {
			require.NoError(t, got, "case %d", i)
		} else {
			require.EqualError(t, got, want.Error(), "case %d", i)
		}
	}
}
