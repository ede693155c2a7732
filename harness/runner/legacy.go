package runner

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/oplogha/oplogha/harness/audit"
	"github.com/oplogha/oplogha/harness/scenario"
	"github.com/oplogha/oplogha/impl/contract/legacysnap"
)

// legacyBase reads the scenario's legacy root the way an operator would
// point a master at it, through the contract's reader of the legacy layout
// (impl/contract/legacysnap), and returns what the import must bring (for
// the audits) and the master settings that ask for the import. The objects
// (tenant, key, size), the segment count and the legacy sequence are what
// upstream's decoder sees in the files. The state digest an import must
// record is the one the root's expect.json gives for the snapshot: the
// fixture generator computed it by applying the same content as OpLog
// mutations, a path independent of both the reader and the importer's
// conversion. A root without that digest is refused, as is a snapshot of
// which upstream's decoder drops objects (no import brings it in whole) or
// whose counts differ from expect.json's.
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
	b, err := readLegacyBase(ctx, li.Root, root, cluster, li.SnapshotID)
	if err != nil {
		return nil, nil, err
	}
	id := b.LegacySnapshotID
	cfg := map[string]any{"snapshot_bootstrap_mode": "legacy-import", "legacy_import_root": root,
		"legacy_import_cluster_id": cluster, "legacy_import_snapshot_id": id}
	return b, cfg, nil
}

// readLegacyBase reads snapshot id (latest.txt's when "") of cluster under
// root (named fixture in the base and in errors) through the contract and
// its expect.json: see legacyBase.
func readLegacyBase(ctx context.Context, fixture, root, cluster, id string) (*audit.Base, error) {
	dir, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("legacy root %s: %w", fixture, err)
	}
	defer dir.Close()
	src := legacysnap.Source{Store: rootGetter{dir}}
	if id == "" {
		if id, err = src.Latest(ctx, cluster); err != nil {
			return nil, fmt.Errorf("legacy root %s: %w", fixture, err)
		}
	}
	snap, err := src.Read(ctx, cluster, id)
	if err != nil {
		return nil, fmt.Errorf("legacy root %s: %w", fixture, err)
	}
	d := snap.Decoded
	if n := len(d.Skipped); n > 0 {
		return nil, fmt.Errorf("legacy root %s: upstream's decoder drops %d of the %d objects of %s (%s): no import brings it in whole",
			fixture, n, n+len(d.Objects), id, d.Skipped[0].Reason)
	}
	exp, err := expectedImport(root, id)
	if err != nil {
		return nil, fmt.Errorf("legacy root %s: %w", fixture, err)
	}
	if exp.objects != len(d.Objects) || (exp.segments >= 0 && exp.segments != len(d.Segments)) {
		return nil, fmt.Errorf("legacy root %s: %s decodes to %d objects and %d segments, expect.json says %d and %d",
			fixture, id, len(d.Objects), len(d.Segments), exp.objects, exp.segments)
	}
	b := &audit.Base{Fixture: fixture, LegacyClusterID: cluster, LegacySnapshotID: id, LegacySeq: snap.Seq, Digest: exp.digest, Segments: len(d.Segments)}
	for _, o := range d.Objects {
		b.Objects = append(b.Objects, audit.BaseObject{Tenant: o.Tenant, Key: o.Key, Size: o.Size})
	}
	return b, nil
}

// importExpect is what a legacy root's expect.json says an import of one
// of its snapshots brings in (segments -1: not given, for an older one).
type importExpect struct {
	digest   string
	objects  int
	segments int
}

// expectedImport reads the root's expect.json (fixtures/legacy/legacyfixture
// writes it) for snapshot id: the latest one's outcome, counts and digest,
// or an older one's.
func expectedImport(root, id string) (importExpect, error) {
	data, err := os.ReadFile(filepath.Join(root, "expect.json"))
	if err != nil {
		return importExpect{}, fmt.Errorf("expect.json (the state digest an import must record): %w", err)
	}
	var exp struct {
		SnapshotID string `json:"snapshot_id"`
		Outcome    string `json:"outcome"`
		Error      string `json:"error"`
		Objects    int    `json:"objects"`
		Segments   int    `json:"segments"`
		Digest     string `json:"state_digest"`
		Older      []struct {
			SnapshotID string `json:"snapshot_id"`
			Objects    int    `json:"objects"`
			Digest     string `json:"state_digest"`
		} `json:"older"`
	}
	if err := json.Unmarshal(data, &exp); err != nil {
		return importExpect{}, fmt.Errorf("expect.json: %w", err)
	}
	out := importExpect{segments: -1}
	switch {
	case exp.SnapshotID == id && exp.Outcome != "ok":
		return importExpect{}, fmt.Errorf("expect.json: an import of %s fails (%s)", id, exp.Error)
	case exp.SnapshotID == id:
		out = importExpect{digest: exp.Digest, objects: exp.Objects, segments: exp.Segments}
	default:
		for _, o := range exp.Older {
			if o.SnapshotID == id {
				out.digest, out.objects = o.Digest, o.Objects
			}
		}
	}
	if out.digest == "" {
		return importExpect{}, fmt.Errorf("expect.json gives no state digest for snapshot %s", id)
	}
	return out, nil
}

// rootGetter reads a legacy root on the local disk for the contract's
// reader, confined to the root.
type rootGetter struct{ root *os.Root }

func (g rootGetter) Get(_ context.Context, key string) (io.ReadCloser, error) {
	f, err := g.root.Open(filepath.FromSlash(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w in %s", legacysnap.ErrNotFound, g.root.Name())
	}
	return f, err
}

// refusesWait is how long a refused master has to exit when the assert
// does not say.
const refusesWait = 30 * time.Second

// assertRefuses starts one more master with the refused settings and
// requires it to exit non-zero by itself with a line saying why.
func (r *run) assertRefuses(ctx context.Context, a *scenario.RefusesAssert) error {
	r.refusals++
	timeout := cmp.Or(a.Timeout, refusesWait)
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
