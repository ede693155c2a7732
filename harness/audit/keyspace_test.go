package audit

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/oplogha/oplogha/impl/contract/batchlog"
	"github.com/oplogha/oplogha/impl/contract/batchsnap"
	"github.com/oplogha/oplogha/impl/contract/keyspace"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/harness/etcddump"
)

// revs builds an MVCC history the way the protocol writes it, one revision
// per transaction.
type revs struct {
	ks       keyspace.Keyspace
	rev      int64
	events   []etcddump.Event
	prefix   batchlog.DurablePrefix
	view     uint64
	latest   []byte
	versions map[string]int64
	harness  []int64 // revisions the "harness" wrote
	// advertised is advertise_url → node id (Input.Advertised).
	advertised map[string]string
}

func newRevs() *revs { return &revs{ks: keyspace.Must("c"), versions: map[string]int64{}} }

func (r *revs) put(key string, value []byte, lease int64) {
	r.versions[key]++
	r.events = append(r.events, etcddump.Event{Revision: r.rev, Type: "put", Key: key, Value: value,
		Version: r.versions[key], CreateRevision: r.rev, Lease: lease})
}

func (r *revs) del(key string) {
	r.versions[key] = 0
	r.events = append(r.events, etcddump.Event{Revision: r.rev, Type: "delete", Key: key})
}

func (r *revs) claim(view uint64) {
	r.rev++
	r.view = view
	r.put(r.ks.ProducerView(), encView(view), 0)
	if view == 1 {
		r.put(r.ks.DurablePrefix(), batchlog.EncodeDurablePrefix(batchlog.DurablePrefix{}), 0)
	}
}

func (r *revs) appendBatch() {
	r.rev++
	b := batchlog.Batch{ID: r.prefix.BatchID + 1, FirstSeq: r.prefix.LastSeq + 1, LastSeq: r.prefix.LastSeq + 1,
		Entries: []batchlog.Entry{{Op: batchlog.OpRemove, Tenant: "t", Key: "k"}}}
	rec, _ := batchlog.EncodeBatch(b)
	r.put(r.ks.Batch(b.ID), rec, 0)
	r.prefix = batchlog.DurablePrefix{BatchID: b.ID, LastSeq: b.LastSeq}
	r.put(r.ks.DurablePrefix(), batchlog.EncodeDurablePrefix(r.prefix), 0)
}

// lease puts the maintenance key under a lease (0: release it).
func (r *revs) lease(id int64) {
	r.rev++
	if id == 0 {
		r.del(r.ks.SnapshotMaintenance())
		return
	}
	r.put(r.ks.SnapshotMaintenance(), []byte(fmt.Sprintf("node/%x/token", id)), id)
}

// pointer is a valid pointer at batch (seq = batch) made under lease, with view.
func pointer(batch uint64, lease int64, view uint64) []byte {
	id := batchsnap.ID{BatchID: batch, Lease: lease}
	p := batchsnap.Pointer{PointerSchemaVersion: batchsnap.PointerSchemaVersion, SnapshotID: id.String(), LastIncludedBatchID: batch,
		LastIncludedSeq: batch, ProducerViewVersion: int64(view), DescriptorKey: batchsnap.Artifacts("p", id.String()).Descriptor(),
		DescriptorSize: 10, CreatedAtMS: 1}
	b, err := p.Encode()
	if err != nil {
		panic(err)
	}
	return b
}

// publish rotates a pointer at batch in (fallback = old latest).
func (r *revs) publish(batch uint64, lease int64, view uint64) {
	r.rev++
	ptr := pointer(batch, lease, view)
	if r.latest != nil {
		r.put(r.ks.SnapshotFallback(), r.latest, 0)
	}
	r.put(r.ks.SnapshotLatest(), ptr, 0)
	r.latest = ptr
}

func (r *revs) floor(n uint64) {
	r.rev++
	r.put(r.ks.CompactionFloor(), batchsnap.Floor{BatchID: n}.Encode(), 0)
}

func (r *revs) deleteBatches(from, through uint64) {
	r.rev++
	for id := from; id <= through; id++ {
		r.del(r.ks.Batch(id))
	}
}

