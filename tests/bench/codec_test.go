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

	"github.com/OneOfOne/xxhash"

	"github.com/oplogha/oplogha/harness/benchreport"
	"github.com/oplogha/oplogha/impl/contract/batchsnap"
	"github.com/oplogha/oplogha/impl/oplog"
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
		reps[0] = state.Replica{ID: uint64(i)*2 + 1, Kind: state.ReplicaMemory, Segment: segs[i%synthSegments],
			Offset: uint64(i) * 65536, Length: 65536, Status: state.ReplicaComplete}
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
// process of its own: the peak RSS is the process's high-water mark. Then
// the OpLog's batch record codec in MB/s (benchmarkBatchRecords).
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
			keys := batchsnap.Artifacts("snapshots/codec", snapshot.NewID(1, 1).String())
			l, err := snapshot.Encode(synthetic{n}, f, keys, snapshot.DefaultChunkObjects, nil)
			if err != nil {
				b.Fatal(err)
			}
			enc := time.Since(t0)
			t1 := time.Now()
			if err := snapshot.CheckFile(f, l); err != nil {
				b.Fatal(err)
			}
			dec := time.Since(t1)
			if l.Objects != uint64(n) {
				b.Fatalf("encoded %d objects, want %d", l.Objects, n)
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
			fig := benchreport.Figure{Group: "codec", Name: fmt.Sprintf("peak RSS, encode+decode of %s objects", human(n)),
				Value: rss, Unit: "MiB", LowerIsBetter: true, Note: note}
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
	// The OpLog's batch records last: the peak RSS above is the process's
	// high-water mark, and theirs is not the snapshot codec's.
	b.Run("batch-records", benchmarkBatchRecords)
}

// benchmarkBatchRecords: the OpLog's batch record codec (upstream's JSON
// record, XXH32, base64 struct_pack payloads) on the records a primary
// writes and a standby replays (the SuffixReplay shape: 16 PUT_END entries
// each), in MB/s of records: oplog.EncodeBatch (the writer's, with its
// checks) and oplog.DecodeBatch (the reader's, checksum and shape checks
// included; payloads stay struct_pack). The baseline is XXH32 alone over
// the same bytes, which both must compute. Figures are medians of 5 passes
// over 2000 records.
func benchmarkBatchRecords(b *testing.B) {
	const records, passes = 2000, 5
	batches := make([]state.Batch, records)
	recs := make([][]byte, records)
	var size int64
	obj := 0
	for i := range batches {
		bt := state.Batch{ID: uint64(i) + 2, FirstSeq: uint64(i*entriesPerBatch) + 1, LastSeq: uint64((i + 1) * entriesPerBatch)}
		for range entriesPerBatch {
			bt.Entries = append(bt.Entries, state.PutEnd(synthTenant(0, 1), fmt.Sprintf("replay/%08d", obj), synthObject(obj)))
			obj++
		}
		rec, err := oplog.EncodeBatch(bt)
		if err != nil {
			b.Fatal(err)
		}
		batches[i], recs[i] = bt, rec
		size += int64(len(rec))
	}
	encode := func() {
		for _, bt := range batches {
			if _, err := oplog.EncodeBatch(bt); err != nil {
				b.Fatal(err)
			}
		}
	}
	decode := func() {
		for _, rec := range recs {
			if _, err := oplog.DecodeBatch(rec); err != nil {
				b.Fatal(err)
			}
		}
	}
	var sink uint32
	checksum := func() {
		for _, rec := range recs {
			sink += xxhash.Checksum32S(rec, 0)
		}
	}
	// rate is MB/s of records for the median of passes runs of fn, plus
	// the runs the benchmark loop made.
	rate := func(b *testing.B, fn func()) float64 {
		var took []time.Duration
		b.SetBytes(size)
		for b.Loop() {
			t := time.Now()
			fn()
			took = append(took, time.Since(t))
		}
		for len(took) < passes {
			t := time.Now()
			fn()
			took = append(took, time.Since(t))
		}
		return float64(size) / 1e6 / median(took).Seconds()
	}
	var xxh, enc, dec float64
	b.Run("xxh32", func(b *testing.B) { xxh = rate(b, checksum) })
	b.Run("encode", func(b *testing.B) { enc = rate(b, encode) })
	b.Run("decode", func(b *testing.B) { dec = rate(b, decode) })
	runtime.KeepAlive(sink)
	note := fmt.Sprintf("%d records of %d PUT_END entries, %.0f bytes each; median of %d passes", records, entriesPerBatch, float64(size)/records, passes)
	record(b, benchreport.Figure{Group: "codec", Name: "batch record encode", Value: enc, Unit: "MB/s",
		Note: note + "; oplog.EncodeBatch, the writer's checks included"}.
		WithBaseline("XXH32 alone", xxh))
	record(b, benchreport.Figure{Group: "codec", Name: "batch record decode", Value: dec, Unit: "MB/s",
		Note: note + "; oplog.DecodeBatch, checksum and shape checks included, payloads left struct_pack"}.
		WithBaseline("XXH32 alone", xxh))
}
