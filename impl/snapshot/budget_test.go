package snapshot

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/impl/state"
)

// bigObjectsState holds n objects of about 128 KiB of metadata each: 32
// disk replicas with 4000-byte paths (a string may hold up to
// state.MaxKeyBytes).
func bigObjectsState(t testing.TB, n int) *state.State {
	t.Helper()
	s := state.New()
	var entries []state.Entry
	for i := range n {
		o := state.Object{Size: 1 << 20}
		for r := range 32 {
			o.Replicas = append(o.Replicas, state.Replica{ID: uint64(r), Kind: state.ReplicaDisk, Length: 1 << 20, Status: state.ReplicaComplete,
				FilePath: fmt.Sprintf("/mnt/%d/%d/", i, r) + strings.Repeat("p", 3980)})
		}
		entries = append(entries, state.PutEnd("t", fmt.Sprintf("key-%06d", i), o))
	}
	require.NoError(t, s.Apply(state.Batch{ID: 1, FirstSeq: 1, LastSeq: uint64(len(entries)), Entries: entries}))
	return s
}

// randomState holds n objects of every replica kind with strings of
// random lengths up to state.MaxKeyBytes, and segments of both kinds.
func randomState(t testing.TB, n int, seed uint64) *state.State {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	str := func() string { return strings.Repeat("s", r.IntN(3)*r.IntN(state.MaxKeyBytes+1)/2) }
	entries := []state.Entry{
		state.MountSegment(state.Segment{Endpoint: str() + "a", Name: str(), Capacity: 1 << 40, Kind: state.ReplicaMemory}),
		state.MountSegment(state.Segment{Endpoint: str() + "b", Name: str(), Capacity: 1 << 30, Kind: state.ReplicaDisk, FilePath: str()}),
	}
	for i := range n {
		o := state.Object{ClientID: state.UUID{First: r.Uint64(), Second: r.Uint64()}, Size: r.Uint64(), GroupID: str(),
			DataType: uint32(r.IntN(5)), HardPinned: r.IntN(2) == 0}
		for range r.IntN(6) {
			rep := state.Replica{ID: r.Uint64(), Length: r.Uint64(), Status: state.ReplicaComplete}
			switch r.IntN(5) {
			case 0:
				rep.Kind, rep.Segment, rep.Offset, rep.Protocol = state.ReplicaMemory, str(), r.Uint64(), str()
			case 1:
				rep.Kind, rep.Segment, rep.Offset, rep.Protocol = state.ReplicaNoF, str(), r.Uint64(), str()
			case 2:
				rep.Kind, rep.FilePath = state.ReplicaDisk, str()
			case 3:
				rep.Kind, rep.ClientID, rep.Segment = state.ReplicaLocalDisk, state.UUID{First: 1 + r.Uint64()}, str()
			case 4:
				rep.Kind, rep.FilePath, rep.Offset, rep.AlignedSize, rep.ShardIdx = state.ReplicaDFS, str(), r.Uint64(), r.Uint64(), r.Int32()
			}
			o.Replicas = append(o.Replicas, rep)
		}
		entries = append(entries, state.PutEnd(str(), fmt.Sprintf("k%d-", i)+str(), o))
	}
	s := state.New()
	require.NoError(t, s.Apply(state.Batch{ID: 1, FirstSeq: 1, LastSeq: uint64(len(entries)), Entries: entries}))
	return s
}

// TestEstimateBoundsThePayload: admission's payload estimate is not below
// what the encoder then writes, whatever the objects' sizes, and not far
// above it either (an estimate of twice the payload would refuse
// snapshots a disk has room for).
func TestEstimateBoundsThePayload(t *testing.T) {
	for _, c := range []struct {
		name  string
		s     *state.State
		chunk int
	}{
		{"empty", state.New(), 4},
		{"small objects", testState(t, 1000), 7},
		{"200 objects of 128 KiB", bigObjectsState(t, 200), 50},
		{"random 1", randomState(t, 300, 1), 1},
		{"random 2", randomState(t, 300, 2), 100},
		{"random 3", randomState(t, 300, 3), DefaultChunkObjects},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := prepare(t, c.s, "r", 1, c.chunk)
			est := EstimateFor(c.s.Footprint(), c.chunk)
			require.GreaterOrEqual(t, est.PayloadBytes, p.Layout.Size, "the estimate is below the payload written (%.2f×)",
				float64(p.Layout.Size)/float64(est.PayloadBytes))
			require.LessOrEqual(t, est.PayloadBytes, 2*p.Layout.Size+4096, "the estimate is %.2f× the payload", float64(est.PayloadBytes)/float64(p.Layout.Size))
			require.GreaterOrEqual(t, est.CaptureBytes, c.s.Footprint().StringBytes)
		})
	}
}

// TestEncoderStopsWhenTheDiskFills: admission found room, then something
// else filled the disk while the payload was written: the encoder stops
// with ErrDiskBudget and leaves no work file.
func TestEncoderStopsWhenTheDiskFills(t *testing.T) {
	s := bigObjectsState(t, 200) // about 25 MiB of payload: the free space is asked again every 8 MiB
	dir := t.TempDir()
	calls := 0
	budget := Budget{WorkDir: dir, freeBytes: func(string) (int64, error) {
		calls++
		if calls >= 3 {
			return diskReserveBytes - 1, nil
		}
		return 1 << 40, nil
	}}
	require.NoError(t, budget.Check(EstimateFor(s.Footprint(), 50)), "admission found room")
	_, err := Prepare(s.Capture(), PrepareSpec{Root: "r", ID: NewID(1, 1), WorkDir: dir, ChunkObjects: 50, CreatedAt: time.UnixMilli(1), Budget: budget})
	require.ErrorIs(t, err, ErrDiskBudget)
	require.Contains(t, err.Error(), "below the 268435456-byte reserve")
	require.Equal(t, 3, calls, "admission, then the encoder's first check, then its second after 8 MiB")
	left, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, left, "the work file is removed")

	// A free-space probe that fails stops the encoder too.
	budget.freeBytes = func(string) (int64, error) { return 0, errors.New("statfs: input/output error") }
	_, err = Prepare(s.Capture(), PrepareSpec{Root: "r", ID: NewID(1, 2), WorkDir: dir, ChunkObjects: 50, CreatedAt: time.UnixMilli(1), Budget: budget})
	require.ErrorIs(t, err, ErrDiskBudget)
}

// TestAdmissionRefusesWhatTheDiskCannotHold: the estimate of the big
// objects, not their count, is what the free space is held to.
func TestAdmissionRefusesWhatTheDiskCannotHold(t *testing.T) {
	s := bigObjectsState(t, 200)
	free := int64(diskReserveBytes + 8<<20) // room for 200 small objects, not for 25 MiB
	err := Budget{WorkDir: t.TempDir(), freeBytes: func(string) (int64, error) { return free, nil }}.Check(EstimateFor(s.Footprint(), 50))
	require.ErrorIs(t, err, ErrDiskBudget)
	require.Equal(t, "disk_budget", SkipReason(err))
}