// byHarness marks the last revision as the harness's own write.
func (r *revs) byHarness() { r.harness = append(r.harness, r.rev) }

// candidate puts an election candidate key under its session lease, its
// value the node's advertise_url.
func (r *revs) candidate(lease int64, url string) {
	r.rev++
	r.put(r.ks.LeaderCandidates()+fmt.Sprintf("%x", lease), []byte(url), lease)
}

// resign deletes a candidate key (its session ended).
func (r *revs) resign(lease int64) {
	r.rev++
	r.del(r.ks.LeaderCandidates() + fmt.Sprintf("%x", lease))
}

// pruned is a history with two pointers (latest at 4, fallback at 2), the
// floor at 2 and the lease 1 held, nothing deleted yet.
func pruned() *revs {
	r := newRevs()
	r.claim(1)
	for i := 0; i < 5; i++ {
		r.appendBatch()
	}
	r.lease(1)
	r.publish(2, 1, 1)
	r.publish(4, 1, 1)
	r.floor(2)
	return r
}

func (r *revs) input() *Input {
	in := &Input{ClusterID: "c", Etcd: r.events, Advertised: r.advertised}
	if len(r.harness) > 0 {
		in.Events = append(in.Events, Event{Kind: "fault", Revisions: r.harness})
	}
	return in
}

// goodHistory: two views, two publications under lease 1, a floor at the
// older pointer and the covered batches deleted, all while the lease holds.
func goodHistory() *revs {
	r := newRevs()
	r.claim(1)
	for i := 0; i < 5; i++ {
		r.appendBatch()
	}
	r.claim(2)
	r.appendBatch() // 6, view 2
	r.lease(1)
	r.publish(2, 1, 1)
	r.publish(6, 1, 2)
	r.floor(2)
	r.deleteBatches(1, 2)
	r.lease(0)
	return r
}

func TestKeyspaceOrderAcceptsAGoodHistory(t *testing.T) {
	res := KeyspaceOrder(goodHistory().input())
	require.True(t, res.Pass, evidence0(res))
	require.Contains(t, res.Summary, "2 pointer publications")
	require.Equal(t, 1, res.Exercised["floor-covered"])
	require.Equal(t, 2, res.Exercised["pointer-fenced"])
	require.Equal(t, 2, res.Exercised["delete-under-floor"])
}

