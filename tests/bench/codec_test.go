package bench

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

	"github.com/oplogha/oplogha/harness/benchreport"
	"github.com/oplogha/oplogha/impl/snapshot"
	"github.com/oplogha/oplogha/impl/state"
)

// synthetic is a state generated on the fly, never held in memory: the
// codec's own cost and footprint, whatever the object count.
type synthetic struct{ n int }

func (s synthetic) Cursor() state.Cursor {
	return state.Cursor{BatchID: 1, Seq: uint64(s.n) + synthSegments + 2}
}
func (s synthetic) Len() (int, int) { return s.n, synthSegments + 1 }
func (s synthetic) Segments(yield func(state.Segment) bool) {
	for i := range synthSegments {
		if !yield(synthSegment(i)) {
			return
		}
	}
	yield(synthDisk())
}

func (s synthetic) Objects(yield func(state.ObjectKey, state.Object) bool) {
	segs := make([]string, synthSegments)
	for i := range segs {
		segs[i] = synthSegment(i).Endpoint
	}
	disk := synthDisk().Endpoint
	clients := make([]state.UUID, 8)
	for i := range clients {
		clients[i] = state.UUID{Second: uint64(i)}
	}
	reps := make([]state.Replica, 2)
	var key []byte
	for i := range s.n {
		// Keys ascend for any n: tenant by range, then a fixed-width index.
		key = append(key[:0], "llm/model-7b/kv-"...)
		key = strconv.AppendInt(key, int64(i)+1_000_000_000_000, 10)
		reps[0] = state.Replica{ID: uint64(i)*2 + 1, Kind: state.ReplicaMemory, Segment: segs[i%synthSegments], Offset: uint64(i) * 65536, Length: 65536, Status: state.ReplicaComplete}
		o := state.Object{ClientID: clients[i%8], Size: 65536, Replicas: reps[:1]}
		if i%4 == 0 {
			reps[1] = state.Replica{ID: uint64(i)*2 + 2, Kind: state.ReplicaNoF, Segment: disk, Offset: uint64(i) * 65536, Length: 65536, Status: state.ReplicaComplete}
			o.Replicas = reps[:2]
		}
		if !yield(state.ObjectKey{Tenant: synthTenant(i, s.n), Key: string(key)}, o) {
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

// BenchmarkCodec streams a synthetic state through the chunked encoder to
// a file and decode-validates it, at each size of
// OPLOGHA_BENCH_CODEC_OBJECTS (default 1M and 300M): objects/s,
// bytes/object and the process's peak RSS, which must stay flat as the
// object count grows. The smallest size is the baseline. Run it in a
// process of its own: the peak RSS is the process's high-water mark.
func BenchmarkCodec(b *testing.B) {
	var baseRSS float64
	var baseName string
	for i, n := range sizes("OPLOGHA_BENCH_CODEC_OBJECTS", "1000000,300000000") {
		b.Run("objects="+human(n), func(b *testing.B) {
			dir := b.TempDir()
			f, err := os.Create(filepath.Join(dir, "payload"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			t0 := time.Now()
			l, err := snapshot.Encode(synthetic{n}, f, snapshot.DefaultChunkObjects)
			if err != nil {
				b.Fatal(err)
			}
			enc := time.Since(t0)
			if _, err := f.Seek(0, 0); err != nil {
				b.Fatal(err)
			}
			t1 := time.Now()
			_, st, err := snapshot.Decode(bufio.NewReaderSize(f, 1<<20), snapshot.Visitor{})
			if err != nil {
				b.Fatal(err)
			}
			dec := time.Since(t1)
			if st.Objects != uint64(n) {
				b.Fatalf("decoded %d objects, want %d", st.Objects, n)
			}
			os.Remove(f.Name())
			rss := peakRSS()
			perObj := float64(l.Size) / float64(n)
			encRate, decRate := float64(n)/enc.Seconds(), float64(n)/dec.Seconds()
			b.ReportMetric(encRate, "enc-objects/s")
			b.ReportMetric(decRate, "dec-objects/s")
			b.ReportMetric(perObj, "bytes/object")
			b.ReportMetric(rss, "peak-RSS-MiB")
			note := fmt.Sprintf("encode %.2fM objects/s (%.0f MB/s), decode-validate %.2fM objects/s (%.0f MB/s), %.1f bytes/object, %.1f GiB payload",
				encRate/1e6, float64(l.Size)/1e6/enc.Seconds(), decRate/1e6, float64(l.Size)/1e6/dec.Seconds(), perObj, float64(l.Size)/(1<<30))
			fig := benchreport.Figure{Group: "codec", Name: fmt.Sprintf("peak RSS, encode+decode of %s objects", human(n)), Value: rss, Unit: "MiB", LowerIsBetter: true, Note: note}
			if i == 0 {
				baseRSS, baseName = rss, fmt.Sprintf("peak RSS at %s objects", human(n))
			} else {
				fig = fig.WithBaseline(baseName, baseRSS)
			}
			if n >= 300_000_000 {
				fig = fig.WithTarget("< 1 GiB", rss < 1024)
			}
			record(b, fig)
			runtime.GC()
		})
	}
}
