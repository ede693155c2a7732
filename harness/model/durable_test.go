package model

import (
	"testing"

	"github.com/oplogha/oplogha/impl/contract/metadata"

	"github.com/oplogha/oplogha/impl/contract/batchlog"
	"github.com/oplogha/oplogha/impl/contract/keyspace"
	"github.com/oplogha/oplogha/impl/contract/legacysnap"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/harness/etcddump"
	"github.com/oplogha/oplogha/impl/contract"
)

// hist builds an MVCC history one transaction (revision) at a time.
type hist struct {
	ks     keyspace.Keyspace
	rev    int64
	events []etcddump.Event
	prefix contract.Cursor
}

func newHist() *hist { return &hist{ks: keyspace.Must("c")} }

func (h *hist) put(key string, value []byte) {
	h.events = append(h.events, etcddump.Event{Revision: h.rev, Type: "put", Key: key, Value: value})
}

func (h *hist) init() {
	h.rev++
	h.prefix = contract.Cursor{}
	h.put(h.ks.DurablePrefix(), batchlog.EncodeDurablePrefix(batchlog.DurablePrefix{}))
}

// append writes the next batch with es and the prefix that names it.
func (h *hist) append(t *testing.T, es ...batchlog.Entry) {
	h.rev++
	b := batchlog.Batch{ID: h.prefix.BatchID + 1, FirstSeq: h.prefix.Seq + 1, LastSeq: h.prefix.Seq + uint64(len(es)), Entries: es}
	rec, err := batchlog.EncodeBatch(b)
	require.NoError(t, err)
	h.put(h.ks.Batch(b.ID), rec)
	h.prefix = contract.Cursor{BatchID: b.ID, Seq: b.LastSeq}
	h.put(h.ks.DurablePrefix(), batchlog.EncodeDurablePrefix(batchlog.DurablePrefix{BatchID: b.ID, LastSeq: b.LastSeq}))
}

func put(key string, size uint64) batchlog.Entry {
	p, err := metadata.EncodeMetadataPayload(metadata.MetadataPayload{Size: size, Replicas: []metadata.ReplicaDescriptor{{ID: 1,
		Variant: metadata.DiskDescriptor{FilePath: "/f/" + key, ObjectSize: size}, Status: metadata.ReplicaComplete}}})
	if err != nil {
		panic(err)
	}
	return batchlog.Entry{Op: batchlog.OpPutEnd, Tenant: "t", Key: key, Payload: p}
}

func remove(key string) batchlog.Entry {
	return batchlog.Entry{Op: batchlog.OpRemove, Tenant: "t", Key: key}
}

func (h *hist) durable() *Durable { return ReadDurable(h.ks, h.events, nil) }

// The state at a revision is the batches up to the prefix of that
// revision, applied in order, pruned or not since.
func TestStateAtEveryRevision(t *testing.T) {
	h := newHist()
	h.init()                              // rev 1
	h.append(t, put("a", 1), put("b", 2)) // rev 2
	h.append(t, remove("a"))              // rev 3
	h.append(t, put("a", 3))              // rev 4
	h.rev++                               // rev 5: the batches pruned
	for id := uint64(1); id <= 2; id++ {
		h.events = append(h.events, etcddump.Event{Revision: h.rev, Type: "delete", Key: h.ks.Batch(id)})
	}
	d := h.durable()
	require.Len(t, d.Moves, 4)
	sizes := func(s *State) map[string]uint64 {
		out := map[string]uint64{}
		for _, k := range s.Keys() {
			o, _ := s.Object(k.Tenant, k.Key)
			out[k.Key] = o.Size
		}
		return out
	}
	for rev, want := range map[int64]map[string]uint64{
		1: {}, 2: {"a": 1, "b": 2}, 3: {"b": 2}, 4: {"a": 3, "b": 2}, 5: {"a": 3, "b": 2},
	} {
		s, err := d.StateAt(rev, nil)
		require.NoError(t, err, "rev %d", rev)
		require.Equal(t, want, sizes(s), "rev %d", rev)
	}
	_, err := d.StateAt(0, nil)
	require.ErrorIs(t, err, ErrUnknown)
	final, ok := d.Final()
	require.True(t, ok)
	require.Equal(t, contract.Cursor{BatchID: 3, Seq: 4}, final.Cursor)
}