// keyspaceViolations is, for every keyspace-order invariant, histories that
// break it: each must fail the audit with evidence tagged with the id.
var keyspaceViolations = map[string]map[string]struct {
	mutate func(r *revs)
	want   string
}{
	"view-grows": {
		"view regresses": {func(r *revs) { r.claim(1) }, "producer view went from 2 to 1"},
		"view garbage": {func(r *revs) {
			r.rev++
			r.put(r.ks.ProducerView(), []byte("x"), 0)
		}, "producer view \"x\""},
	},
	"append-continues": {
		"prefix jumps": {func(r *revs) {
			r.rev++
			rec, _ := batchlog.EncodeBatch(batchlog.Batch{ID: 8, FirstSeq: 8, LastSeq: 8, Entries: []batchlog.Entry{{Op: batchlog.OpRemove, Tenant: "t", Key: "x"}}})
			r.put(r.ks.Batch(8), rec, 0)
			r.put(r.ks.DurablePrefix(), batchlog.EncodeDurablePrefix(batchlog.DurablePrefix{BatchID: 8, LastSeq: 8}), 0)
		}, "durable prefix jumped from batch 6 to 8"},
		"batch without prefix": {func(r *revs) {
			r.rev++
			rec, _ := batchlog.EncodeBatch(batchlog.Batch{ID: 7, FirstSeq: 7, LastSeq: 7, Entries: []batchlog.Entry{{Op: batchlog.OpRemove, Tenant: "t", Key: "x"}}})
			r.put(r.ks.Batch(7), rec, 0)
		}, "batch 7 written without moving the durable prefix"},
		"corrupt batch": {func(r *revs) {
			r.rev++
			r.put(r.ks.Batch(7), []byte("[1,7"), 0)
			r.put(r.ks.DurablePrefix(), batchlog.EncodeDurablePrefix(batchlog.DurablePrefix{BatchID: 7, LastSeq: 7}), 0)
		}, "batch 7 does not decode"},
		"sequence gap": {func(r *revs) {
			r.rev++
			rec, _ := batchlog.EncodeBatch(batchlog.Batch{ID: 7, FirstSeq: 9, LastSeq: 9, Entries: []batchlog.Entry{{Op: batchlog.OpRemove, Tenant: "t", Key: "x"}}})
			r.put(r.ks.Batch(7), rec, 0)
			r.put(r.ks.DurablePrefix(), batchlog.EncodeDurablePrefix(batchlog.DurablePrefix{BatchID: 7, LastSeq: 9}), 0)
		}, "batch 7 starts at seq 9, the prefix before it ended at 6"},
	},
	"prefix-terminal": {
		"prefix deleted": {func(r *revs) {
			r.rev++
			r.del(r.ks.DurablePrefix())
		}, "durable prefix deleted"},
		"terminal batch deleted": {func(r *revs) {
			r.appendBatch()
			r.lease(1)
			r.floor(6)
			r.rev++
			r.del(r.ks.Batch(7))
		}, "the durable prefix's batch 7 is not in the OpLog"},
	},
	"batch-once": {
		"batch overwritten": {func(r *revs) {
			r.rev++
			rec, _ := batchlog.EncodeBatch(batchlog.Batch{ID: 6, FirstSeq: 6, LastSeq: 6, Entries: []batchlog.Entry{{Op: batchlog.OpRemove, Tenant: "t", Key: "x"}}})
			r.put(r.ks.Batch(6), rec, 0)
		}, "batch 6 overwritten"},
	},
	"delete-under-floor": {
		"delete above floor": {func(r *revs) {
			r.lease(2)
			r.deleteBatches(4, 4)
		}, "batch 4 deleted above the floor 2"},
		"delete in the floor's revision": {func(r *revs) {
			r.lease(2)
			r.rev++
			r.put(r.ks.CompactionFloor(), batchsnap.Floor{BatchID: 3}.Encode(), 0)
			r.del(r.ks.Batch(3))
		}, "deleted in the revision that published the floor"},
		"delete before any floor": {func(r *revs) {
			*r = *newRevs()
			r.claim(1)
			r.appendBatch()
			r.appendBatch()
			r.lease(1)
			r.deleteBatches(1, 1)
		}, "batch 1 deleted while no compaction floor was published"},
	},
	"floor-monotonic": {
		"floor decreases": {func(r *revs) {
			r.lease(2)
			r.floor(1)
		}, "compaction floor decreased from 2 to 1"},
		"floor deleted": {func(r *revs) {
			r.rev++
			r.del(r.ks.CompactionFloor())
		}, "compaction floor deleted"},
	},
	"floor-covered": {
		"floor above the older pointer": {func(r *revs) {
			r.lease(2)
			r.floor(5)
		}, "floor moved to 5, above the older pointer"},
		"floor with one pointer": {func(r *revs) {
			*r = *newRevs()
			r.claim(1)
			r.appendBatch()
			r.appendBatch()
			r.lease(1)
			r.publish(1, 1, 1)
			r.floor(1)
		}, "floor moved to 1 while fallback is absent"},
		"floor with a malformed latest": {func(r *revs) {
			r.rev++
			r.put(r.ks.SnapshotLatest(), []byte("junk"), 0)
			r.byHarness()
			r.lease(2)
			r.floor(3)
		}, "floor moved to 3 while latest is malformed"},
	},
	"floor-verified": {
		"floor onto a corrupted snapshot": {func(r *revs) {
			r.appendBatch() // 7
			r.lease(2)
			r.publish(7, 2, 2) // fallback: the snapshot at 6, corrupted below
			r.floor(6)
		}, "floor moved to 6 onto 6-1, which the run corrupted before"},
	},
	"lease-exclusive": {
		"a second holder overwrites the key": {func(r *revs) {
			r.lease(2)
			r.lease(3)
		}, "maintenance key taken over by node/3/token (lease 3) while node/2/token (lease 2"},
	},
	"maintenance-fenced": {
		"floor without the lease": {func(r *revs) {
			r.appendBatch()
			r.lease(2)
			r.publish(7, 2, 2)
			r.lease(0)
			r.floor(6)
		}, "floor moved to 6 while no maintenance lease held the maintenance key (the last holder's key went away at rev"},
		"delete without the lease": {func(r *revs) {
			r.deleteBatches(3, 3)
		}, "batches 3..3 deleted while no maintenance lease held the maintenance key"},
	},
	"pointers-monotonic": {
		"latest regresses": {func(r *revs) {
			r.lease(2)
			r.publish(4, 2, 1)
		}, "latest pointer regressed from batch 6 to 4"},
		"fallback not the old latest": {func(r *revs) {
			r.appendBatch()
			r.lease(2)
			r.rev++
			r.put(r.ks.SnapshotLatest(), pointer(7, 2, 2), 0)
			r.put(r.ks.SnapshotFallback(), pointer(2, 1, 1), 0)
		}, "fallback written with a value latest did not hold"},
		"latest malformed": {func(r *revs) {
			r.rev++
			r.put(r.ks.SnapshotLatest(), []byte("junk"), 0)
		}, "latest pointer written malformed"},
		"fallback deleted": {func(r *revs) {
			r.rev++
			r.del(r.ks.SnapshotFallback())
		}, "fallback pointer deleted"},
	},
	"fallback-never-degrades": {
		"a malformed latest rotated into fallback over a valid one": {func(r *revs) {
			r.appendBatch()
			r.rev++
			r.put(r.ks.SnapshotLatest(), []byte("junk"), 0)
			r.byHarness() // the damage is the harness's
			r.lease(2)
			r.rev++
			r.put(r.ks.SnapshotFallback(), []byte("junk"), 0)
			r.put(r.ks.SnapshotLatest(), pointer(7, 2, 2), 0)
		}, "fallback written with a value that does not decode as a pointer"},
		"fallback replaced by garbage": {func(r *revs) {
			r.rev++
			r.put(r.ks.SnapshotFallback(), []byte{0xff, 0x01}, 0)
		}, "replacing a valid pointer to"},
	},
	"pointer-fenced": {
		"publication without the lease": {func(r *revs) {
			r.appendBatch()
			r.publish(7, 1, 2) // lease 1 let go at the end of goodHistory
		}, "written while no maintenance lease held the maintenance key (its lease 1 lost the maintenance key at rev"},
		"publication by a deposed lease": {func(r *revs) {
			r.appendBatch()
			r.lease(3)
			r.publish(7, 2, 2) // made under lease 2, while 3 holds the key
		}, "(made under lease 2) written while the maintenance key was held by lease 3"},
	},
	"pointer-above-floor": {
		"publication below the floor": {func(r *revs) {
			r.lease(2)
			r.rev++
			r.put(r.ks.SnapshotLatest(), []byte("junk"), 0)
			r.byHarness()
			r.floor(2) // unchanged
			r.rev++
			r.put(r.ks.SnapshotLatest(), pointer(1, 2, 1), 0) // a repair from a lagging capture
		}, "latest pointer written naming 1-2 at batch 1, below the compaction floor 2"},
	},
	"pointer-view": {
		"view of the capture, not of its batch": {func(r *revs) {
			r.appendBatch() // 7 under view 2
			r.claim(3)
			r.lease(2)
			r.publish(7, 2, 3)
		}, "records producer view 3, but batch 7 was appended under view 2"},
	},
	"no-reinit": {
		"zero prefix over residue": {func(r *revs) {
			r.rev++
			r.del(r.ks.DurablePrefix())
			for id := uint64(3); id <= 6; id++ {
				r.del(r.ks.Batch(id))
			}
			r.byHarness() // the history lost, the rest left in place
			r.rev++
			r.put(r.ks.ProducerView(), encView(3), 0)
			r.put(r.ks.DurablePrefix(), batchlog.EncodeDurablePrefix(batchlog.DurablePrefix{}), 0)
		}, "namespace initialised (zero durable prefix) while it still held producer view 2, compaction floor 2, " +
			"snapshot pointers: residue read as an empty cluster"},
		"prefix reset": {func(r *revs) {
			r.rev++
			r.put(r.ks.DurablePrefix(), batchlog.EncodeDurablePrefix(batchlog.DurablePrefix{}), 0)
		}, "durable prefix reset to the zero state"},
	},
	"prefix-covers": {
		"pointer above the prefix": {func(r *revs) {
			r.lease(2)
			r.publish(8, 2, 2)
		}, "latest pointer 8-2 at batch 8 seq 8 is above the durable prefix (batch 6 seq 6)"},
		"floor above the prefix": {func(r *revs) {
			r.lease(2)
			r.publish(8, 2, 2)
			r.publish(9, 2, 2)
			r.floor(8)
		}, "compaction floor 8 is above the durable prefix's batch 6"},
	},
	"delete-under-pointers": {
		"delete above the older pointer": {func(r *revs) {
			*r = *pruned()
			r.rev++
			r.put(r.ks.SnapshotFallback(), pointer(1, 1, 1), 0) // the harness puts back an older, valid pointer
			r.byHarness()
			r.deleteBatches(1, 2)
		}, "batch 2 deleted above the older valid pointer 1-1 at batch 1"},
		"delete with no valid pointer": {func(r *revs) {
			*r = *pruned()
			r.rev++
			r.put(r.ks.SnapshotLatest(), []byte("junk"), 0)
			r.put(r.ks.SnapshotFallback(), []byte("junk"), 0)
			r.deleteBatches(1, 1)
		}, "batch 1 deleted while neither pointer was valid (latest is malformed and fallback is malformed)"},
	},
	"zero-prefix-alone": {
		"a pointer beside a zero prefix": {func(r *revs) {
			*r = *newRevs()
			r.claim(1)
			r.lease(1)
			r.publish(1, 1, 1)
		}, "the durable prefix is zero while the namespace holds snapshot pointers"},
		"a zero prefix beside an older view": {func(r *revs) {
			r.rev++
			r.del(r.ks.DurablePrefix())
			for id := uint64(3); id <= 6; id++ {
				r.del(r.ks.Batch(id))
			}
			r.byHarness()
			r.rev++
			r.put(r.ks.DurablePrefix(), batchlog.EncodeDurablePrefix(batchlog.DurablePrefix{}), 0)
		}, "the durable prefix is zero while the namespace holds producer view 2 (written at rev 7, before the zero prefix at rev 16), " +
			"compaction floor 2, snapshot pointers"},
	},
	"standby-captured": {
		"the primary publishes its own batch": {func(r *revs) {
			r.candidate(0x100, "http://a")
			r.claim(3)      // a, the leader, claims view 3
			r.appendBatch() // 7, under view 3
			r.lease(2)      // a's maintenance lease: token node/2/token
			r.advertised = map[string]string{"http://a": "node"}
			r.publish(7, 2, 3)
		}, "pointer to 7-2 (lease 2, node node) captured batch 7, which node appended as the primary " +
			"(it claimed view 3 with its candidacy /oplog/c/leader/100 since rev 15)"},
	},
	"namespace-keys": {
		"stray key": {func(r *revs) {
			r.rev++
			r.put(r.ks.Root()+"/scratch", []byte("x"), 0)
		}, "unexpected key"},
	},
}

