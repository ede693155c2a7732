package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/oplogha/oplogha/harness/audit"
	"github.com/oplogha/oplogha/harness/masterkind"
	"github.com/oplogha/oplogha/harness/traffic"
)

func (r *run) startTraffic(ctx context.Context) {
	if r.gen != nil {
		return
	}
	cfg := r.sc.Traffic
	cfg.Seed = r.sc.Seed
	cfg.Generation = r.generations
	if !r.kind.Can(masterkind.Tenants) {
		cfg.OneTenant = "default"
	}
	r.generations++
	r.gen = traffic.Start(ctx, cfg, r.env, r.client, r.rec)
	r.events.add("note", "traffic", "", "started", true)
}

// waitMinimumWork lets traffic that is still running reach the
// acknowledged mutations the scenario expects (bounded), so the
// minimum-work audit judges what the run did, not how fast a loaded
// machine went through its steps.
func (r *run) waitMinimumWork(ctx context.Context) {
	need := r.sc.Expect.MinOKOps
	if r.gen == nil || need <= 0 {
		return
	}
	if why := r.etcdUnreadable(ctx, 2*time.Second); why != "" {
		r.events.add("note", "minimum-work", "", "not waiting for more acknowledged mutations: "+why, false)
		return
	}
	okMutations := func() int { return audit.AcknowledgedMutations(r.rec.Ops()) }
	start := time.Now()
	deadline := time.NewTimer(minimumWorkWait)
	defer deadline.Stop()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for n := okMutations(); n < need; n = okMutations() {
		select {
		case <-ctx.Done():
			return
		case <-r.gen.Done():
			return
		case <-deadline.C:
			r.events.add("note", "minimum-work", "", fmt.Sprintf("traffic reached %d of the %d acknowledged mutations the "+
				"scenario expects in %v", n, need, minimumWorkWait), false)
			return
		case <-tick.C:
		}
	}
	if waited := time.Since(start); waited > time.Second {
		r.events.add("note", "minimum-work", "", fmt.Sprintf("traffic ran %v more to reach the %d acknowledged mutations the "+
			"scenario expects", waited.Round(time.Second), need), true)
	}
}

// minimumWorkWait bounds waitMinimumWork.
const minimumWorkWait = 60 * time.Second

func (r *run) stopTraffic() {
	if r.gen == nil {
		return
	}
	r.gen.Stop()
	all, ok := r.gen.Ops()
	r.events.add("note", "traffic", "", fmt.Sprintf("stopped after %d ops (%d ok)", all, ok), true)
}
