package faults

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/oplogha/oplogha/impl/contract/batchsnap"
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
			in.corrupted(id)
			return nil
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

// The occupy-prefix kind: an object already lies under the prefix of a
// candidate a master is about to upload. A snapshot id is
// <batch>-<maintenance lease> and not unique per attempt: under upstream's
// long-lived maintenance lease a second attempt at the same batch meets the
// first attempt's orphans there, and its writer must refuse the prefix
// (writer.cpp: "Snapshot candidate prefix already exists") without
// writing or deleting anything.
func init() {
	register(&Kind{Name: "occupy-prefix", Family: "s3",
		Doc: "put one stray object (objects/0.bin) through the S3 API under the artifact prefix of the candidate a master has " +
			"prepared and not yet uploaded (target: that master, held before upload; its id read from the attempt's work " +
			"file, the root from the latest pointer): the upload must refuse the taken prefix; no heal (GC collects the orphan)",
		NotDrawn:  "it needs an attempt held between prepare and upload (failpoint snapshotBeforeUpload), which only its scenario arranges",
		available: needsSnapshots,
		inject: func(ctx context.Context, env Env, s Spec, in *Injected) error {
			node, err := resolveNode(ctx, env, s)
			if err != nil {
				return err
			}
			key, err := occupyPrefix(ctx, env, node)
			if err != nil {
				return err
			}
			in.Targets = []string{node + " " + key}
			return nil
		},
	})
}

// workFilePrefix starts the name of a master's snapshot work file, which
// goes on with the attempt's snapshot id (impl/snapshot.WorkFilePrefix).
const workFilePrefix = "oplogha-snapshot-"

// occupyPrefix puts a stray object under the artifact prefix of the one
// attempt node has prepared, and returns its key.
func occupyPrefix(ctx context.Context, env Env, node string) (string, error) {
	dir, err := env.WorkDir(node)
	if err != nil {
		return "", err
	}
	files, err := filepath.Glob(filepath.Join(dir, workFilePrefix+"*.payload"))
	if err != nil {
		return "", err
	}
	var ids []string
	for _, f := range files {
		parts := strings.SplitN(strings.TrimPrefix(filepath.Base(f), workFilePrefix), "-", 3)
		if len(parts) == 3 {
			if id, err := batchsnap.ParseID(parts[0] + "-" + parts[1]); err == nil {
				ids = append(ids, id.String())
			}
		}
	}
	if len(ids) != 1 {
		return "", fmt.Errorf("%w: %s has %d prepared attempts in %s (%v), want one held before upload", ErrUnavailable, node, len(ids), dir, ids)
	}
	prefix, _, err := pointerPrefix(ctx, env, "latest")
	if err != nil {
		return "", err
	}
	root, _, ok := batchsnap.ParseDescriptorKey(prefix + "/" + batchsnap.DescriptorObject)
	if !ok {
		return "", fmt.Errorf("%w: the latest pointer's descriptor %s is not under a snapshot root", ErrUnavailable, prefix)
	}
	key := batchsnap.Artifacts(root, ids[0]).ObjectChunk(0)
	if err := env.StorePut(ctx, key, []byte("a stray object: an earlier attempt's orphan under the same snapshot id\n")); err != nil {
		return "", err
	}
	return key, nil
}