func TestKeyspaceOrderFailsEveryViolation(t *testing.T) {
	for id, cases := range keyspaceViolations {
		_, ok := InvariantByID(id)
		require.True(t, ok, "no invariant %q", id)
		for name, tc := range cases {
			t.Run(id+"/"+name, func(t *testing.T) {
				r := goodHistory()
				tc.mutate(r)
				in := r.input()
				if id == "floor-verified" {
					in.Events = append(in.Events, Event{Kind: "fault", Name: "corrupt-snapshot",
						Corrupted: []string{"6-1"}, EtcdRevision: 12})
				}
				res := KeyspaceOrder(in)
				require.False(t, res.Pass, "the audit passed a history that breaks %s", id)
				require.Contains(t, evidence0(res), "["+id+"]")
				require.Contains(t, evidence0(res), tc.want)
			})
		}
	}
}

// Every invariant the table gives to keyspace-order has a failing history
// above; the others name a test of their audit that feeds it a violation.
func TestEveryInvariantHasAFailingHistory(t *testing.T) {
	tests := testFuncs(t)
	for _, inv := range Invariants {
		if _, ok := keyspaceViolations[inv.ID]; ok {
			require.Equal(t, "keyspace-order", inv.Audit, inv.ID)
			continue
		}
		name := inv.FailingTest()
		require.True(t, tests[name], "invariant %s names test %s, which does not exist (or add its violations to keyspaceViolations)", inv.ID, name)
	}
}

