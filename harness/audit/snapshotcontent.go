package audit

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/oplogha/oplogha/harness/model"
	"github.com/oplogha/oplogha/harness/objects"
	"github.com/oplogha/oplogha/impl/contract"
	"github.com/oplogha/oplogha/impl/contract/batchsnap"
	"github.com/oplogha/oplogha/impl/contract/keyspace"
)

// KeptSnapshotsDir is the bundle directory that holds, at their keys, the
// objects of every snapshot the run kept (bundle.SnapshotsDir).
const KeptSnapshotsDir = "snapshots"

// KeptSnapshot is one snapshot a pointer named during the run, and whether
// the harness copied its objects into the bundle (with its own store
// client, byte for byte) to be judged from there.
type KeptSnapshot struct {
	SnapshotID string `json:"snapshot_id"`
	// Pointer is the pointer value that named it (upstream's JSON).
	Pointer string `json:"pointer"`
	SeenAt  int64  `json:"seen_at_ns"` // since the run's start
	Kept    bool   `json:"kept"`
	// Whole: a pointer still named the snapshot once the copy ended, so no
	// correct collector could have removed any of its objects during it.
	// A copy that is not whole may miss objects a correct GC removed.
	Whole   bool  `json:"whole"`
	Objects int   `json:"objects,omitempty"`
	Bytes   int64 `json:"bytes,omitempty"`
	// OverBudget: not kept because the bundle's budget for snapshot
	// objects was spent (a soak's large states).
	OverBudget bool   `json:"over_budget,omitempty"`
	Error      string `json:"error,omitempty"` // why it was not kept
}

// KeptStore reads the snapshot objects a bundle kept, by key.
func KeptStore(bundleDir string) objects.Reader {
	return objects.Dir(filepath.Join(bundleDir, KeptSnapshotsDir))
}

