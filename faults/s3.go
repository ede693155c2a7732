package faults

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path"
)

// The s3 family: the snapshot store's objects damaged behind the server.
func init() {
	register(&Kind{Name: "corrupt-snapshot", Family: "s3", Damages: true, Publications: 2,
		Doc: "flip one byte in the first chunk (or segments.bin) of the snapshot a pointer names, behind the S3 server (target latest|fallback); no heal",
		check: func(s Spec) error {
			if s.Target != "latest" && s.Target != "fallback" {
				return fmt.Errorf("corrupt-snapshot: target %q: want latest or fallback", s.Target)
			}
			return nil
		},
		available: func(sh Shape) error {
			if !sh.StoreFiles {
				return errors.New("needs a store whose files the harness reaches")
			}
			return needsSnapshots(sh)
		},
		inject: func(ctx context.Context, env Env, s Spec, in *Injected) error {
			target, id, err := corruptSnapshot(ctx, env, s.Target)
			if err != nil {
				return err
			}
			in.Targets = []string{target}
			return in.corrupted(ctx, env, id)
		},
		draw: func(*rand.Rand, Shape) Spec { return Spec{Kind: "corrupt-snapshot", Target: "latest"} },
	})
}

// corruptSnapshot flips one byte in the middle of the first payload object
// of the snapshot the slot's pointer names, in the file behind the server.
func corruptSnapshot(ctx context.Context, env Env, slot string) (desc, id string, err error) {
	raw, err := env.EtcdGet(ctx, pointerKey(env.Keyspace(), slot))
	if err != nil {
		return "", "", err
	}
	if raw == nil {
		return "", "", fmt.Errorf("%w: no %s pointer to corrupt", ErrUnavailable, slot)
	}
	var p struct {
		ID         string `json:"snapshot_id"`
		Descriptor string `json:"descriptor_key"`
	}
	if err := json.Unmarshal(raw, &p); err != nil || p.Descriptor == "" {
		return "", "", fmt.Errorf("%w: %s pointer does not name a snapshot", ErrUnavailable, slot)
	}
	for _, obj := range []string{"objects/0.bin", "segments.bin"} {
		file, err := env.StoreFile(path.Join(path.Dir(p.Descriptor), obj))
		if err != nil {
			return "", "", err
		}
		data, err := os.ReadFile(file)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return "", "", err
		}
		if len(data) == 0 {
			continue
		}
		data[len(data)/2] ^= 0x20
		if err := os.WriteFile(file, data, 0o644); err != nil {
			return "", "", err
		}
		return fmt.Sprintf("%s %s/%s byte %d", slot, p.ID, obj, len(data)/2), p.ID, nil
	}
	return "", "", fmt.Errorf("%w: no payload object of %s on disk", ErrUnavailable, p.ID)
}
