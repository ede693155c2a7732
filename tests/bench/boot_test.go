package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/oplogha/oplogha/harness/benchreport"
	"github.com/oplogha/oplogha/harness/cluster"
	"github.com/oplogha/oplogha/harness/etcd"
	"github.com/oplogha/oplogha/harness/proc"
)

// BenchmarkHarnessBoot: the whole cluster a scenario runs on — toxiproxy in
// front of every link, 3 etcd members, versitygw and 3 masters, up until one
// master serves as primary — against a bare 3-member etcd cluster becoming
// healthy, on the same machine in the same process.
func BenchmarkHarnessBoot(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	bins, dir := clusterBinaries(ctx, b)
	const rounds = 3
	var bare, full []time.Duration
	for i := range rounds {
		g := proc.NewGroup()
		t0 := time.Now()
		_, err := etcd.Start(ctx, g, etcd.Options{Members: 3, Binary: bins.Etcd.Path, Dir: filepath.Join(dir, fmt.Sprintf("bare-%d", i))})
		bare = append(bare, time.Since(t0))
		if cerr := g.Close(10 * time.Second); err == nil {
			err = cerr
		}
		if err != nil {
			b.Fatal(err)
		}
		g = proc.NewGroup()
		c, err := cluster.Up(ctx, g, bins, cluster.Shape{EtcdMembers: 3, Masters: 3, ClusterID: fmt.Sprintf("boot-%d", i), S3: "versitygw", Seed: int64(i),
			MasterConfig: map[string]any{"enable_standby_snapshot": true}}, filepath.Join(dir, fmt.Sprintf("full-%d", i)))
		if err == nil {
			full = append(full, c.Boot)
		}
		if cerr := g.Close(10 * time.Second); err == nil {
			err = cerr
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	record(b, benchreport.Figure{Group: "harness", Name: "boot: toxiproxy + 3 etcd + versitygw + 3 masters, to a serving primary",
		Value: median(full).Seconds(), Unit: "s", LowerIsBetter: true,
		Note: fmt.Sprintf("median of %d boots %v; the baseline is a bare 3-member etcd cluster healthy (%v)", rounds, full, bare)}.
		WithBaseline("bare 3-member etcd", median(bare).Seconds()))
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
