package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/oplogha/oplogha/impl/contract/batchsnap"
	"github.com/oplogha/oplogha/impl/contract/keyspace"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/oplogha/oplogha/harness/audit"
	"github.com/oplogha/oplogha/harness/bundle"
	"github.com/oplogha/oplogha/harness/etcddump"
	"github.com/oplogha/oplogha/harness/history"
	"github.com/oplogha/oplogha/harness/leak"
	"github.com/oplogha/oplogha/harness/masters"
	"github.com/oplogha/oplogha/harness/objects"
	"github.com/oplogha/oplogha/harness/s3server"
	"github.com/oplogha/oplogha/impl/contract/verify"
)

// collect reads the evidence while the cluster still runs: every master's
// health, full state and metrics, and etcd's final keys and MVCC history.
// Nothing it reads holds it up past a deadline of its own: what it cannot
// read (etcd without quorum, a store that answers nothing, a master that
// does not answer) it records in r.unread, and the audits that judge from
// it say they cannot judge rather than judge what is missing.
func (r *run) collect(ctx context.Context) error {
	r.prog.set("collecting evidence", "")
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	nodesDir := filepath.Join(r.dir, bundle.NodesDir)
	if err := os.MkdirAll(nodesDir, 0o755); err != nil {
		return err
	}
	for _, n := range r.cluster.Masters.Nodes {
		node, err := r.collectNode(ctx, n, nodesDir)
		if err != nil {
			return err
		}
		if err := bundle.WriteJSON(nodesDir, n.Name+".json", node); err != nil {
			return err
		}
	}
	// The etcd dump and the object listing must describe one moment: a
	// standby that publishes and collects garbage between the two would
	// leave a dump whose pointers name what the listing no longer holds.
	// Every running master is frozen (SIGSTOP) until both are read, and
	// the sampler stopped first: what it keeps must be named in the
	// history read below (CI once kept a snapshot whose pointer put,
	// in flight at the freeze, committed after etcd was read).
	if r.stopSampler != nil {
		r.stopSampler()
	}
	resume, err := r.freezeMasters()
	defer resume()
	if err != nil {
		return err
	}
	cli, ks, err := r.etcd()
	if err != nil {
		return err
	}
	defer cli.Close()
	fctx, fcancel := context.WithTimeout(ctx, collectRead)
	final, ferr := etcddump.ReadFinal(fctx, cli, ks)
	fcancel()
	etcdOK := ferr == nil
	if etcdOK {
		if err := bundle.WriteJSON(r.dir, bundle.EtcdFinalFile, final); err != nil {
			return err
		}
	} else {
		r.cannotRead(audit.EvidenceEtcd, ferr)
	}
	if err := bundle.WriteJSON(r.dir, bundle.EtcdMembersFile, r.cluster.Etcd.Status(ctx)); err != nil {
		return err
	}
	st, err := r.store()
	if err != nil {
		return err
	}
	var list []objects.Object
	storeOK := st != nil
	if st != nil {
		lctx, lcancel := context.WithTimeout(ctx, collectRead)
		list, err = st.List(lctx, r.snapshotPrefix())
		lcancel()
		if err != nil {
			storeOK = false
			r.cannotRead(audit.EvidenceStore, fmt.Errorf("list %s: %w", r.snapshotPrefix(), err))
		}
	}
	if !etcdOK {
		return nil // every record below reads etcd
	}
	// The retention series ends with the frozen cluster: a bound broken in
	// the last second of a run (a step that fails right after a snapshot
	// lands) would otherwise be seen or missed by where the once-a-second
	// sampler's tick fell, and a replay could not fail as its original did.
	if storeOK {
		sctx, scancel := context.WithTimeout(ctx, 5*time.Second)
		r.sampleOnce(sctx, cli, ks, st)
		scancel()
	}
	// The verifier opens every pointer's snapshot (one read per snapshot);
	// the objects audit's pointer checks are its verdicts.
	var vrep *verify.Report
	var verr error
	if storeOK || st == nil {
		vctx, vcancel := context.WithTimeout(ctx, collectVerify)
		vrep, verr = r.verifyNamespace(vctx, cli, ks, st)
		vcancel()
	}
	if storeOK {
		if err := r.collectObjects(final, vrep, verr, st, list); err != nil {
			return fmt.Errorf("object store: %w", err)
		}
	}
	if verr != nil {
		return fmt.Errorf("verify the namespace: %w", verr)
	}
	hctx, hcancel := context.WithTimeout(ctx, collectHistory)
	err = r.keepHistory(hctx, cli, ks, final.Revision)
	hcancel()
	if err != nil {
		r.cannotRead(audit.EvidenceEtcd, err)
		return nil
	}
	// Every snapshot a pointer named: the final ones while the masters
	// are frozen (whole), then those of the history the sampler missed.
	if storeOK {
		live := func(ctx context.Context) ([2][]byte, error) { return readPointersAt(ctx, cli, ks, final.Revision) }
		r.keepNamedAt(ctx, cli, ks, st, final.Revision)
		events, err := etcddump.ReadHistoryFile(filepath.Join(r.dir, bundle.EtcdHistoryFile))
		if err != nil {
			return err
		}
		r.keeper.noteHistory(ctx, st, ks, events, live)
	}
	return nil
}

