package faults

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/oplogha/oplogha/impl/contract/batchlog"
)

// The data family: records of the namespace damaged or lost behind the
// masters' back. Each damages on purpose; most stop every master that reads
// what they leave (fail-closed, by design), which a swarm run — required to
// serve to its end — cannot draw: their scenarios state what must happen.
func init() {
	register(&Kind{Name: "corrupt-pointer", Family: "data", Damages: true, Publications: 2,
		Doc: "write garbage into the latest, fallback or both pointer slots (target latest|fallback|both); no heal: a newer publication repairs",
		check: func(s Spec) error {
			if s.Target != "latest" && s.Target != "fallback" && s.Target != "both" {
				return fmt.Errorf("corrupt-pointer: target %q: want latest, fallback or both", s.Target)
			}
			return nil
		},
		available: needsSnapshots,
		inject:    injectCorruptPointer,
		draw:      func(*rand.Rand, Shape) Spec { return Spec{Kind: "corrupt-pointer", Target: "latest"} },
	})
	register(&Kind{Name: "corrupt-batch", Family: "data", Damages: true,
		Doc: "overwrite a batch record (target first|last, or a batch id): with garbage, or with attrs.form checksum a record " +
			"that parses but has one entry's key changed under its old checksum (only the checksum tells); no heal",
		check: func(s Spec) error {
			if s.Target != "first" && s.Target != "last" {
				if _, err := strconv.ParseUint(s.Target, 10, 64); err != nil {
					return fmt.Errorf("corrupt-batch: target %q: want first, last or a batch id", s.Target)
				}
			}
			if f, ok := s.Attrs["form"]; ok && f != "garbage" && f != "checksum" {
				return fmt.Errorf("corrupt-batch: attrs.form %v: want garbage or checksum", f)
			}
			return nil
		},
		inject: func(ctx context.Context, env Env, s Spec, in *Injected) error {
			id, rev, err := corruptBatch(ctx, env, s.Target, s.Attrs["form"] == "checksum")
			if err != nil {
				return err
			}
			in.Targets, in.Revisions = []string{fmt.Sprintf("batch %d", id)}, []int64{rev}
			return nil
		},
		NotDrawn: "a damaged batch record stops every master that must replay it (fail-closed): a swarm run cannot serve past it",
	})
	register(&Kind{Name: "garbage", Family: "data", Damages: true, Heals: true,
		Doc: "overwrite an etcd key of the contract (target durable_prefix, producer_view, leader, " +
			"snapshot/maintenance|latest|fallback|compaction_floor, batches/first|last|suffix|<id>) or an object of a pointer's " +
			"snapshot (target {latest|fallback}/{chunk|segments.bin|manifest.json|descriptor.json}) with bytes that are not a " +
			"valid record (attrs.form random|truncated|wrong-fields, default a seeded choice; for a key also empty (kept with an " +
			"empty value), absent (deleted) and ahead (producer_view: a canonical view 1000 above the current one; " +
			"snapshot/compaction_floor: a floor half-way between the latest pointer's batch and the durable prefix, above both " +
			"pointers; no heal)); heal restores a record, deletes a stray maintenance or leader key; pointers and objects have no heal (a " +
			"publication repairs)",
		check: func(s Spec) error {
			t, err := ParseGarbageTarget(s.Target)
			if err != nil {
				return err
			}
			form, err := garbageForm(s)
			switch {
			case err != nil:
				return err
			case form == FormAhead && t.Name != TargetView && t.Name != TargetFloor:
				return fmt.Errorf("garbage: attrs.form ahead is for targets producer_view and snapshot/compaction_floor only, not %q", s.Target)
			case slices.Contains(keyOnlyForms, form) && (t.Object != "" || t.Name == TargetLeader || t.Name == TargetMaintenance):
				return fmt.Errorf("garbage: attrs.form %s is for a record key (prefix, view, floor, pointers, batches), not %q", form, s.Target)
			}
			return nil
		},
		inject:   injectGarbage,
		NotDrawn: "garbage in the prefix, view or a batch stops the masters that read it (fail-closed) until healed, on a schedule only its own scenario can state",
	})
	register(&Kind{Name: "lose-history", Family: "data", Damages: true,
		Doc: "delete the durable prefix and every batch key in one transaction, leaving the producer view, floor, " +
			"pointers and snapshots in place (a history lost, its residue kept); with attrs.prefix zero, then write the " +
			"zero durable prefix (an operator's half-done reset: a fresh-looking prefix beside the residue); no heal",
		check: func(s Spec) error {
			for k, v := range s.Attrs {
				if k != "prefix" || (v != "deleted" && v != "zero") {
					return fmt.Errorf("lose-history: attrs.%s %v: only attrs.prefix deleted|zero is known", k, v)
				}
			}
			return nil
		},
		inject:   loseHistory,
		NotDrawn: "a lost history is never served again (every master refuses the residue): the run ends there",
	})
}

