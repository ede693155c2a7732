package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"strconv"
)

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
		ID     string `json:"snapshot_id"`
		Prefix string `json:"object_prefix"`
	}
	if err := json.Unmarshal(raw, &p); err != nil || p.Prefix == "" {
		return "", "", fmt.Errorf("%w: %s pointer does not name a snapshot", ErrUnavailable, slot)
	}
	for _, obj := range []string{"chunks/000000.bin", "segments.bin"} {
		file, err := env.StoreFile(path.Join(p.Prefix, obj))
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

// corruptBatch overwrites one batch record with bytes that are not a record.
func corruptBatch(ctx context.Context, env Env, target string) (uint64, int64, error) {
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
	if raw, err := env.EtcdGet(ctx, key); err != nil {
		return 0, 0, err
	} else if raw == nil {
		return 0, 0, fmt.Errorf("%w: batch %d is not in the OpLog", ErrUnavailable, id)
	}
	rev, err := env.EtcdPut(ctx, key, []byte(`[1,"corrupted by the harness"]`))
	return id, rev, err
}
