package runner

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/oplogha/oplogha/harness/audit"
	"github.com/oplogha/oplogha/harness/scenario"
)

// stepRestart restarts every master, reconfigured first when it says so.
func (r *run) stepRestart(ctx context.Context, rs *scenario.Restart) error {
	if len(rs.Config) > 0 {
		if err := r.cluster.Masters.Reconfigure(rs.Config); err != nil {
			return fmt.Errorf("reconfigure masters: %w", err)
		}
		r.events.add("note", "reconfigure", "all masters", fmt.Sprintf("%v", rs.Config), true)
	}
	return r.restartMasters(ctx, rs.Mode)
}

// stepTraffic starts or stops the client traffic.
func (r *run) stepTraffic(ctx context.Context, what string) error {
	if what == "start" {
		r.gen = nil
		r.startTraffic(ctx)
	} else {
		r.stopTraffic()
	}
	return nil
}

// restartMasters stops every master (gracefully, or SIGKILL for crash) and
// starts them all again: a cold restart of the whole control plane.
func (r *run) restartMasters(ctx context.Context, mode string) error {
	var wg sync.WaitGroup
	errs := make([]error, len(r.env.Masters()))
	for i, m := range r.env.Masters() {
		p, ok := r.cluster.Group.Get(m)
		if !ok || !p.Running() {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if mode == "crash" {
				errs[i] = r.env.Kill(m)
			} else {
				errs[i] = r.env.Stop(m, 10*time.Second)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	acted := time.Now()
	i := r.events.push(audit.Event{Kind: "fault", Name: "restart-" + mode, Target: "all masters", Detail: "restart-all", OK: true, Ended: r.env.Masters()})
	r.recordRevisionAfter(ctx, i, acted)
	for _, m := range r.env.Masters() {
		if err := r.env.Start(ctx, m); err != nil {
			return err
		}
	}
	r.events.add("heal", "restart-"+mode, "all masters", "restart-all", true)
	return nil
}