func injectCorruptPointer(ctx context.Context, env Env, s Spec, in *Injected) error {
	slots := []string{s.Target}
	if s.Target == "both" {
		slots = []string{"latest", "fallback"}
	}
	for _, slot := range slots {
		rev, err := env.EtcdPut(ctx, pointerKey(env.Keyspace(), slot), []byte(`{"pointer_schema_version":1,"snapshot_id":"corrupted-by-the-harness"`))
		if err != nil {
			return err
		}
		in.Revisions = append(in.Revisions, rev)
	}
	in.Targets = slots
	return nil
}

// loseHistory deletes the durable prefix and every batch key in one
// transaction and leaves everything else (view, floor, pointers, objects):
// a history lost with its residue in place. No master may read what is
// left as an empty cluster.
func loseHistory(ctx context.Context, env Env, s Spec, in *Injected) error {
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
	if s.Attrs["prefix"] == "zero" {
		zero := batchlog.EncodeDurablePrefix(batchlog.DurablePrefix{})
		rev, err := env.EtcdPut(ctx, ks.DurablePrefix(), zero)
		if err != nil {
			return fmt.Errorf("write the zero durable prefix: %w", err)
		}
		in.Targets = append(in.Targets, "the zero durable prefix written beside the residue: "+string(zero))
		in.Revisions = append(in.Revisions, rev)
	}
	return nil
}

// corruptBatch overwrites one batch record with bytes that are not a record.
func corruptBatch(ctx context.Context, env Env, target string, underOldChecksum bool) (uint64, int64, error) {
	var id uint64
	switch target {
	case "first":
		id = 1
	case "last":
		var err error
		if id, err = durableBatch(ctx, env); err != nil {
			return 0, 0, fmt.Errorf("no durable batch to corrupt: %w", err)
		}
	default:
		id, _ = strconv.ParseUint(target, 10, 64)
	}
	key := env.Keyspace().Batch(id)
	raw, err := env.EtcdGet(ctx, key)
	if err != nil {
		return 0, 0, err
	} else if raw == nil {
		return 0, 0, fmt.Errorf("%w: batch %d is not in the OpLog", ErrUnavailable, id)
	}
	bad := []byte(`[1,"corrupted by the harness"]`)
	if underOldChecksum {
		if bad, err = keyChangedUnderOldChecksum(raw); err != nil {
			return 0, 0, fmt.Errorf("batch %d: %w", id, err)
		}
	}
	// A swap from the record read: a batch the retention cycle deleted
	// meanwhile is not brought back as garbage below the floor.
	rev, swapped, err := env.EtcdSwap(ctx, key, raw, bad)
	if err == nil && !swapped {
		err = fmt.Errorf("%w: batch %d changed or was deleted while it was being corrupted", ErrUnavailable, id)
	}
	return id, rev, err
}

// keyChangedUnderOldChecksum returns the record with its first entry's key
// changed in its last byte, written as upstream writes it but ending in the
// original record's checksum: it parses, every field is well formed, and
// only the checksum can tell (bit rot, or a writer that forgot to sum).
func keyChangedUnderOldChecksum(record []byte) ([]byte, error) {
	b, err := batchlog.DecodeBatch(record)
	if err != nil {
		return nil, fmt.Errorf("not a record to alter: %w", err)
	}
	k := []byte(b.Entries[0].Key)
	if len(k) == 0 {
		k = []byte("x")
	} else {
		k[len(k)-1] ^= 0x01
	}
	b.Entries[0].Key = string(k)
	altered, err := batchlog.EncodeBatch(b)
	if err != nil {
		return nil, err
	}
	i, j := bytes.LastIndexByte(altered, ','), bytes.LastIndexByte(record, ',')
	if i < 0 || j < 0 {
		return nil, fmt.Errorf("record without a checksum element")
	}
	return append(altered[:i:i], record[j:]...), nil
}
