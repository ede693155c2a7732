package faults

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// The failpoint family: gofail failpoints compiled into the masters.
func init() {
	register(&Kind{Name: "failpoint", Family: "failpoint", Heals: true,
		Doc: "set a gofail failpoint term on a master; heal clears it, or starts the master again if the failpoint crashed it",
		check: func(s Spec) error {
			if s.Name == "" || s.Term == "" {
				return fmt.Errorf("failpoint: needs name and term")
			}
			return nil
		},
		inject:   injectFailpoint,
		NotDrawn: "a failpoint is one crash window: the swarm's window moves (harness/swarm) arm each by name where it is reached",
	})
}

func injectFailpoint(ctx context.Context, env Env, s Spec, in *Injected) error {
	if s.Target == "" {
		s.Target = "primary"
	}
	node, err := resolveNode(ctx, env, s)
	if err != nil {
		return err
	}
	if !strings.HasPrefix(node, "master-") {
		return fmt.Errorf("%w: failpoints live on masters, not %s", ErrUnavailable, node)
	}
	if err := env.Failpoint(ctx, node, s.Name, s.Term); err != nil {
		return err
	}
	in.Targets = []string{node}
	in.heal = func(ctx context.Context) error {
		if !env.Running(node) {
			return env.Start(ctx, node) // the failpoint crashed it: a fresh process starts clean
		}
		err := env.Failpoint(ctx, node, s.Name, "")
		if err == nil {
			return nil
		}
		// The failpoint may fire as the heal runs: a process on its way
		// out (its listener closed, its stack still being written)
		// refuses the request. Once it is gone, start it.
		for deadline := time.Now().Add(5 * time.Second); env.Running(node) && time.Now().Before(deadline); {
			time.Sleep(50 * time.Millisecond)
		}
		if !env.Running(node) {
			return env.Start(ctx, node)
		}
		return err
	}
	return nil
}