// SnapshotContent decodes every snapshot the run kept through the
// contract (impl/contract/batchsnap, pinned to upstream's vectors: exact
// keys, each object held to its size and CRC32C) and judges its content
// against the harness's model at the snapshot's cursor: the state of the
// last durable move to that cursor before the pointer that first named it
// was put. The snapshot a legacy import published is the model's start
// for that history; it is judged against the fixture's digest, which the
// fixture's generator computed independently. Both final pointers'
// snapshots must be kept and judged unless a fault damaged them or the
// bundle's budget was spent.
func SnapshotContent(in *Input) Result {
	if in.Objects == nil && in.Snapshots == nil {
		return Result{Pass: true, Summary: "no snapshot store in this run"}
	}
	if in.Snapshots == nil {
		return Result{Summary: "the bundle keeps no snapshot objects", Evidence: []string{
			"the run had a snapshot store, but the bundle has no " + KeptSnapshotsDir + ".json: snapshot contents cannot be judged"}}
	}
	ks, err := keyspace.New(in.ClusterID)
	if err != nil {
		return Result{Summary: "bad cluster id", Evidence: []string{err.Error()}}
	}
	d, err := durableOf(in)
	if err != nil {
		return Result{Summary: "cannot read the durable history", Evidence: []string{err.Error()}}
	}
	var ev evidence
	n := map[string]int{}
	notJudged := map[string]int{}
	firstPut := pointerPuts(ks, in)
	imports := map[int64]bool{}
	for _, m := range d.Moves {
		if m.Kind == model.MoveImport {
			imports[m.Revision] = true
		}
	}
	corrupted := corruptedSnapshots(in.Events)
	st := KeptStore(in.Dir)
	judged := map[string]bool{}
	// What each kept snapshot holds, decoded; then the model's states at
	// the cursors they name, in one walk.
	type held struct {
		ks  KeptSnapshot
		p   batchsnap.Pointer
		rev int64 // the revision of the pointer put that first named it
		s   *model.State
	}
	var toJudge []held
	for _, k := range in.Snapshots {
		if !k.Kept {
			notJudged["not kept: "+notKeptReason(k)]++
			continue
		}
		p, err := batchsnap.DecodePointer([]byte(k.Pointer))
		if err != nil {
			ev.add("%s: the kept pointer does not decode: %v", k.SnapshotID, err)
			continue
		}
		rev, ok := firstPut[p.SnapshotID]
		if !ok {
			ev.add("%s: kept, but no pointer put in the etcd history names it", p.SnapshotID)
			continue
		}
		s, err := model.ReadSnapshot(context.Background(), contract.ObjectGetter(st), p)
		switch {
		case err != nil && corrupted[p.SnapshotID]:
			notJudged["damaged by a fault"]++
			continue
		case err != nil && !k.Whole && errors.Is(err, objects.ErrNotFound):
			notJudged["collected while it was copied"]++
			continue
		case err != nil:
			ev.add("[snapshot-decodes] %s (named at rev %d): %v", p.SnapshotID, rev, err)
			continue
		}
		n["snapshot-decodes"]++
		toJudge = append(toJudge, held{ks: k, p: p, rev: rev, s: s})
	}
	// The model's state at each (cursor, before-revision) a snapshot asks
	// for: the last move to that cursor before the pointer was put.
	type found struct {
		s   *model.State
		err error
		rev int64
	}
	at := make([]found, len(toJudge))
	d.Walk(modelStart(in), func(m model.Move, s *model.State, err error) bool {
		for i, h := range toJudge {
			if m.Revision >= h.rev || m.Cursor != h.s.Cursor() || imports[h.rev] {
				continue
			}
			if s != nil {
				at[i] = found{s: s.Clone(), rev: m.Revision}
			} else {
				at[i] = found{err: err, rev: m.Revision}
			}
		}
		return true
	})
	for i, h := range toJudge {
		id := h.p.SnapshotID
		if imports[h.rev] {
			n["import-snapshot-content"]++
			judgeImport(&ev, id, h.s, in.Base)
			judged[id] = true
			continue
		}
		f := at[i]
		switch {
		case f.s == nil && f.err == nil:
			ev.add("[snapshot-content] %s at %s: the durable prefix was never at its cursor before its pointer was put (rev %d)",
				id, h.s.Cursor(), h.rev)
		case f.s == nil:
			notJudged[fmt.Sprintf("the model cannot rebuild the state at its cursor (%v)", f.err)]++
			judged[id] = true // kept and decoded: the model's limit, not the bundle's
		default:
			n["snapshot-content"]++
			judged[id] = true
			for _, line := range stateDiff(f.s, h.s, 5) {
				ev.add("[snapshot-content] %s (named at rev %d) at %s: %s", id, h.rev, h.s.Cursor(), line)
			}
		}
	}
	for _, slot := range []struct{ name, key string }{{"latest", ks.SnapshotLatest()}, {"fallback", ks.SnapshotFallback()}} {
		raw, ok := in.Final.Keys[slot.key]
		if !ok {
			continue
		}
		p, err := batchsnap.DecodePointer([]byte(raw))
		if err != nil {
			continue // objects and keyspace-order judge a pointer that does not decode
		}
		n["final-snapshot-judged"]++
		if judged[p.SnapshotID] || corrupted[p.SnapshotID] || overBudget(in.Snapshots, p.SnapshotID) {
			continue
		}
		ev.add("[final-snapshot-judged] the final %s names %s, whose content was not judged: %s", slot.name, p.SnapshotID,
			keptFate(in.Snapshots, p.SnapshotID))
	}
	for why, c := range notJudged {
		n["not judged: "+why] += c
	}
	summary := fmt.Sprintf("%d snapshots kept of %d named; %d judged against the model, %d imports against the fixture",
		countKept(in.Snapshots), len(in.Snapshots), n["snapshot-content"], n["import-snapshot-content"])
	if len(notJudged) > 0 {
		var parts []string
		for _, why := range slices.Sorted(maps.Keys(notJudged)) {
			parts = append(parts, fmt.Sprintf("%d %s", notJudged[why], why))
		}
		summary += "; not judged: " + strings.Join(parts, ", ")
	}
	return Result{Pass: ev.empty(), Summary: summary, Evidence: ev.list(), Exercised: n}
}

// judgeImport judges the snapshot a legacy import published against what
// the fixture holds: the digest its generator computed and its keys.
func judgeImport(ev *evidence, id string, s *model.State, base *Base) {
	if base == nil {
		ev.add("[import-snapshot-content] %s was published by a legacy import, but the scenario imports nothing", id)
		return
	}
	if got := s.Digest(); got != base.Digest {
		ev.add("[import-snapshot-content] %s: the imported snapshot's content has digest %s, the fixture's (%s) is %s", id, got, base.Fixture, base.Digest)
	}
	objs, segs := s.Len()
	if objs != len(base.Objects) || segs != base.Segments {
		ev.add("[import-snapshot-content] %s holds %d objects and %d segments, the fixture %d and %d", id, objs, segs, len(base.Objects), base.Segments)
	}
	for _, o := range base.Objects {
		got, ok := s.Object(o.Tenant, o.Key)
		switch {
		case !ok:
			ev.add("[import-snapshot-content] %s: the fixture's %s/%s is missing", id, o.Tenant, o.Key)
		case got.Size != o.Size:
			ev.add("[import-snapshot-content] %s: %s/%s has size %d, the fixture's %d", id, o.Tenant, o.Key, got.Size, o.Size)
		}
	}
}

