package faults

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"
)

// The etcd family: what an operator or a lease expiry does to the etcd
// cluster under the masters.
func init() {
	register(&Kind{Name: "revoke-lease", Family: "etcd",
		Doc: "revoke the etcd lease behind /snapshot/maintenance (waiting up to 20s for a holder; with a target, for that " +
			"master to hold it): the holder's next pointer CAS must fail; no heal",
		available: needsSnapshots,
		inject:    injectRevokeLease,
		draw:      func(*rand.Rand, Shape) Spec { return Spec{Kind: "revoke-lease"} },
	})
	register(&Kind{Name: "compact-defrag", Family: "etcd",
		Doc: "the operator's capacity routine: etcd MVCC compaction at the current revision, then defragment each member " +
			"in turn and disarm any alarm (the run keeps the history first); no heal",
		inject: injectCompactDefrag,
		draw:   func(*rand.Rand, Shape) Spec { return Spec{Kind: "compact-defrag"} },
	})
	register(&Kind{Name: "etcd-key", Family: "etcd", Damages: true, Heals: true,
		Doc: "put attrs.value at a key (target: a name under /oplog/{cluster}/, e.g. snapshot/latest, or a raw key from /), or " +
			"delete it (attrs.delete: true); heal puts back what the key held (deletes one that was absent); cluster.etcd_keys " +
			"writes keys the same way before any master starts",
		check:    checkEtcdKey,
		inject:   injectEtcdKey,
		NotDrawn: "what a key means to a master is its scenario's to say",
	})
}

func needsSnapshots(sh Shape) error {
	if !sh.Snapshots {
		return errors.New("needs standbys that publish snapshots")
	}
	return nil
}

func injectRevokeLease(ctx context.Context, env Env, s Spec, in *Injected) error {
	node := ""
	if s.Target != "" {
		n, err := resolveNode(ctx, env, s)
		if err != nil {
			return err
		}
		node = n
	}
	holder, err := env.RevokeWriterLease(ctx, node, 20*time.Second)
	if err != nil {
		return err
	}
	in.Targets = []string{holder}
	return nil
}

func injectCompactDefrag(ctx context.Context, env Env, _ Spec, in *Injected) error {
	report, err := env.CompactDefrag(ctx)
	if err != nil {
		return err
	}
	in.Targets = []string{report}
	return nil
}