// The bounds of collect's reads: one read of etcd's keys or the store's
// listing, the namespace verifier (it opens every pointer's snapshot), the
// MVCC history, one master's health and metrics, one master's state dump.
const (
	collectRead    = 10 * time.Second
	collectVerify  = 60 * time.Second
	collectHistory = 60 * time.Second
	collectNode    = 5 * time.Second
	collectState   = 30 * time.Second
)

// cannotRead records that the evidence ev (audit.EvidenceEtcd,
// EvidenceStore, or "node <name>") could not be read at the end, and why
// (the first reason stays).
func (r *run) cannotRead(ev string, err error) {
	if r.unread == nil {
		r.unread = audit.Unread{}
	}
	if _, ok := r.unread[ev]; !ok {
		r.unread[ev] = err.Error()
	}
	r.events.add("note", "collect", ev, "could not read: "+err.Error(), false)
}

// collectNode reads one master's health, state and metrics, each with a
// deadline; what it cannot read is recorded (cannotRead), not fatal.
func (r *run) collectNode(ctx context.Context, n *masters.Node, nodesDir string) (audit.Node, error) {
	node := audit.Node{Name: n.Name}
	p, ok := r.cluster.Group.Get(n.Name)
	if !ok || !p.Running() {
		return node, nil
	}
	node.Running = true
	ev := "node " + n.Name
	hctx, cancel := context.WithTimeout(ctx, collectNode)
	h, err := r.cluster.Masters.NodeHealth(hctx, n)
	cancel()
	if err != nil {
		r.cannotRead(ev, fmt.Errorf("health: %w", err))
		return node, nil
	}
	node.Health = h
	sctx, cancel := context.WithTimeout(ctx, collectState)
	st, err := r.cluster.Masters.State(sctx, n, true)
	cancel()
	switch {
	case errors.Is(err, masters.ErrNotExposed): // the audits that read it skip, saying why
	case err != nil:
		r.cannotRead(ev, fmt.Errorf("state: %w", err))
	}
	node.State = st
	mctx, cancel := context.WithTimeout(ctx, collectNode)
	err = scrape(mctx, r.cluster.Masters.MetricsURL(n), filepath.Join(nodesDir, n.Name+".metrics.txt"))
	cancel()
	if err != nil {
		// no audit reads the metrics: a note, not missing evidence
		r.events.add("note", "collect", n.Name, "metrics not read: "+err.Error(), false)
	}
	return node, nil
}

