package bench

import (
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/oplogha/oplogha/impl/state"
)

// Synthetic metadata shaped like a Mooncake master's: keys of a few tens of
// bytes under a handful of tenants, one memory replica per object and a
// disk replica on every fourth, spread over 16 segments.
const synthSegments = 16

func synthSegment(i int) state.Segment {
	return state.Segment{Endpoint: fmt.Sprintf("10.0.%d.%d:7000", i/8, i%8), Name: fmt.Sprintf("seg-%02d", i), Capacity: 1 << 50, Kind: state.ReplicaMemory}
}

func synthDisk() state.Segment {
	return state.Segment{Endpoint: "10.9.0.1:7000", Name: "ssd", Capacity: 1 << 50, Kind: state.ReplicaDisk, FilePath: "/mnt/ssd/mooncake"}
}

// synthKey is the i-th key in ascending order: the same width for every i.
func synthKey(buf []byte, i int) []byte {
	buf = append(buf[:0], "llm/model-7b/layer-"...)
	buf = strconv.AppendInt(buf, int64(i/1_000_000%100+100), 10)
	buf = append(buf, "/kv-"...)
	buf = strconv.AppendInt(buf, int64(i%1_000_000+10_000_000), 10)
	return buf
}

func synthObject(i int) state.Object {
	seg := synthSegment(i % synthSegments)
	reps := []state.Replica{{ID: uint64(i)*2 + 1, Kind: state.ReplicaMemory, Segment: seg.Endpoint,
		Offset: uint64(i) * 65536, Length: 65536, Status: state.ReplicaComplete}}
	if i%4 == 0 {
		reps = append(reps, state.Replica{ID: uint64(i)*2 + 2, Kind: state.ReplicaNoF, Segment: synthDisk().Endpoint,
			Offset: uint64(i) * 65536, Length: 65536, Status: state.ReplicaComplete})
	}
	return state.Object{ClientID: state.UUID{Second: uint64(i % 8)}, Size: 65536, Replicas: reps}
}

// synthTenant: objects are split into tenants by index range (ascending).
func synthTenant(i, n int) string { return "tenant-" + strconv.Itoa(i*4/max(n, 1)) }

// buildState builds an n-object state through state.Builder, as a snapshot
// decode would.
func buildState(tb testing.TB, n int) *state.State {
	tb.Helper()
	b := state.NewBuilder()
	for i := range synthSegments {
		if err := b.AddSegment(synthSegment(i)); err != nil {
			tb.Fatal(err)
		}
	}
	if err := b.AddSegment(synthDisk()); err != nil {
		tb.Fatal(err)
	}
	var buf []byte
	for i := range n {
		buf = synthKey(buf, i)
		if err := b.AddObject(state.ObjectKey{Tenant: synthTenant(i, n), Key: string(buf)}, synthObject(i)); err != nil {
			tb.Fatal(err)
		}
	}
	st, err := b.Finish(state.Cursor{BatchID: 1, Seq: uint64(n) + synthSegments + 1})
	if err != nil {
		tb.Fatal(err)
	}
	return st
}

// states caches one built state per size for the benchmarks of a process:
// building 10M objects costs tens of seconds.
var states struct {
	sync.Mutex
	m map[int]*state.State
}

func cachedState(tb testing.TB, n int) *state.State {
	states.Lock()
	defer states.Unlock()
	if states.m == nil {
		states.m = map[int]*state.State{}
	}
	if st, ok := states.m[n]; ok {
		return st
	}
	// Only one big state at a time: drop smaller ones first.
	for k := range states.m {
		delete(states.m, k)
	}
	st := buildState(tb, n)
	states.m[n] = st
	return st
}
