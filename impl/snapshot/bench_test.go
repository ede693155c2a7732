package snapshot

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/oplogha/oplogha/impl/state"
)

// synthetic is a state generated on the fly: n objects, never held in memory.
type synthetic struct{ n int }

func (s synthetic) Cursor() state.Cursor { return state.Cursor{BatchID: 1, Seq: uint64(s.n) + 1} }
func (s synthetic) Len() (int, int)      { return s.n, 1 }
func (s synthetic) Segments(yield func(state.Segment) bool) {
	yield(state.Segment{Endpoint: "10.0.0.1:7000", Name: "seg", Capacity: 1 << 62, Kind: state.ReplicaMemory})
}
func (s synthetic) Objects(yield func(state.ObjectKey, state.Object) bool) {
	reps := []state.Replica{{ID: 1, Kind: state.ReplicaMemory, Segment: "10.0.0.1:7000", Length: 4096, Status: state.ReplicaComplete}}
	o := state.Object{ClientID: "client-0", Size: 4096, Replicas: reps}
	key := []byte("key-000000000000")
	for i := 0; i < s.n; i++ {
		v := i
		for j := len(key) - 1; j >= 4; j-- {
			key[j] = byte('0' + v%10)
			v /= 10
		}
		reps[0].Offset = uint64(i) * 4096
		if !yield(state.ObjectKey{Tenant: "t", Key: string(key)}, o) {
			return
		}
	}
}

// peakRSS is the process's high-water resident set (VmHWM), in MiB.
func peakRSS() float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			return kb / 1024
		}
	}
	return -1
}

func benchSizes() []int {
	spec := os.Getenv("OPLOGHA_BENCH_OBJECTS") // e.g. "10000000,300000000"
	if spec == "" {
		spec = "1000000,10000000"
	}
	var out []int
	for _, p := range strings.Split(spec, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(p)); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	return out
}

// BenchmarkCodecStream encodes a synthetic state to a temp file and
// decode-validates it, reporting objects/s, bytes/object and the peak RSS,
// which must stay flat as the object count grows.
func BenchmarkCodecStream(b *testing.B) {
	for _, n := range benchSizes() {
		b.Run(fmt.Sprintf("objects=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			for i := 0; i < b.N; i++ {
				f, err := os.Create(filepath.Join(dir, "payload"))
				if err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				l, err := Encode(synthetic{n}, f, DefaultChunkObjects)
				if err != nil {
					b.Fatal(err)
				}
				enc := time.Since(start)
				if _, err := f.Seek(0, 0); err != nil {
					b.Fatal(err)
				}
				start = time.Now()
				_, st, err := Decode(bufio.NewReaderSize(f, 1<<20), Visitor{})
				if err != nil {
					b.Fatal(err)
				}
				dec := time.Since(start)
				f.Close()
				os.Remove(f.Name())
				if st.Objects != uint64(n) {
					b.Fatalf("decoded %d objects, want %d", st.Objects, n)
				}
				runtime.GC()
				b.ReportMetric(float64(n)/enc.Seconds(), "enc-objects/s")
				b.ReportMetric(float64(n)/dec.Seconds(), "dec-objects/s")
				b.ReportMetric(float64(l.Size)/float64(n), "bytes/object")
				b.ReportMetric(peakRSS(), "peak-RSS-MiB")
			}
		})
	}
}
