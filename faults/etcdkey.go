package faults

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/oplogha/oplogha/impl/contract/keyspace"
)

// The etcd-key kind (registered with the etcd family) writes or deletes
// one key behind the masters' back: a key of the contract by its name under
// the cluster's root, or any key from "/". It is how a scenario sets up what
// a master must cope with — a key another version left (upstream's legacy
// layout), a key the operator wrote — at any step, and, through
// cluster.etcd_keys (KeyAt, before any master starts), at the very start.
// KeyAt is the etcd key a target names: a raw key from "/", else a name
// under the cluster's root (snapshot/latest → /oplog/{cluster}/snapshot/latest).
func KeyAt(ks keyspace.Keyspace, target string) string {
	if strings.HasPrefix(target, "/") {
		return target
	}
	return ks.Root() + "/" + target
}

func checkEtcdKey(s Spec) error {
	if s.Target == "" || s.Target == "/" {
		return errors.New("etcd-key: needs a target: a key name under the cluster's root (snapshot/latest), or a raw key from /")
	}
	del, _ := s.Attrs["delete"].(bool)
	_, hasValue := s.Attrs["value"].(string)
	switch {
	case del && hasValue:
		return errors.New("etcd-key: attrs.value or attrs.delete: true, not both")
	case !del && !hasValue:
		return errors.New("etcd-key: needs attrs.value (a string to put) or attrs.delete: true")
	}
	for k := range s.Attrs {
		if k != "value" && k != "delete" {
			return fmt.Errorf("etcd-key: attrs.%s: only value and delete are known", k)
		}
	}
	return nil
}

func injectEtcdKey(ctx context.Context, env Env, s Spec, in *Injected) error {
	key := KeyAt(env.Keyspace(), s.Target)
	before, err := env.EtcdGet(ctx, key)
	if err != nil {
		return fmt.Errorf("read %s: %w", key, err)
	}
	rev, err := writeKey(ctx, env, key, s)
	if err != nil {
		return err
	}
	in.Targets, in.Revisions = []string{key}, []int64{rev}
	// The heal puts back what the key held, only over what the fault wrote:
	// a value a master wrote since (a floor moved up) is not undone.
	var written []byte
	if del, _ := s.Attrs["delete"].(bool); !del {
		v, _ := s.Attrs["value"].(string)
		written = []byte(v)
	}
	heal := restoreHeal(env, key, key, written, before, in, "no longer holds what the fault wrote")
	in.heal = func(ctx context.Context) error {
		if err := heal(ctx); err != nil {
			return fmt.Errorf("restore %s: %w", key, err)
		}
		return nil
	}
	return nil
}

// writeKey puts s's attrs.value at key, or deletes key (attrs.delete).
func writeKey(ctx context.Context, env Env, key string, s Spec) (int64, error) {
	if del, _ := s.Attrs["delete"].(bool); del {
		ke, ok := env.(KeyEnv)
		if !ok {
			return 0, fmt.Errorf("%w: deleting a key needs the runner's etcd client", ErrUnavailable)
		}
		return ke.EtcdDelete(ctx, key)
	}
	value, _ := s.Attrs["value"].(string)
	return env.EtcdPut(ctx, key, []byte(value))
}
