package runner

import (
	"context"
	"fmt"

	"github.com/oplogha/oplogha/harness/scenario"
)

// step runs one step of the scenario: the interpreter, one function (and
// file) per step kind.
func (r *run) step(ctx context.Context, st scenario.Step) error {
	afterFailpoint := r.lastFailpointHit
	r.lastFailpointHit = ""
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
		return r.stepTraffic(ctx, st.Traffic)
	case "assert":
		return r.assert(ctx, st.Assert)
	case "probe":
		return r.probe(ctx, st.Probe)
	}
	return fmt.Errorf("unknown step kind %q", st.Kind())
}