// freezeMasters pauses every running master and returns what resumes them.
func (r *run) freezeMasters() (func(), error) {
	var paused []string
	resume := func() {
		for _, name := range paused {
			if err := r.env.Resume(name); err != nil {
				r.events.add("note", "collect", name, "resume after collection: "+err.Error(), false)
			}
		}
	}
	for _, n := range r.cluster.Masters.Nodes {
		if p, ok := r.cluster.Group.Get(n.Name); !ok || !p.Running() {
			continue
		}
		if err := r.env.Pause(n.Name); err != nil {
			return resume, fmt.Errorf("freeze %s for collection: %w", n.Name, err)
		}
		paused = append(paused, n.Name)
	}
	r.events.add("note", "collect", strings.Join(paused, ","), "masters frozen while etcd and the object store are read", true)
	return resume, nil
}

func scrape(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("scrape %s: %w", url, err)
	}
	defer resp.Body.Close()
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, resp.Body)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeBundle writes what the run holds in memory and copies every log and
// config from the work directory; data directories stay out of the bundle.
func (r *run) writeBundle(meta bundle.Meta) error {
	sc, err := r.sc.Marshal()
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(r.dir, bundle.ScenarioFile), sc, 0o644); err != nil {
		return err
	}
	if err := history.WriteFile(filepath.Join(r.dir, bundle.HistoryFile), r.rec.Ops()); err != nil {
		return err
	}
	events, _ := r.events.snapshot()
	if err := bundle.WriteEvents(r.dir, events); err != nil {
		return err
	}
	if err := bundle.WriteRetention(r.dir, r.retention.all()); err != nil {
		return err
	}
	for _, name := range []string{bundle.EtcdHistoryFile} {
		if _, err := os.Stat(filepath.Join(r.dir, name)); os.IsNotExist(err) {
			// The run failed before collection: an empty history is honest evidence.
			if err := os.MkdirAll(filepath.Dir(filepath.Join(r.dir, name)), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(r.dir, name), nil, 0o644); err != nil {
				return err
			}
		}
	}
	if _, err := os.Stat(filepath.Join(r.dir, bundle.EtcdFinalFile)); os.IsNotExist(err) {
		if err := bundle.WriteJSON(r.dir, bundle.EtcdFinalFile, etcddump.Final{}); err != nil {
			return err
		}
	}
	if len(r.unread) > 0 {
		if err := bundle.WriteJSON(r.dir, bundle.UnreadFile, r.unread); err != nil {
			return err
		}
	}
	if r.base != nil {
		if err := bundle.WriteJSON(r.dir, bundle.BaseFile, r.base); err != nil {
			return err
		}
	}
	if r.cluster != nil && (r.cluster.S3 != nil || r.cluster.StoreDir != "") {
		if err := r.keeper.write(r.dir); err != nil {
			return err
		}
	}
	if err := copyLogs(r.work, filepath.Join(r.dir, bundle.LogsDir)); err != nil {
		return err
	}
	var secrets []string
	if r.cluster != nil {
		secrets = r.cluster.Secrets()
	}
	hashed, err := leak.Hash(secrets)
	if err != nil {
		return err
	}
	if err := bundle.WriteJSON(r.dir, bundle.SecretsFile, hashed); err != nil {
		return err
	}
	return bundle.WriteJSON(r.dir, bundle.MetaFile, meta)
}

func copyLogs(work, dst string) error {
	return filepath.Walk(work, func(path string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		if !strings.HasSuffix(path, ".log") && !strings.HasSuffix(path, ".yaml") {
			return nil
		}
		rel, _ := filepath.Rel(work, path)
		out := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(out, data, 0o644)
	})
}

// verifyNamespace runs what oplogctl verify runs on the namespace the run
// left (the masters still frozen) and keeps its report for the
// operator-verify audit. With a store, the verifier opens each pointer's
// snapshot by exact keys (batchsnap.Open); collectObjects takes its
// verdicts from the report returned.
func (r *run) verifyNamespace(ctx context.Context, cli *clientv3.Client, ks keyspace.Keyspace, st objects.Reader) (*verify.Report, error) {
	opt := verify.Options{Store: st}
	if st != nil {
		opt.ObjectRoot = r.snapshotPrefix()
	}
	rep, err := verify.Namespace(ctx, cli, ks, opt)
	if err != nil {
		return nil, err
	}
	return rep, bundle.WriteJSON(r.dir, bundle.VerifyFile, rep)
}

