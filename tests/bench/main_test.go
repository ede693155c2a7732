// Package bench measures the reference implementation against the physical
// baselines it should approach, each baseline measured in the same process
// as its figure, on the real parts: an etcd process built from go.mod and
// versitygw as the S3 server. Every benchmark records its figures through
// harness/benchreport; `make bench` runs each group in its own process (so
// peak-RSS readings and GC heaps do not leak between groups) and renders
// artifacts/bench/results.md.
//
// Sizes come from OPLOGHA_BENCH_OBJECTS (default 1000000,10000000) and
// OPLOGHA_BENCH_CODEC_OBJECTS (default 1000000,300000000).
package bench

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/oplogha/oplogha/harness/benchreport"
	"github.com/oplogha/oplogha/harness/bin"
	"github.com/oplogha/oplogha/harness/cluster"
	"github.com/oplogha/oplogha/harness/etcd"
	"github.com/oplogha/oplogha/harness/proc"
	"github.com/oplogha/oplogha/harness/s3server"
	"github.com/oplogha/oplogha/impl/contract/keyspace"
	"github.com/oplogha/oplogha/impl/objstore"
	"github.com/oplogha/oplogha/impl/objstore/s3"
	"github.com/oplogha/oplogha/tests/s3store"
)

// group holds every process the benchmarks start, and worldDir their data;
// TestMain stops the one and removes the other. (A benchmark's TempDir
// would go with the first benchmark that started the world.)
var (
	group    = proc.NewGroup()
	worldDir string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if err := group.Close(10 * time.Second); err != nil {
		fmt.Fprintln(os.Stderr, "bench: stopping processes:", err)
		code = max(code, 1)
	}
	if worldDir != "" {
		os.RemoveAll(worldDir)
	}
	os.Exit(code)
}

// sizes parses a comma-separated object-count list from env, or def.
func sizes(env, def string) []int {
	spec := os.Getenv(env)
	if spec == "" {
		spec = def
	}
	var out []int
	for _, p := range strings.Split(spec, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(p)); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	return out
}

func objectSizes() []int { return sizes("OPLOGHA_BENCH_OBJECTS", "1000000,10000000") }

// human names an object count: 1M, 10M, 300M, 2500.
func human(n int) string {
	if n >= 1_000_000 && n%1_000_000 == 0 {
		return fmt.Sprintf("%dM", n/1_000_000)
	}
	if n >= 1000 && n%1000 == 0 {
		return fmt.Sprintf("%dk", n/1000)
	}
	return strconv.Itoa(n)
}

// record reports a figure to the benchmark output and the figures file.
func record(b *testing.B, f benchreport.Figure) {
	b.Helper()
	if f.Ratio != 0 {
		b.ReportMetric(f.Ratio, "ratio:"+strings.ReplaceAll(f.Name, " ", "_"))
	}
	if err := benchreport.Record(f); err != nil {
		b.Fatal(err)
	}
	line := fmt.Sprintf("%-44s %14s", f.Name, benchreport.FormatValue(f.Value, f.Unit))
	if f.Baseline != "" {
		line += fmt.Sprintf("  vs %s %s = %.3g×", f.Baseline, benchreport.FormatValue(f.BaselineValue, f.Unit), f.Ratio)
	}
	if f.Met != nil {
		line += fmt.Sprintf("  target %s met=%v", f.Target, *f.Met)
	}
	if f.Note != "" {
		line += "\n\t" + f.Note
	}
	b.Log(line)
}

// world is one etcd process and one versitygw, shared by the benchmarks of
// one process.
type world struct {
	cli      *clientv3.Client
	store    *s3.Store
	trust    objstore.Trust
	endpoint string
	access   string
	secret   string
	bucket   string
	cache    *bin.Cache
}

var (
	worldOnce sync.Once
	worldVal  *world
	worldErr  error
)

func ctxB(b *testing.B, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	b.Cleanup(cancel)
	return ctx
}

// theWorld starts (once per process) etcd and versitygw.
func theWorld(b *testing.B) *world {
	b.Helper()
	worldOnce.Do(func() {
		if worldDir, worldErr = os.MkdirTemp("", "oplogha-bench-*"); worldErr == nil {
			worldVal, worldErr = startWorld(worldDir)
		}
	})
	if worldErr != nil {
		b.Fatal(worldErr)
	}
	return worldVal
}

func startWorld(dir string) (*world, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cache, err := bin.NewCache("../..", os.Stderr)
	if err != nil {
		return nil, err
	}
	etcdBin, err := cache.Path(ctx, "etcd")
	if err != nil {
		return nil, err
	}
	gwBin, err := cache.Path(ctx, s3server.Versity)
	if err != nil {
		return nil, err
	}
	cluster, err := etcd.Start(ctx, group, etcd.Options{Members: 1, Binary: etcdBin.Path, Dir: dir + "/etcd", QuotaBytes: 4 << 30})
	if err != nil {
		return nil, err
	}
	cli, err := cluster.Client(nil)
	if err != nil {
		return nil, err
	}
	srv, err := s3server.Start(ctx, group, s3server.Versity, gwBin.Path, dir+"/s3")
	if err != nil {
		return nil, err
	}
	w := &world{cli: cli, endpoint: srv.Endpoint, access: srv.AccessKey, secret: srv.SecretKey, bucket: "snapshots", cache: cache}
	if w.store, w.trust, err = s3store.Open(ctx, srv, w.bucket, 0, "_probe/checksum"); err != nil {
		return nil, err
	}
	return w, nil
}

// namespace returns a fresh cluster namespace per use, so benchmarks never
// see each other's keys.
var nsCount struct {
	sync.Mutex
	n int
}

func freshKeyspace(prefix string) keyspace.Keyspace {
	nsCount.Lock()
	defer nsCount.Unlock()
	nsCount.n++
	return keyspace.Must(fmt.Sprintf("%s-%d-%d", prefix, os.Getpid(), nsCount.n))
}

// heapWatch samples the bytes of heap objects (runtime/metrics, no
// stop-the-world) every 2 ms from a forced GC until stop, which returns the
// live heap at the start and the peak seen.
func heapWatch() (stop func() (before, peak uint64)) {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	before := read()
	peak := before
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			peak = max(peak, read())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() (uint64, uint64) {
		close(done)
		<-finished
		return before, max(peak, read())
	}
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// clusterBinaries has the process runtime's binaries ready for b (built
// from go.mod into the tool cache, the master from this tree) and a
// directory, removed after b, for a cluster's nodes.
func clusterBinaries(ctx context.Context, b *testing.B) (cluster.Binaries, string) {
	b.Helper()
	cache, err := bin.NewCache("../..", os.Stderr)
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	bins, err := cluster.PrepareBinaries(ctx, cache, dir)
	if err != nil {
		b.Fatal(err)
	}
	return bins, dir
}
