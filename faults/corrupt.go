package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"strconv"

	"github.com/oplogha/oplogha/impl/contract"
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
	rev, err := env.EtcdPut(ctx, key, bad)
	return id, rev, err
}

// keyChangedUnderOldChecksum returns the record with its first entry's key
// changed in its last byte, written as upstream writes it but ending in the
// original record's checksum: it parses, every field is well formed, and
// only the checksum can tell (bit rot, or a writer that forgot to sum).
func keyChangedUnderOldChecksum(record []byte) ([]byte, error) {
	b, err := contract.DecodeBatch(record)
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
	altered, err := contract.EncodeBatch(b)
	if err != nil {
		return nil, err
	}
	i, j := bytes.LastIndexByte(altered, ','), bytes.LastIndexByte(record, ',')
	if i < 0 || j < 0 {
		return nil, fmt.Errorf("record without a checksum element")
	}
	return append(altered[:i:i], record[j:]...), nil
}
