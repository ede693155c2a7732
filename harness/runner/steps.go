package runner

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/oplogha/oplogha/harness/scenario"
)

// step runs one step of the scenario: the interpreter, one function (and
// file) per step kind. Every step runs under its bound (StepBound): no
// fault, heal or wait can hold the run past it, whatever the cluster has
// stopped answering.
func (r *run) step(ctx context.Context, st scenario.Step) error {
	afterFailpoint := r.lastFailpointHit
	r.lastFailpointHit = ""
	bound, ok := StepBound(st)
	if !ok {
		return fmt.Errorf("step kind %q has no bound", st.Kind())
	}
	outer := ctx // what outlives the step: the traffic it starts
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	switch st.Kind() {
	case "sleep":
		return r.stepSleep(ctx, st.Sleep)
	case "wait":
		return r.wait(ctx, st.Wait)
	case "fault":
		return r.stepFault(ctx, st, afterFailpoint)
	case "heal":
		if st.Heal == "all" {
			return r.healAll(ctx, false)
		}
		return r.heal(ctx, st.Heal)
	case "restart":
		return r.stepRestart(ctx, st.Restart)
	case "traffic":
		return r.stepTraffic(outer, st.Traffic)
	case "assert":
		return r.assert(ctx, st.Assert)
	case "probe":
		return r.probe(ctx, st.Probe)
	}
	return fmt.Errorf("unknown step kind %q", st.Kind())
}

// The bounds of the step kinds that have no timeout of their own. A fault
// or heal acts on processes, links, failpoints, etcd keys and objects,
// each call under its own deadline (a stop's SIGTERM grace on top); a
// restart stops and starts every master; an assert watches for at most
// its longest `for` and starts at most one refused master.
const (
	faultBound   = 30 * time.Second
	healBound    = 15 * time.Second
	restartBound = 30 * time.Second
	trafficBound = 20 * time.Second
	assertBound  = 30 * time.Second
	probeBound   = 60 * time.Second
	// waitGrace is what a wait may take past its timeout: its last poll.
	waitGrace = 5 * time.Second
)

// StepBound is the longest st may take, whatever the cluster does; ok is
// false for a step kind without a bound (the step-kind test fails on one).
func StepBound(st scenario.Step) (time.Duration, bool) {
	switch st.Kind() {
	case "sleep":
		d := st.Sleep
		if a := 3*d + 10*time.Second; a > d {
			d = a // a replay waits for the next fault's progress (stepSleep)
		}
		return d, true
	case "wait":
		return st.Wait.Timeout + waitGrace, true
	case "fault":
		return faultBound + st.Fault.Grace, true
	case "heal":
		return healBound, true
	case "restart":
		return restartBound, true
	case "traffic":
		return trafficBound, true
	case "assert":
		a := st.Assert
		d := assertBound + a.NoSnapshotsFor + a.NoCampaignFor + a.NoViewClaimsFor
		if a.Refuses != nil {
			d += cmp.Or(a.Refuses.Timeout, refusesWait)
		}
		return d, true
	case "probe":
		return probeBound, true
	}
	return 0, false
}
