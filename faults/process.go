package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
)

// The process family: signals to a master's or an etcd member's process.
func init() {
	register(&Kind{Name: "kill", Family: "process", Heals: true, Outage: true,
		Doc:    "SIGKILL a master or etcd member; heal starts it again",
		check:  needsTarget,
		inject: injectKill,
		draw:   func(r *rand.Rand, sh Shape) Spec { return Spec{Kind: "kill", Target: drawNode(r, sh, true)} },
	})
	register(&Kind{Name: "pause", Family: "process", Heals: true, Outage: true,
		Doc:    "SIGSTOP a master or etcd member; heal sends SIGCONT",
		check:  needsTarget,
		inject: injectPause,
		draw:   func(r *rand.Rand, sh Shape) Spec { return Spec{Kind: "pause", Target: drawNode(r, sh, true)} },
	})
	register(&Kind{Name: "stop", Family: "process", Heals: true, Outage: true,
		Doc:    "graceful stop (SIGTERM, then SIGKILL after grace); heal starts it again",
		check:  needsTarget,
		inject: injectStop,
		draw:   func(r *rand.Rand, sh Shape) Spec { return Spec{Kind: "stop", Target: drawNode(r, sh, false)} },
	})
	register(&Kind{Name: "restart", Family: "process",
		Doc:    "graceful stop and immediate start, in one step",
		check:  needsTarget,
		inject: injectRestart,
		draw:   func(r *rand.Rand, sh Shape) Spec { return Spec{Kind: "restart", Target: drawNode(r, sh, false)} },
	})
}

func needsTarget(s Spec) error {
	if s.Target == "" {
		return fmt.Errorf("%s: needs a target", s.Kind)
	}
	return nil
}

// drawNode is a target a swarm run can lose for a while and serve on:
// a master role, or (with withEtcd and three members) an etcd member.
func drawNode(r *rand.Rand, sh Shape, withEtcd bool) string {
	targets := []string{"primary", "standby", "master"}
	if withEtcd && sh.Etcd >= 3 {
		targets = append(targets, "etcd-follower", "etcd-leader")
	}
	return targets[r.IntN(len(targets))]
}

// nodeAct acts on one resolved node; nodeHeal says how to undo it there.
type (
	nodeAct  func(ctx context.Context, env Env, node string, s Spec) error
	nodeHeal func(env Env, node string) func(context.Context) error
)

// onNode is the injection of a kind that acts on one resolved node: act
// on it, then heal with heal (nil: nothing to heal).
func onNode(act nodeAct, heal nodeHeal) func(context.Context, Env, Spec, *Injected) error {
	return func(ctx context.Context, env Env, s Spec, in *Injected) error {
		node, err := resolveNode(ctx, env, s)
		if err != nil {
			return err
		}
		in.Targets = []string{node}
		if err := act(ctx, env, node, s); err != nil {
			return err
		}
		if heal != nil {
			in.heal = heal(env, node)
		}
		return nil
	}
}

func startAgain(env Env, node string) func(context.Context) error {
	return func(ctx context.Context) error { return env.Start(ctx, node) }
}

// ended records that the fault ended node's process when node is a
// master: whatever the node does after etcd's revision once it had (the
// runner records it) is a later incarnation's (an audit tells a restarted
// primary's standby work from the primary's).
func ended(env Env, in *Injected, node string) {
	if slices.Contains(env.Masters(), node) {
		in.Ended = append(in.Ended, node)
	}
}

// endsProcess is onNode for a kind that ends the node's process: the
// process's end is recorded (ended) once act returned.
func endsProcess(act nodeAct, heal nodeHeal) func(context.Context, Env, Spec, *Injected) error {
	inject := onNode(act, heal)
	return func(ctx context.Context, env Env, s Spec, in *Injected) error {
		if err := inject(ctx, env, s, in); err != nil {
			return err
		}
		ended(env, in, in.Targets[0])
		return nil
	}
}

var (
	injectKill  = endsProcess(func(_ context.Context, env Env, node string, _ Spec) error { return env.Kill(node) }, startAgain)
	injectPause = onNode(func(_ context.Context, env Env, node string, _ Spec) error { return env.Pause(node) },
		func(env Env, node string) func(context.Context) error {
			return func(context.Context) error { return env.Resume(node) }
		})
	injectStop    = endsProcess(func(_ context.Context, env Env, node string, s Spec) error { return env.Stop(node, grace(s)) }, startAgain)
	injectRestart = endsProcess(func(ctx context.Context, env Env, node string, s Spec) error {
		if err := env.Stop(node, grace(s)); err != nil {
			return err
		}
		return env.Start(ctx, node)
	}, nil)
)
