package master

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/impl/publish"
	"github.com/oplogha/oplogha/impl/state"
)

// snapshot_stalled is raised only when the OpLog has moved past latest and
// latest is older than snapshot_stall_multiplier intervals.
func TestSnapshotStalled(t *testing.T) {
	cfg := DefaultConfig()
	cfg.SnapshotIntervalSeconds, cfg.SnapshotStallMultiplier = 10, 3
	now := time.Now()
	m := &Master{cfg: cfg, started: now.Add(-time.Minute)}
	at := func(b uint64) state.Cursor { return state.Cursor{BatchID: b, Seq: b} }
	obs := func(p *publish.Pointer) publish.Observed {
		if p == nil {
			return publish.Observed{}
		}
		return publish.Observed{Latest: publish.Slot{Raw: []byte("x"), Pointer: p}}
	}
	for _, tc := range []struct {
		name string
		o    publish.Observed
		cur  state.Cursor
		want bool
		age  time.Duration
	}{
		{"old latest, history moved on", obs(pointerAt(100, now.Add(-31*time.Second))), at(150), true, 31 * time.Second},
		{"old latest, nothing new: quiet, not stalled", obs(pointerAt(100, now.Add(-31*time.Second))), at(100), false, 31 * time.Second},
		{"recent latest", obs(pointerAt(100, now.Add(-29*time.Second))), at(150), false, 29 * time.Second},
		{"no latest a minute after start with batches", obs(nil), at(5), true, time.Minute},
		{"no latest and no batches", obs(nil), at(0), false, time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, age := m.stalled(tc.o, tc.cur, now)
			require.Equal(t, tc.want, got)
			require.InDelta(t, tc.age.Seconds(), age.Seconds(), 0.01)
		})
	}
}
