package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
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

func injectKill(ctx context.Context, env Env, s Spec, in *Injected) error {
	node, err := resolveNode(ctx, env, s)
	if err != nil {
		return err
	}
	in.Targets = []string{node}
	if err := env.Kill(node); err != nil {
		return err
	}
	in.heal = func(ctx context.Context) error { return env.Start(ctx, node) }
	return nil
}

func injectPause(ctx context.Context, env Env, s Spec, in *Injected) error {
	node, err := resolveNode(ctx, env, s)
	if err != nil {
		return err
	}
	in.Targets = []string{node}
	if err := env.Pause(node); err != nil {
		return err
	}
	in.heal = func(context.Context) error { return env.Resume(node) }
	return nil
}

func injectStop(ctx context.Context, env Env, s Spec, in *Injected) error {
	node, err := resolveNode(ctx, env, s)
	if err != nil {
		return err
	}
	in.Targets = []string{node}
	if err := env.Stop(node, grace(s)); err != nil {
		return err
	}
	in.heal = func(ctx context.Context) error { return env.Start(ctx, node) }
	return nil
}

func injectRestart(ctx context.Context, env Env, s Spec, in *Injected) error {
	node, err := resolveNode(ctx, env, s)
	if err != nil {
		return err
	}
	in.Targets = []string{node}
	if err := env.Stop(node, grace(s)); err != nil {
		return err
	}
	return env.Start(ctx, node)
}