// What the model cannot know it says, with the reason: a batch upstream's
// applier refuses, an import without a start, a lost history; a new
// initialisation starts over.
func TestWalkSaysWhatItCannotKnow(t *testing.T) {
	h := newHist()
	h.init()
	h.append(t, put("a", 1))
	h.append(t, batchlog.Entry{Op: batchlog.OpLeaseRenew, Tenant: "t", Key: "a"})
	h.append(t, put("b", 1))
	d := h.durable()
	_, err := d.StateAt(h.rev, nil)
	require.ErrorIs(t, err, ErrUnknown)
	require.ErrorIs(t, err, ErrRejected)
	require.Contains(t, err.Error(), "from batch 2 on")
	s, err := d.StateAt(2, nil)
	require.NoError(t, err)
	require.Equal(t, contract.Cursor{BatchID: 1, Seq: 1}, s.Cursor())

	// The history lost, then the namespace initialised again: a new lineage.
	h.rev++
	h.events = append(h.events, etcddump.Event{Revision: h.rev, Type: "delete", Key: h.ks.DurablePrefix()})
	lost := h.rev
	h.init()
	h.append(t, put("c", 7))
	d = ReadDurable(h.ks, h.events, map[int64]bool{lost: true})
	_, err = d.StateAt(lost, nil)
	require.ErrorIs(t, err, ErrUnknown)
	require.Contains(t, err.Error(), "deleted")
	s, err = d.StateAt(h.rev, nil)
	require.NoError(t, err)
	o, ok := s.Object("t", "c")
	require.True(t, ok)
	require.Equal(t, uint64(7), o.Size)
	require.Len(t, d.Lineage(), 2)
	require.Equal(t, MoveLost, d.Moves[len(d.Moves)-3].Kind)
}

// An import's state is the imported snapshot's: unknown without a start,
// the start's state with one (the snapshot half of the model).
func TestImportStartsFromTheSnapshot(t *testing.T) {
	h := newHist()
	h.rev++
	cur := contract.Cursor{BatchID: 1, Seq: 40}
	rec, err := batchlog.EncodeBatch(legacysnap.ImportBatch(cur))
	require.NoError(t, err)
	h.put(h.ks.Batch(1), rec)
	h.put(h.ks.DurablePrefix(), batchlog.EncodeDurablePrefix(batchlog.DurablePrefix{BatchID: 1, LastSeq: 40}))
	h.put(h.ks.LegacyImport(), legacysnap.ImportRecord{SchemaVersion: 1, BatchID: 1, LastSeq: 40}.Encode())
	h.prefix = cur
	h.append(t, put("new", 5))
	d := h.durable()
	require.Equal(t, MoveImport, d.Moves[0].Kind)
	_, err = d.StateAt(h.rev, nil)
	require.ErrorIs(t, err, ErrUnknown)
	require.ErrorIs(t, err, ErrNoStart)
	require.Contains(t, err.Error(), "legacy import")

	start := func(m Move) (*State, error) {
		return FromSnapshot(m.Cursor, nil, map[ObjectKey]Object{Key("", "old"): {Size: 9}})
	}
	s, err := d.StateAt(h.rev, start)
	require.NoError(t, err)
	n, _ := s.Len()
	require.Equal(t, 2, n)
	_, ok := s.Object("default", "old")
	require.True(t, ok)
}

// A move the model cannot follow is a MoveOther saying why; garbage the
// harness wrote over the prefix is no move at all.
func TestMovesTheModelCannotFollow(t *testing.T) {
	h := newHist()
	h.init()
	h.append(t, put("a", 1))
	h.rev++
	h.put(h.ks.DurablePrefix(), []byte("garbage"))
	garbage := h.rev
	h.rev++
	h.put(h.ks.DurablePrefix(), batchlog.EncodeDurablePrefix(batchlog.DurablePrefix{BatchID: 3, LastSeq: 3}))
	d := ReadDurable(h.ks, h.events, map[int64]bool{garbage: true})
	require.Len(t, d.Moves, 3)
	require.Equal(t, MoveOther, d.Moves[2].Kind)
	require.Contains(t, d.Moves[2].Why, "not one batch up")
}

// A valid prefix the harness wrote over the real one made nothing
// durable: the model does not follow it; the heal that restores the real
// prefix is no move.
func TestAPrefixTheHarnessWroteIsNoAppend(t *testing.T) {
	h := newHist()
	h.init()
	h.append(t, put("a", 1))
	h.rev++
	h.put(h.ks.DurablePrefix(), batchlog.EncodeDurablePrefix(batchlog.DurablePrefix{BatchID: 9, LastSeq: 9}))
	fault := h.rev
	d := ReadDurable(h.ks, h.events, map[int64]bool{fault: true})
	require.Equal(t, MoveOther, d.Moves[2].Kind)
	require.Contains(t, d.Moves[2].Why, "the harness wrote the durable prefix batch 9 seq 9")

	h.events = h.events[:len(h.events)-1]
	h.put(h.ks.DurablePrefix(), []byte(`{"batch_id":1,"last_seq":1,"schema_version":1}`)) // the same prefix, restored
	d = ReadDurable(h.ks, h.events, map[int64]bool{fault: true})
	require.Len(t, d.Moves, 2)
}
