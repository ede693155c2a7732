package bench

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/oplogha/oplogha/harness/benchreport"
	"github.com/oplogha/oplogha/impl/contract/batchsnap"
	"github.com/oplogha/oplogha/impl/contract/keyspace"
	"github.com/oplogha/oplogha/impl/objstore"
	"github.com/oplogha/oplogha/impl/oplog"
	"github.com/oplogha/oplogha/impl/publish"
	"github.com/oplogha/oplogha/impl/snapshot"
	"github.com/oplogha/oplogha/impl/state"
)

// restoreLatest is a master's bootstrap from the latest pointer
// (master.bootstrap's first branch and master.restore): read the pointers,
// open the snapshot by exact keys holding every object to its size and
// CRC32C before decoding it, build the state, check every duplicated
// identity field. (The OpLog suffix is measured on its own:
// BenchmarkSuffixReplay.)
func restoreLatest(ctx context.Context, cli *clientv3.Client, ks keyspace.Keyspace, st objstore.Store) (*state.State, error) {
	o, err := publish.Observe(ctx, cli, ks)
	if err != nil {
		return nil, err
	}
	if !o.Latest.Valid() {
		return nil, fmt.Errorf("no valid latest pointer")
	}
	_, restored, _, err := snapshot.OpenState(ctx, st, *o.Latest.Pointer)
	return restored, err
}