// collectObjects records every final pointer with the verifier's verdict
// on the snapshot it names (vrep, from verifyNamespace, which opened each
// by exact keys as a recovering node would; verr when it could not run),
// and lists the cluster's snapshot prefix.
func (r *run) collectObjects(final etcddump.Final, vrep *verify.Report, verr error, st objects.Reader, list []objects.Object) error {
	rep := audit.StoreReport{Store: st.Name()}
	ks, err := r.keyspace()
	if err != nil {
		return err
	}
	for _, slot := range []struct{ name, key string }{{"latest", ks.SnapshotLatest()}, {"fallback", ks.SnapshotFallback()}} {
		raw, ok := final.Keys[slot.key]
		if !ok {
			continue
		}
		pc := audit.PointerCheck{Slot: slot.name, Raw: raw}
		p, err := batchsnap.DecodePointer([]byte(raw))
		if err != nil {
			pc.Error = err.Error()
			rep.Pointers = append(rep.Pointers, pc)
			continue
		}
		pc.Valid, pc.SnapshotID = true, p.SnapshotID
		pc.Verified, pc.Error = openedByVerifier(slot.name, p.SnapshotID, vrep, verr)
		rep.Pointers = append(rep.Pointers, pc)
	}
	for _, o := range list {
		rep.Objects++
		rep.Bytes += o.Size
		if len(rep.Listing) < 2000 {
			rep.Listing = append(rep.Listing, audit.ListedObject{Key: o.Key, Size: o.Size})
		}
	}
	rep.Snapshots = countGroups(list, r.snapshotPrefix())
	rep.Access = r.storeAccess()
	return bundle.WriteJSON(r.dir, bundle.ObjectsFile, rep)
}

// maxStoreRequests bounds the object-store requests a bundle keeps.
const maxStoreRequests = 50000

// storeAccess reads the object store's access log for the requests that
// wrote or deleted objects under the cluster's snapshot root (nil: the
// store keeps no log the harness can read).
func (r *run) storeAccess() *audit.StoreAccess {
	if r.cluster == nil || r.cluster.S3 == nil || r.cluster.S3.AccessLog == "" {
		return nil
	}
	prefix := r.snapshotPrefix()
	reqs, truncated, err := s3server.ReadAccessLog(r.cluster.S3.AccessLog, func(key string) bool { return strings.HasPrefix(key, prefix) }, maxStoreRequests)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	acc := &audit.StoreAccess{Truncated: truncated, Requests: []audit.StoreRequest{}}
	if err != nil {
		acc.Error = err.Error()
	}
	for _, q := range reqs {
		req := audit.StoreRequest{Op: q.Op, Key: q.Key, Status: q.Status}
		if !q.At.IsZero() {
			req.At = q.At.Unix()
		}
		acc.Requests = append(acc.Requests, req)
	}
	return acc
}

// openedByVerifier is the verifier's verdict on the snapshot the slot's
// final pointer names: verified, or why not. A verifier that did not run,
// or read another pointer in the slot, verified nothing.
func openedByVerifier(slot, id string, vrep *verify.Report, verr error) (bool, string) {
	if vrep == nil {
		if verr == nil {
			verr = fmt.Errorf("no report")
		}
		return false, "the namespace verifier did not run: " + verr.Error()
	}
	for _, vp := range vrep.Pointers {
		switch {
		case vp.Slot != slot:
			continue
		case vp.SnapshotID != id:
			return false, fmt.Sprintf("the verifier read a %s pointer naming %s, the final keys one naming %s", slot, vp.SnapshotID, id)
		case vp.Opened:
			return true, ""
		case vp.Error != "":
			return false, vp.Error
		default:
			return false, "the verifier did not open it"
		}
	}
	return false, fmt.Sprintf("the verifier found no decodable %s pointer", slot)
}
