package bench

import (
	"context"
	"fmt"
	"path"
	"testing"
	"time"

	"github.com/oplogha/oplogha/harness/benchreport"
	"github.com/oplogha/oplogha/impl/publish"
	"github.com/oplogha/oplogha/impl/retention"
)

// BenchmarkEtcdCost counts the etcd requests of one publication and of one
// prune cycle over OpLogs of 1k and 10k batches: both must be constant,
// whatever the number of batches a cycle deletes.
func BenchmarkEtcdCost(b *testing.B) {
	ctx := ctxB(b, 20*time.Minute)
	w := theWorld(b)
	type cost struct {
		publish, prune     int64
		pubDesc, pruneDesc string
		deleted            int64
	}
	measure := func(batches int) cost {
		lw := oplogOf(ctx, b, w, "prune", batches)
		fallback := writeSnapshot(ctx, b, w, lw.ks, lw.mid, lw.view)
		latest := writeSnapshot(ctx, b, w, lw.ks, lw.want.Capture(), lw.view)
		cli, n := countingClient(b, w)
		lease, err := publish.AcquireLease(ctx, cli, lw.ks, "bench", 60)
		if err != nil {
			b.Fatal(err)
		}
		defer lease.Release(context.WithoutCancel(ctx))
		var c cost
		for _, p := range []publish.Pointer{fallback, latest} {
			n.reset()
			o, err := publish.Observe(ctx, cli, lw.ks)
			if err != nil {
				b.Fatal(err)
			}
			plan, err := publish.PlanFor(o, p)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := publish.Publish(ctx, cli, lw.ks, lease.Token, o, plan); err != nil {
				b.Fatal(err)
			}
			c.publish, c.pubDesc = n.total(), n.String()
		}
		n.reset()
		rep, err := retention.Run(ctx, cli, lw.ks, w.store, retention.Options{Prefix: path.Join("snapshots", path.Base(lw.ks.Root())), Prune: true})
		if err != nil {
			b.Fatal(err)
		}
		if rep.BatchesDeleted == 0 {
			b.Fatalf("the prune cycle deleted nothing: %+v", rep)
		}
		c.prune, c.pruneDesc, c.deleted = n.total(), n.String(), rep.BatchesDeleted
		return c
	}
	small, big := measure(1000), measure(10_000)
	record(b, benchreport.Figure{Group: "etcd", Name: "requests per publication (10k-batch OpLog)",
		Value: float64(big.publish), Unit: "requests", LowerIsBetter: true,
		Note: fmt.Sprintf("%s (1k batches: %s)", big.pubDesc, small.pubDesc)}.
		WithBaseline("same at 1k batches", float64(small.publish)).
		WithTarget("constant in batch count", big.publish == small.publish))
	record(b, benchreport.Figure{Group: "etcd", Name: fmt.Sprintf("requests per prune cycle (%d batches deleted)", big.deleted),
		Value: float64(big.prune), Unit: "requests", LowerIsBetter: true,
		Note: fmt.Sprintf("%s; the range delete is one txn (1k batches: %s, %d deleted)", big.pruneDesc, small.pruneDesc, small.deleted)}.
		WithBaseline(fmt.Sprintf("same at %d batches deleted", small.deleted), float64(small.prune)).
		WithTarget("constant in batch count", big.prune == small.prune))
}
