package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
)

// corruptSnapshot flips one byte in the middle of the first payload object
// of the snapshot the slot's pointer names, in the file behind the server.
func corruptSnapshot(ctx context.Context, env Env, slot string) (string, error) {
	raw, err := env.EtcdGet(ctx, "/snapshot/"+slot)
	if err != nil {
		return "", err
	}
	if raw == nil {
		return "", fmt.Errorf("%w: no %s pointer to corrupt", ErrUnavailable, slot)
	}
	var p struct {
		ID     string `json:"snapshot_id"`
		Prefix string `json:"object_prefix"`
	}
	if err := json.Unmarshal(raw, &p); err != nil || p.Prefix == "" {
		return "", fmt.Errorf("%w: %s pointer does not name a snapshot", ErrUnavailable, slot)
	}
	for _, obj := range []string{"chunks/000000.bin", "segments.bin"} {
		file, err := env.StoreFile(path.Join(p.Prefix, obj))
		if err != nil {
			return "", err
		}
		data, err := os.ReadFile(file)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return "", err
		}
		if len(data) == 0 {
			continue
		}
		data[len(data)/2] ^= 0x20
		if err := os.WriteFile(file, data, 0o644); err != nil {
			return "", err
		}
		return fmt.Sprintf("%s %s/%s byte %d", slot, p.ID, obj, len(data)/2), nil
	}
	return "", fmt.Errorf("%w: no payload object of %s on disk", ErrUnavailable, p.ID)
}
