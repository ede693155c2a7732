package bench

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/oplogha/oplogha/harness/benchreport"
	"github.com/oplogha/oplogha/impl/state"
)

// BenchmarkCapture: the capture critical section (a copy-on-write fork of
// the state, O(1)) against a full clone of the same state (every object
// deep-copied into a map: the RFC's accepted 2× copy).
func BenchmarkCapture(b *testing.B) {
	for _, n := range objectSizes() {
		b.Run("objects="+human(n), func(b *testing.B) {
			st := cachedState(b, n)
			runtime.GC()
			const rounds = 2000
			lat := make([]time.Duration, 0, rounds)
			b.ResetTimer()
			for range b.N {
				lat = lat[:0]
				for range rounds {
					t0 := time.Now()
					c := st.Capture()
					lat = append(lat, time.Since(t0))
					runtime.KeepAlive(c)
				}
			}
			b.StopTimer()
			slices.Sort(lat)
			p50, p99 := lat[len(lat)/2], lat[len(lat)*99/100]
			clone := fullClone(st)
			name := fmt.Sprintf("capture at %s objects (p50)", human(n))
			f := benchreport.Figure{Group: "capture", Name: name, Value: p50.Seconds(), Unit: "s", LowerIsBetter: true,
				Note: fmt.Sprintf("p99 %v, max %v over %d captures; the baseline is one full clone", p99, lat[len(lat)-1], rounds)}.
				WithBaseline("full clone", clone.Seconds())
			if n >= 10_000_000 {
				f = f.WithTarget("< 1 ms", p99 < time.Millisecond)
			}
			record(b, f)
		})
	}
}

// fullClone deep-copies every object and segment of st into maps and
// returns how long it took.
func fullClone(st *state.State) time.Duration {
	objs, segs := st.Len()
	t0 := time.Now()
	om := make(map[state.ObjectKey]state.Object, objs)
	sm := make(map[string]state.Segment, segs)
	st.Objects(func(k state.ObjectKey, o state.Object) bool { om[k] = o; return true })
	st.Segments(func(s state.Segment) bool { sm[s.Endpoint] = s; return true })
	d := time.Since(t0)
	runtime.KeepAlive(om)
	runtime.KeepAlive(sm)
	return d
}