// docs/audits.md carries the invariant table as the code has it.
func TestAuditsDocMatches(t *testing.T) {
	doc, err := os.ReadFile("../../docs/audits.md")
	require.NoError(t, err)
	require.Contains(t, string(doc), InvariantsMarkdown(), "docs/audits.md's invariant table is stale: paste InvariantsMarkdown()")
}

// testFuncs lists the Test functions of this package's test files.
func testFuncs(t *testing.T) map[string]bool {
	files, err := filepath.Glob("*_test.go")
	require.NoError(t, err)
	out := map[string]bool{}
	fset := token.NewFileSet()
	for _, f := range files {
		af, err := parser.ParseFile(fset, f, nil, 0)
		require.NoError(t, err)
		for _, d := range af.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && strings.HasPrefix(fn.Name.Name, "Test") {
				out[fn.Name.Name] = true
			}
		}
	}
	return out
}

// A revision the harness wrote is never judged, but the model follows it.
func TestKeyspaceOrderSkipsTheHarnessWrites(t *testing.T) {
	r := goodHistory()
	r.rev++
	r.put(r.ks.SnapshotLatest(), []byte("junk"), 0)
	r.byHarness()
	res := KeyspaceOrder(r.input())
	require.True(t, res.Pass, evidence0(res))
}

