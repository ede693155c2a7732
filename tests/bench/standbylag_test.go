package bench

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/oplogha/oplogha/harness/benchreport"
	"github.com/oplogha/oplogha/harness/client"
)

// lagSample is one reading of both masters' /healthz.
type lagSample struct {
	at               time.Time
	durable, applied uint64 // the primary's durable prefix, the standby's cursor
}

// BenchmarkStandbyLag: the standby's apply cursor behind the durable
// prefix while the primary takes BenchmarkWritePath's top load (64
// clients), read every 10 ms from both masters' /healthz for 8 s: p50 and
// p99 in batches and in ms (how long ago the oldest batch the standby has
// not applied became durable, as the readings saw it). Then the standby is
// frozen (SIGSTOP) for 3 s under the same load and resumed: its apply rate
// while it catches up, beside the primary's commit rate over the steady
// period; target ≥ 2× (a standby that applies only as fast as the primary
// commits never catches up after a pause).
func BenchmarkStandbyLag(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	bc := bootBenchCluster(ctx, b, "lag", 3, 2)
	_, stop := bc.writers(ctx, 64)
	defer stop()
	primary, err := bc.c.Masters.WaitPrimary(ctx, 30*time.Second)
	if err != nil {
		b.Fatal(err)
	}
	standby := ""
	for _, n := range bc.c.Masters.Nodes {
		if n.Name != primary.Name {
			standby = n.Name
		}
	}
	read := func() (lagSample, bool) {
		var p, s *client.Health
		hs := bc.c.Masters.Health(ctx)
		for i := range hs {
			switch hs[i].NodeID {
			case primary.Name:
				p = &hs[i]
			case standby:
				s = &hs[i]
			}
		}
		if p == nil || s == nil || p.Role != "primary" || s.Role == "down" {
			return lagSample{}, false
		}
		return lagSample{at: time.Now(), durable: p.DurablePrefix, applied: s.Cursor.BatchID}, true
	}
	sampleFor := func(d time.Duration, until func(lagSample) bool) []lagSample {
		var out []lagSample
		for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
			if x, ok := read(); ok {
				out = append(out, x)
				if until != nil && until(x) {
					break
				}
			}
		}
		return out
	}
	time.Sleep(time.Second) // the load ramps up
	steady := sampleFor(8*time.Second, nil)
	if len(steady) < 10 {
		b.Fatalf("only %d readings of both masters in 8 s", len(steady))
	}
	// When each batch was first seen durable: the time of the first reading
	// whose prefix reached it.
	durableAt := func(samples []lagSample, batch uint64) (time.Time, bool) {
		for _, x := range samples {
			if x.durable >= batch {
				return x.at, true
			}
		}
		return time.Time{}, false
	}
	var lagB []uint64
	var lagT []time.Duration
	for _, x := range steady {
		lag := x.durable - min(x.durable, x.applied)
		lagB = append(lagB, lag)
		if lag == 0 {
			lagT = append(lagT, 0)
		} else if t, ok := durableAt(steady, x.applied+1); ok {
			lagT = append(lagT, x.at.Sub(t))
		}
	}
	slices.Sort(lagB)
	slices.Sort(lagT)
	first, last := steady[0], steady[len(steady)-1]
	commitRate := float64(last.durable-first.durable) / last.at.Sub(first.at).Seconds()
	pct := func(n int, q int) int { return min(n-1, n*q/100) }
	record(b, benchreport.Figure{Group: "lag", Name: "standby lag under 64 clients, p99",
		Value: float64(lagB[pct(len(lagB), 99)]), Unit: "batches", LowerIsBetter: true,
		Note: fmt.Sprintf("%d readings over %v: p50 %d, p99 %d, max %d batches; in time p50 %v, p99 %v; the primary committed %.0f batches/s",
			len(steady), last.at.Sub(first.at).Round(time.Millisecond), lagB[len(lagB)/2], lagB[pct(len(lagB), 99)], lagB[len(lagB)-1],
			lagT[len(lagT)/2].Round(time.Millisecond), lagT[pct(len(lagT), 99)].Round(time.Millisecond), commitRate)})
	record(b, benchreport.Figure{Group: "lag", Name: "standby lag under 64 clients, p99 in time",
		Value: lagT[pct(len(lagT), 99)].Seconds() * 1000, Unit: "ms", LowerIsBetter: true,
		Note: fmt.Sprintf("since the oldest batch the standby had not applied was first read durable; resolution one reading (%v apart on average)",
			(last.at.Sub(first.at) / time.Duration(len(steady)-1)).Round(time.Millisecond))})

	// Freeze the standby, let a backlog build, and time its catch-up. A
	// frozen standby answers no /healthz: its cursor is the one read just
	// before the freeze, the prefix the primary's just before the resume.
	var before lagSample
	for ok := false; !ok; {
		before, ok = read()
	}
	if err := bc.env.Pause(standby); err != nil {
		b.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	h, err := bc.c.Masters.Client.Health(ctx, primary.DirectURL)
	if err != nil {
		b.Fatal(err)
	}
	before.durable = h.DurablePrefix
	if err := bc.env.Resume(standby); err != nil {
		b.Fatal(err)
	}
	resumed := time.Now()
	backlog := before.durable - min(before.durable, before.applied)
	catch := sampleFor(60*time.Second, func(x lagSample) bool { return x.applied >= before.durable })
	if len(catch) == 0 || catch[len(catch)-1].applied < before.durable {
		b.Fatalf("the standby did not apply the %d-batch backlog within 60 s of its resume", backlog)
	}
	end := catch[len(catch)-1]
	applyRate := float64(end.applied-before.applied) / end.at.Sub(resumed).Seconds()
	record(b, benchreport.Figure{Group: "lag", Name: "standby catch-up after a 3 s freeze: apply rate", Value: applyRate, Unit: "batches/s",
		Note: fmt.Sprintf("a %d-batch backlog (to batch %d) applied in %v while the load went on", backlog, before.durable,
			end.at.Sub(resumed).Round(time.Millisecond))}.
		WithBaseline("the primary's commit rate", commitRate).
		WithTarget("≥ 2× the commit rate", applyRate >= 2*commitRate))
}
