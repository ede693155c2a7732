package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/oplogha/oplogha/harness/audit"
	"github.com/oplogha/oplogha/harness/scenario"
	"github.com/oplogha/oplogha/impl/legacy"
	"github.com/oplogha/oplogha/impl/objstore/localdir"
	"github.com/oplogha/oplogha/impl/state"
)

// legacyBase reads the scenario's legacy root the way an operator would
// point a master at it, and returns what the import must bring (for the
// audits) and the master settings that ask for the import. When the root
// has an expect.json (the committed fixtures do), its independently
// computed digest must agree, so a reader bug cannot hide behind itself.
func (r *run) legacyBase(ctx context.Context) (*audit.Base, map[string]any, error) {
	li := r.sc.Cluster.LegacyImport
	root := li.Root
	if !filepath.IsAbs(root) {
		root = filepath.Join(r.opts.Cache.Root, root)
	}
	cluster := li.ClusterID
	if cluster == "" {
		cluster = r.sc.Cluster.ClusterID
	}
	src := legacy.Source{Store: &localdir.Store{Root: root}}
	id := li.SnapshotID
	var err error
	if id == "" {
		if id, err = src.Latest(ctx, cluster); err != nil {
			return nil, nil, fmt.Errorf("legacy root %s: %w", li.Root, err)
		}
	}
	snap, err := src.Open(ctx, cluster, id)
	if err != nil {
		return nil, nil, fmt.Errorf("legacy root %s: %w", li.Root, err)
	}
	b := &audit.Base{Fixture: li.Root, LegacyClusterID: cluster, LegacySnapshotID: id, LegacySeq: snap.Seq, Digest: string(snap.State.Digest()), Segments: snap.Segments}
	snap.State.Objects(func(k state.ObjectKey, o state.Object) bool {
		b.Objects = append(b.Objects, audit.BaseObject{Tenant: k.Tenant, Key: k.Key, Size: o.Size})
		return true
	})
	if data, err := os.ReadFile(filepath.Join(root, "expect.json")); err == nil {
		var exp struct {
			SnapshotID string `json:"snapshot_id"`
			Digest     string `json:"state_digest"`
		}
		if err := json.Unmarshal(data, &exp); err != nil {
			return nil, nil, fmt.Errorf("legacy root %s: expect.json: %w", li.Root, err)
		}
		if exp.SnapshotID == id && exp.Digest != b.Digest {
			return nil, nil, fmt.Errorf("legacy root %s: the reader's digest %s differs from expect.json's %s", li.Root, b.Digest, exp.Digest)
		}
	}
	cfg := map[string]any{"snapshot_bootstrap_mode": "legacy-import", "legacy_import_root": root, "legacy_import_cluster_id": cluster, "legacy_import_snapshot_id": id}
	return b, cfg, nil
}

// assertRefuses starts one more master with the refused settings and
// requires it to exit non-zero by itself with a line saying why.
func (r *run) assertRefuses(ctx context.Context, a *scenario.RefusesAssert) error {
	r.refusals++
	timeout := a.Timeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	name := fmt.Sprintf("refused-%d", r.refusals)
	res, err := r.cluster.Masters.TryConfig(ctx, name, a.Config, timeout)
	if err != nil {
		return err
	}
	switch {
	case !res.Exited:
		return fmt.Errorf("%s was still running after %v with %v: the configuration was not refused", name, timeout, a.Config)
	case res.ExitCode == 0:
		return fmt.Errorf("%s exited 0 with %v: a refusal exits non-zero", name, a.Config)
	case !strings.Contains(res.Line, a.Says):
		return fmt.Errorf("%s exited %d saying %q, want it to say %q", name, res.ExitCode, res.Line, a.Says)
	}
	r.events.add("note", "refused", name, fmt.Sprintf("exit %d: %s", res.ExitCode, strings.TrimPrefix(res.Line, "master: ")), true)
	return nil
}