// A sampled listing without an authoritative pointer's snapshot fails the
// objects audit, at the sample's time.
func TestObjectsAuditFailsAMissingTarget(t *testing.T) {
	in := &Input{Objects: &StoreReport{Store: "s3"}, Retention: []RetentionSample{
		{At: 1e9, Groups: 2},
		{At: 2e9, Groups: 1, MissingTargets: []string{"fallback 2-1"}},
	}}
	res := ObjectsAudit(in)
	require.False(t, res.Pass)
	require.Contains(t, evidence0(res), "[pointer-targets-present] at 2.000s: the fallback "+
		"2-1 pointer names a snapshot the store no longer holds")
	in.Retention[1].MissingTargets = nil
	require.True(t, ObjectsAudit(in).Pass)
}

// TestObjectsAuditFailsAnUploadBelowLatest: a write the object store
// recorded of a snapshot whose batch is at or below latest's when its
// lease was taken fails upload-advances, whatever became of it; a snapshot
// above it passes; one whose lease the history never shows taken, or any
// once the harness damaged the namespace during its lease, is not judged;
// with latest unreadable the fallback's batch is the bound.
func TestObjectsAuditFailsAnUploadBelowLatest(t *testing.T) {
	r := newRevs()
	r.claim(1)
	appendN(r, 6)
	r.lease(7)
	r.publish(5, 7, 1)
	r.lease(0)
	r.lease(8) // latest is at batch 5 when lease 8 is taken
	write := func(id string) StoreRequest {
		return StoreRequest{Op: "s3_PutObject", Key: batchsnap.Artifacts("snapshots/c", id).ObjectChunk(0), Status: 200}
	}
	in := r.input()
	in.Objects = &StoreReport{Store: "s3", Access: &StoreAccess{Requests: []StoreRequest{
		write("6-8"),  // advances
		write("9-99"), // lease 99 never taken in the history
		{Op: "s3_DeleteObject", Key: batchsnap.Artifacts("snapshots/c", "5-8").Descriptor(), Status: 204}, // a delete writes nothing
		{Op: "s3_PutObject", Key: batchsnap.Artifacts("snapshots/c", "4-8").Segments(), Status: 403},      // refused: nothing written
	}}}
	res := ObjectsAudit(in)
	require.True(t, res.Pass, evidence0(res))
	require.Equal(t, 1, res.Exercised["upload-advances"])
	require.Contains(t, res.Summary, "1 not judged")

	for _, id := range []string{"5-8", "3-8"} {
		in.Objects.Access.Requests = append(in.Objects.Access.Requests[:4:4], write(id))
		res = ObjectsAudit(in)
		require.False(t, res.Pass, id)
		require.Contains(t, evidence0(res), "[upload-advances] snapshot "+id+": s3_PutObject snapshots/c/batch-oplog/"+id+"/objects/0.bin (200): its batch")
		require.Contains(t, evidence0(res), "at or below latest's batch 5 when its maintenance lease 8 was taken")
	}
	// The harness damaged the namespace during lease 8's tenure: a holder
	// may repair at a batch no higher than before, so nothing is judged.
	in.Events = append(in.Events, Event{Kind: "fault", Name: "corrupt-pointer", Revisions: []int64{r.rev}, EtcdRevision: r.rev})
	res = ObjectsAudit(in)
	require.True(t, res.Pass, evidence0(res))
	require.Equal(t, 0, res.Exercised["upload-advances"])

	// Latest unreadable when the lease was taken (before any damage the
	// harness recorded, as in a fresh namespace's first publications): the
	// bound is the fallback's batch, which a candidate may repair above.
	r = newRevs()
	r.claim(1)
	appendN(r, 6)
	r.lease(7)
	r.publish(2, 7, 1)
	r.publish(5, 7, 1) // fallback 2, latest 5
	r.rev++
	r.put(r.ks.SnapshotLatest(), []byte("garbage"), 0)
	r.lease(0)
	r.lease(8)
	in = r.input()
	in.Objects = &StoreReport{Store: "s3", Access: &StoreAccess{Requests: []StoreRequest{write("4-8")}}}
	res = ObjectsAudit(in)
	require.True(t, res.Pass, evidence0(res))
	require.Equal(t, 1, res.Exercised["upload-advances"])
	in.Objects.Access.Requests = []StoreRequest{write("2-8")}
	require.False(t, ObjectsAudit(in).Pass, "at the fallback's batch")
}

