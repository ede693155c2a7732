package faults

import (
	"context"
	"fmt"
)

// loseHistory deletes the durable prefix and every batch key in one
// transaction and leaves everything else (view, floor, pointers, objects):
// a history lost with its residue in place. No master may read what is
// left as an empty cluster.
func loseHistory(ctx context.Context, env Env, in *Injected) error {
	ke, ok := env.(KeyEnv)
	if !ok {
		return fmt.Errorf("%w: lose-history needs an environment that deletes keys", ErrUnavailable)
	}
	ks := env.Keyspace()
	rev, deleted, err := ke.EtcdDeleteAll(ctx, []string{ks.DurablePrefix()}, []string{ks.BatchPrefix()})
	if err != nil {
		return err
	}
	if deleted == 0 {
		return fmt.Errorf("%w: no history to lose (no durable prefix, no batch)", ErrUnavailable)
	}
	in.Targets = []string{fmt.Sprintf("durable prefix and batches: %d keys deleted", deleted)}
	in.Revisions = []int64{rev}
	return nil
}