// importStart is the model's start for a legacy import: the content of
// the snapshot the import published (in the import's revision), decoded
// from the bundle's kept copy, provided that it is what the fixture holds
// (SnapshotContent judges it; a start that is not is no start).
func importStart(in *Input) model.Start {
	if in.Snapshots == nil || in.Dir == "" {
		return nil
	}
	ks, err := keyspace.New(in.ClusterID)
	if err != nil {
		return nil
	}
	return func(m model.Move) (*model.State, error) {
		var raw []byte
		for _, e := range in.Etcd {
			if e.Revision == m.Revision && e.Type == "put" && e.Key == ks.SnapshotLatest() {
				raw = e.Value
			}
		}
		if raw == nil {
			return nil, fmt.Errorf("no snapshot pointer was published with the import")
		}
		p, err := batchsnap.DecodePointer(raw)
		if err != nil {
			return nil, fmt.Errorf("the import's pointer: %w", err)
		}
		s, err := model.ReadSnapshot(context.Background(), KeptStore(in.Dir), p)
		if err != nil {
			return nil, fmt.Errorf("the imported snapshot %s, as kept: %w", p.SnapshotID, err)
		}
		if in.Base == nil || s.Digest() != in.Base.Digest {
			return nil, fmt.Errorf("the imported snapshot %s is not the fixture's content (snapshot-content says how)", p.SnapshotID)
		}
		return s, nil
	}
}

// pointerPuts is, by snapshot id, the first revision whose put of either
// pointer slot named it.
func pointerPuts(ks keyspace.Keyspace, in *Input) map[string]int64 {
	out := map[string]int64{}
	for _, e := range in.Etcd {
		if e.Type != "put" || (e.Key != ks.SnapshotLatest() && e.Key != ks.SnapshotFallback()) {
			continue
		}
		p, err := batchsnap.DecodePointer(e.Value)
		if err != nil {
			continue
		}
		if _, seen := out[p.SnapshotID]; !seen {
			out[p.SnapshotID] = e.Revision
		}
	}
	return out
}

// corruptedSnapshots are the snapshot ids a fault damaged behind the store.
func corruptedSnapshots(events []Event) map[string]bool {
	out := map[string]bool{}
	for _, e := range events {
		for _, id := range e.Corrupted {
			out[id] = true
		}
	}
	return out
}

func notKeptReason(k KeptSnapshot) string {
	if k.OverBudget {
		return "over the bundle's budget"
	}
	return "gone or unreadable before it could be copied"
}

func overBudget(kept []KeptSnapshot, id string) bool {
	for _, k := range kept {
		if k.SnapshotID == id && k.OverBudget {
			return true
		}
	}
	return false
}

// keptFate says what became of a snapshot the run meant to keep.
func keptFate(kept []KeptSnapshot, id string) string {
	for _, k := range kept {
		if k.SnapshotID != id {
			continue
		}
		if !k.Kept {
			return "not kept: " + k.Error
		}
		return "kept, but not decodable or not tied to the history (see above)"
	}
	return "the harness never kept it"
}

func countKept(kept []KeptSnapshot) int {
	c := 0
	for _, k := range kept {
		if k.Kept {
			c++
		}
	}
	return c
}

// stateDiff names, up to limit lines, how got differs from want (nil when
// it does not): objects missing, extra or different, segments likewise.
func stateDiff(want, got *model.State, limit int) []string {
	if want.Digest() == got.Digest() {
		return nil
	}
	var out []string
	add := func(format string, args ...any) {
		if len(out) < limit {
			out = append(out, fmt.Sprintf(format, args...))
		}
	}
	wo, ws := want.Len()
	gobj, gseg := got.Len()
	if wo != gobj || ws != gseg {
		add("%d objects and %d segments, the model %d and %d", gobj, gseg, wo, ws)
	}
	seen := map[model.ObjectKey]bool{}
	for _, k := range want.Keys() {
		seen[k] = true
		w, _ := want.Object(k.Tenant, k.Key)
		g, ok := got.Object(k.Tenant, k.Key)
		switch {
		case !ok:
			add("%s missing; the durable history holds it (size %d)", k, w.Size)
		case !g.Equal(w):
			add("%s differs: %s", k, objectDiff(contractObject(w), contractObject(g)))
		}
	}
	for _, k := range got.Keys() {
		if !seen[k] {
			g, _ := got.Object(k.Tenant, k.Key)
			add("%s present (size %d), which the durable history does not hold at this cursor", k, g.Size)
		}
	}
	wantEP := want.Endpoints()
	for _, ep := range wantEP {
		w, _ := want.Segment(ep)
		g, ok := got.Segment(ep)
		switch {
		case !ok:
			add("segment %s missing; the durable history holds it", ep)
		case g != w:
			add("segment %s is %+v, the model's %+v", ep, g, w)
		}
	}
	for _, ep := range got.Endpoints() {
		if !slices.Contains(wantEP, ep) {
			add("segment %s present, which the durable history does not hold at this cursor", ep)
		}
	}
	if len(out) == 0 {
		add("digest %s, the model's %s", got.Digest(), want.Digest())
	}
	return out
}