// encView is the producer view record of v (> 0).
func encView(v uint64) []byte {
	b, err := batchlog.EncodeProducerView(int64(v))
	if err != nil {
		panic(err)
	}
	return b
}

// The process of the primary that appended a batch is ended by the
// harness, and the node's next process publishes a snapshot of that batch
// while the old candidacy still leads (its lease not yet expired): a later
// incarnation, a standby, captured it. Not judged, and counted; without
// the harness's record of the ended process it fails.
func TestStandbyCapturedAfterTheNodeRestarted(t *testing.T) {
	r := goodHistory()
	r.candidate(0x100, "http://a")
	r.claim(3)      // a, the leader, claims view 3
	r.appendBatch() // 7, under view 3
	killedAt := r.rev
	r.lease(2)
	r.advertised = map[string]string{"http://a": "node"}
	r.publish(7, 2, 3)
	in := r.input()
	require.False(t, KeyspaceOrder(in).Pass, "without the harness's record the node is the batch's primary")
	in.Events = append(in.Events, Event{Kind: "fault", Name: "kill", Target: "node", Ended: []string{"node"}, EtcdRevision: killedAt})
	res := KeyspaceOrder(in)
	require.True(t, res.Pass, evidence0(res))
	require.Equal(t, 1, res.Exercised["standby-captured: published by a later incarnation of its batch's primary (not judged)"])
	// An end before the claim is an earlier process's: still judged.
	in.Events[len(in.Events)-1].EtcdRevision = 1
	require.False(t, KeyspaceOrder(in).Pass)
}