// BenchmarkRecovery: bootstrap from latest at each size against a raw
// download of the same objects in the same order, each decoded by the
// format's decoder (no checksum held to, nothing built).
func BenchmarkRecovery(b *testing.B) {
	for _, n := range objectSizes() {
		b.Run("objects="+human(n), func(b *testing.B) {
			ctx := ctxB(b, 20*time.Minute)
			w := theWorld(b)
			pub := publishedFor(ctx, b, n)
			// A recovering master holds no other state: drop the source.
			dropStates()
			runtime.GC()
			raw := rawClient(b, w)
			t0 := time.Now()
			baseBusy := busyDuring(func() {
				if got := rawDownloadDecode(ctx, b, raw, w.bucket, pub.layout); got != uint64(n) {
					b.Fatalf("raw download + decode: %d objects, want %d", got, n)
				}
			})
			baseline := time.Since(t0)
			runtime.GC()
			b.ResetTimer()
			stopWatch := heapWatch()
			t1 := time.Now()
			var st *state.State
			busy := busyDuring(func() {
				var err error
				if st, err = restoreLatest(ctx, w.cli, pub.ks, w.store); err != nil {
					b.Fatal(err)
				}
			})
			took := time.Since(t1)
			b.StopTimer()
			before, peak := stopWatch()
			runtime.GC()
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			if objs, _ := st.Len(); objs != n {
				b.Fatalf("restored %d objects, want %d", objs, n)
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			record(b, benchreport.Figure{Group: "recovery", Name: fmt.Sprintf("bootstrap from latest at %s objects", human(n)),
				Value: took.Seconds(), Unit: "s", LowerIsBetter: true,
				Note: fmt.Sprintf("%.1f MiB payload read at %.0f MB/s; the restored state holds %.0f MiB of heap (%.0f bytes/object), "+
					"%.0f MiB at the peak of the restore; %d GC cycles in the process so far, %.2f s of GC pauses; "+
					"machine CPU busy (all processes, %d cores): bootstrap %v (no faster than %v here), raw download + decode %v",
					float64(pub.layout.Size)/(1<<20), float64(pub.layout.Size)/1e6/took.Seconds(), mib(after.HeapAlloc-before),
					float64(after.HeapAlloc-before)/float64(n), mib(peak-before), ms.NumGC, float64(ms.PauseTotalNs)/1e9,
					runtime.NumCPU(), busy.Round(10*time.Millisecond), cpuFloor(busy).Round(10*time.Millisecond), baseBusy.Round(10*time.Millisecond))}.
				WithBaseline("raw download + decode", baseline.Seconds()).
				WithTarget("≤ 1.5× raw download + decode", took.Seconds() <= 1.5*baseline.Seconds()))
			runtime.KeepAlive(st)
		})
	}
}

// rawDownloadDecode GETs every object of a snapshot in order with a plain
// minio-go client and decodes each with the format's decoders, checking
// nothing else and building nothing: the floor a bootstrap's read stands on.
// It returns the objects decoded.
func rawDownloadDecode(ctx context.Context, b *testing.B, raw *minio.Client, bucket string, l *snapshot.Layout) uint64 {
	var objects uint64
	var chunk batchsnap.ObjectChunk
	for _, part := range l.Parts() {
		obj, err := raw.GetObject(ctx, bucket, part.Key, minio.GetObjectOptions{})
		if err != nil {
			b.Fatal(err)
		}
		data, err := io.ReadAll(obj)
		obj.Close()
		if err != nil {
			b.Fatal(err)
		}
		if part.Name == batchsnap.SegmentsObject {
			if _, err := batchsnap.DecodeSegments(data); err != nil {
				b.Fatal(err)
			}
			continue
		}
		if err := batchsnap.DecodeObjectChunkInto(data, part.Index, part.Count, &chunk, nil); err != nil {
			b.Fatal(err)
		}
		objects += uint64(len(chunk.Objects))
	}
	return objects
}

// dropStates forgets the cached source states.
func dropStates() {
	states.Lock()
	defer states.Unlock()
	clear(states.m)
}

// BenchmarkSuffixReplay: replaying 10k batches from etcd into a state (read
// at one revision, decode, validate, apply) against reading the same keys
// with the same page size and doing nothing with them. On two shared cores
// one run moves by a third, so baseline and replay alternate for three
// rounds, each after a GC, and the medians are compared.
func BenchmarkSuffixReplay(b *testing.B) {
	const (
		batches = 10_000
		rounds  = 3
		page    = 256
	)
	ctx := ctxB(b, 20*time.Minute)
	w := theWorld(b)
	lw := oplogOf(ctx, b, w, "replay", batches)
	// The reader as the master configures it (fn applies, keeping nothing).
	r := &oplog.Reader{KV: w.cli, Keyspace: lw.ks, PageSize: page, ReuseBuffers: true}
	head, err := r.ReadHead(ctx)
	if err != nil {
		b.Fatal(err)
	}
	// The baseline: the same range, paged as the reader pages it.
	rawRead := func() time.Duration {
		t0 := time.Now()
		keys := 0
		from, end := lw.ks.Batch(2), lw.ks.Batch(uint64(batches)+1)
		for {
			resp, err := w.cli.Get(ctx, from, clientv3.WithRange(end), clientv3.WithRev(head.Revision), clientv3.WithLimit(page))
			if err != nil {
				b.Fatal(err)
			}
			keys += len(resp.Kvs)
			if !resp.More {
				break
			}
			from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
		}
		took := time.Since(t0)
		if keys != batches-1 {
			b.Fatalf("raw read %d keys, want %d", keys, batches-1)
		}
		return took
	}
	// Replay from the state after batch 1 (the segments), as a suffix after
	// a snapshot at batch 1 would be.
	var entries int
	replay := func() time.Duration {
		base := state.New()
		if err := r.ScanTo(ctx, state.Cursor{},
			oplog.Head{Prefix: oplog.DurablePrefix{BatchID: 1, LastSeq: synthSegments + 1}, Revision: head.Revision},
			base.Apply); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		var replayed int
		entries = 0
		t1 := time.Now()
		if err := r.ScanTo(ctx, base.Cursor(), head, func(bt state.Batch) error {
			replayed++
			entries += len(bt.Entries)
			return base.Apply(bt)
		}); err != nil {
			b.Fatal(err)
		}
		took := time.Since(t1)
		if base.Digest() != lw.want.Digest() || replayed != batches-1 {
			b.Fatalf("replayed %d batches to digest %v, want %d batches to %v", replayed, base.Digest(), batches-1, lw.want.Digest())
		}
		return took
	}
	b.ResetTimer()
	var raws, replays []time.Duration
	for range rounds {
		runtime.GC()
		raws = append(raws, rawRead())
		replays = append(replays, replay())
	}
	b.StopTimer()
	raw, took := median(raws), median(replays)
	bps := float64(batches-1) / took.Seconds()
	ratio := bps / (float64(batches-1) / raw.Seconds())
	record(b, benchreport.Figure{Group: "replay", Name: fmt.Sprintf("suffix replay of %dk batches", batches/1000), Value: bps, Unit: "batches/s",
		Note: fmt.Sprintf("%.0f entries/s (%d entries per batch); median of %d rounds %v, raw reads %v; the baseline "+
			"reads the same keys at the same page size (%d) and decodes nothing",
			float64(entries)/took.Seconds(), entriesPerBatch, rounds, replays, raws, page)}.
		WithBaseline("raw paged range read", float64(batches-1)/raw.Seconds()).
		WithTarget("≥ 0.5× raw paged range read", ratio >= 0.5))
	b.ReportMetric(bps, "batches/s")
	b.ReportMetric(float64(entries)/took.Seconds(), "entries/s")
}
