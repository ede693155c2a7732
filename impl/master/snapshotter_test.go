package master

import (
	"strings"
	"testing"
	"time"

	"github.com/oplogha/oplogha/impl/contract/batchsnap"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/impl/oplog"
	"github.com/oplogha/oplogha/impl/publish"
	"github.com/oplogha/oplogha/impl/snapshot"
	"github.com/oplogha/oplogha/impl/state"
)

func TestLagAdmissionAtTheBoundary(t *testing.T) {
	for _, tc := range []struct {
		lag  uint64
		want bool
	}{{0, true}, {999, true}, {1000, true}, {1001, false}} {
		lag, ok := lagAdmits(5000+tc.lag, 5000, 1000)
		require.Equal(t, tc.lag, lag)
		require.Equal(t, tc.want, ok, "lag %d", tc.lag)
	}
	lag, ok := lagAdmits(10, 12, 1000)
	require.Zero(t, lag, "a cursor ahead of a stale prefix read is no lag")
	require.True(t, ok)
}

func pointerAt(batch uint64, created time.Time) *publish.Pointer {
	id := snapshot.NewID(batch, 1)
	return &publish.Pointer{PointerSchemaVersion: publish.PointerSchemaVersion, SnapshotID: id.String(), LastIncludedBatchID: batch, LastIncludedSeq: batch,
		ProducerViewVersion: 1, DescriptorKey: batchsnap.Artifacts("p", id.String()).Descriptor(), DescriptorSize: 1, CreatedAtMS: created.UnixMilli()}
}

func TestSchedulerTriggers(t *testing.T) {
	cfg := DefaultConfig()
	cfg.SnapshotIntervalSeconds, cfg.SnapshotMinAdvanceBatches, cfg.MaxUncompactedBatches = 60, 10, 500
	cfg.EnableOplogPruning = true
	m := &Master{cfg: cfg}
	noPrune := cfg
	noPrune.EnableOplogPruning = false
	head := func(b uint64) oplog.Head {
		return oplog.Head{Prefix: oplog.DurablePrefix{BatchID: b, LastSeq: b}, Present: true}
	}
	at := func(b uint64) state.Cursor { return state.Cursor{BatchID: b, Seq: b} }
	fresh, old := time.Now(), time.Now().Add(-2*time.Minute)
	obs := func(p *publish.Pointer) publish.Observed {
		if p == nil {
			return publish.Observed{}
		}
		return publish.Observed{Latest: publish.Slot{Raw: []byte("x"), Pointer: p}}
	}
	cases := []struct {
		name   string
		o      publish.Observed
		cur    state.Cursor
		head   oplog.Head
		floor  uint64
		want   bool
		reason string
	}{
		{"empty cluster: nothing to snapshot", obs(nil), at(0), head(0), 0, false, "empty"},
		{"first snapshot once a batch exists", obs(nil), at(1), head(1), 0, true, "no_latest"},
		{"interval and advance both met", obs(pointerAt(100, old)), at(110), head(110), 0, true, "interval"},
		{"interval met, advance short", obs(pointerAt(100, old)), at(109), head(109), 0, false, "min_advance"},
		{"advance met, interval not", obs(pointerAt(100, fresh)), at(200), head(200), 0, false, "interval"},
		{"capacity bypasses the interval", obs(pointerAt(100, fresh)), at(101), head(700), 100, true, "capacity"},
		{"capacity without pruning waits for the interval", obs(pointerAt(100, fresh)), at(200), head(700), 0, false, "interval"},
		{"capacity still needs one new batch", obs(pointerAt(100, fresh)), at(100), head(700), 0, false, "no_advance"},
		{"nothing newer than latest", obs(pointerAt(100, old)), at(100), head(100), 0, false, "no_advance"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mm := m
			if strings.HasPrefix(tc.name, "capacity without pruning") {
				mm = &Master{cfg: noPrune}
			}
			ok, why := mm.due(tc.o, tc.cur, tc.head, tc.floor)
			require.Equal(t, tc.want, ok)
			require.Equal(t, tc.reason, why)
		})
	}
}

// TestSnapshotBackoff: failures in a row double the wait from one tick up
// to the bound; a fresh backoff is due at once.
func TestSnapshotBackoff(t *testing.T) {
	var b backoff
	now := time.Unix(1000, 0)
	require.True(t, b.due(now))
	tick, limit := 250*time.Millisecond, 5*time.Second
	var got []time.Duration
	for range 7 {
		got = append(got, b.failed(now, tick, limit))
	}
	require.Equal(t, []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second,
		5 * time.Second, 5 * time.Second}, got)
	require.False(t, b.due(now.Add(4*time.Second)))
	require.True(t, b.due(now.Add(5*time.Second)))
	require.Equal(t, 8*time.Second, maxSnapshotBackoff(time.Second))
	require.Equal(t, 5*time.Second, maxSnapshotBackoff(200*time.Millisecond))
	require.Equal(t, 5*time.Minute, maxSnapshotBackoff(time.Hour))
}