// TestObjectsAuditFailsAttemptsNotHeldBack: candidates no pointer names,
// failing in a row, must space out once four have failed: attempts that go
// on every few hundred milliseconds fail publication-backoff; attempts
// that back off (2 s, 4 s, 8 s), a publication that ends the streak, and
// another publisher's attempts pass.
func TestObjectsAuditFailsAttemptsNotHeldBack(t *testing.T) {
	r := newRevs()
	r.claim(1)
	appendN(r, 6)
	r.lease(7) // master "node" holds lease 7 (the test's token)
	write := func(id string, at int64) StoreRequest {
		return StoreRequest{Op: "s3_PutObject", Key: batchsnap.Artifacts("snapshots/c", id).ObjectChunk(0), Status: 200, At: at}
	}
	run := func(times ...int64) Result {
		in := r.input()
		var reqs []StoreRequest
		for i, at := range times {
			reqs = append(reqs, write(fmt.Sprintf("%d-7", 10+i), at))
		}
		in.Objects = &StoreReport{Store: "s3", Access: &StoreAccess{Requests: reqs}}
		return ObjectsAudit(in)
	}
	const t0 = 1_780_000_000
	// held back: 0.25, 0.5, 1, 2, 4, 8 s
	res := run(t0, t0, t0, t0+1, t0+3, t0+7, t0+15)
	require.True(t, res.Pass, evidence0(res))
	require.Equal(t, 3, res.Exercised["publication-backoff"])
	// not held back: an attempt every 400 ms or so
	res = run(t0, t0, t0+1, t0+1, t0+1, t0+2, t0+2, t0+3)
	require.False(t, res.Pass)
	require.Contains(t, evidence0(res), "[publication-backoff] snapshot 16-7 (first written at ")
	require.Contains(t, evidence0(res), "the attempts are not held back")
	// no time in the record (an older bundle): nothing judged
	res = run(0, 0, 0, 0, 0, 0, 0)
	require.True(t, res.Pass, evidence0(res))
	require.Zero(t, res.Exercised["publication-backoff"])
}

// TestRetentionBoundsHoldsAndGaps: etcd's history placed in time by the
// samples' revisions proves how long a lease at least held the maintenance
// key and how long latest at least stood still between publications; past
// max_maintenance_hold or max_publication_gap the run fails; bundles whose
// samples carry no revision prove nothing.
func TestRetentionBoundsHoldsAndGaps(t *testing.T) {
	r := newRevs()
	r.claim(1)
	appendN(r, 3)
	r.lease(7)
	r.publish(2, 7, 1) // latest at rev p1
	p1 := r.rev
	r.lease(0) // lease 7 let go
	held := r.rev
	r.lease(8) // lease 8 takes the key and keeps it long
	r.publish(3, 8, 1)
	r.lease(0)
	end := r.rev
	in := r.input()
	in.Retention = []RetentionSample{
		{At: 1e9, Rev: p1}, {At: 2e9, Rev: held}, {At: 3e9, Rev: held + 1}, {At: 15e9, Rev: end - 2}, {At: 16e9, Rev: end},
	}
	res := RetentionBounds(in)
	require.True(t, res.Pass, evidence0(res))
	require.Contains(t, res.Summary, "longest maintenance hold at least 12.0s")
	require.Contains(t, res.Summary, "latest stood still at least 14.0s between publications")

	in.Expect.MaxMaintenanceHold, in.Expect.MaxPublicationGap = 5*time.Second, 5*time.Second
	res = RetentionBounds(in)
	require.False(t, res.Pass)
	require.Contains(t, evidence0(res), "maintenance key held by lease 8")
	require.Contains(t, evidence0(res), "(at least 12.0s, from 3.000s): longer than the bound 5s (max_maintenance_hold)")
	require.Contains(t, evidence0(res), "latest unchanged, from rev")
	require.Contains(t, evidence0(res), "longer than the bound 5s between publications (max_publication_gap)")

	for i := range in.Retention {
		in.Retention[i].Rev = 0
	}
	require.True(t, RetentionBounds(in).Pass, "without revisions nothing is placed in time")
}
