package model

import (
	"fmt"

	"github.com/oplogha/oplogha/impl/contract/batchlog"
	"github.com/oplogha/oplogha/impl/contract/keyspace"

	"github.com/oplogha/oplogha/harness/etcddump"
	"github.com/oplogha/oplogha/impl/contract"
)

// MoveKind is how a revision moved the durable prefix.
type MoveKind int

// Kinds of move.
const (
	// MoveInit: a zero prefix was written (a namespace initialised): the
	// empty state.
	MoveInit MoveKind = iota
	// MoveAppend: the prefix moved one batch up, in a revision where the
	// batch it names is present, decodes, continues the prefix before it
	// and ends at the prefix's sequence id.
	MoveAppend
	// MoveImport: a legacy import moved the prefix from zero to its cursor
	// (the revision writes the import record): the state is the imported
	// snapshot's, which the batch record (one LEASE_RENEW) does not carry.
	MoveImport
	// MoveLost: the prefix was deleted (a history lost).
	MoveLost
	// MoveOther: a move the model cannot follow (Move.Why says why).
	MoveOther
)

func (k MoveKind) String() string {
	return [...]string{"init", "append", "import", "lost", "other"}[k]
}

// Move is one revision that changed the durable prefix.
type Move struct {
	Revision int64
	Kind     MoveKind
	Cursor   contract.Cursor // the prefix after the move (zero after MoveLost)
	// Batch is, for MoveAppend, the record of Cursor.BatchID as it stood
	// at Revision: what became durable then, whatever later happened to
	// the key (pruned, or overwritten by a fault).
	Batch *batchlog.Batch
	// Injected: the revision is one the harness wrote (a fault).
	Injected bool
	Why      string // MoveOther
}

// Durable is the durable history of a run as etcd's MVCC history of the
// namespace shows it: every move of the durable prefix, in revision order.
// The durable state at revision R is the state the moves up to R lead to:
// batches 1..P applied in order, where P is the prefix's batch at R, even
// if the batches were pruned since (the history keeps their puts).
type Durable struct {
	Moves []Move
}

// ReadDurable reads the moves of the durable prefix from the namespace's
// MVCC history (events in revision order, as etcddump writes them);
// injected are the revisions the harness wrote. A prefix value the
// harness wrote that does not decode (garbage), or that restores the
// prefix there (a heal), is no move: the durable history did not change,
// its record was damaged; any other prefix the harness wrote, and one the
// system wrote that does not decode, is a MoveOther.
func ReadDurable(ks keyspace.Keyspace, events []etcddump.Event, injected map[int64]bool) *Durable {
	d := &Durable{}
	batches := map[uint64][]byte{} // present batch records, as of the revision read
	var prefix *contract.Cursor
	for i := 0; i < len(events); {
		j := i
		for j < len(events) && events[j].Revision == events[i].Revision {
			j++
		}
		group := events[i:j]
		i = j
		rev := group[0].Revision
		var prefixEv *etcddump.Event
		imported := false
		for k := range group {
			e := &group[k]
			switch id, isBatch := ks.ParseBatch(e.Key); {
			case isBatch && e.Type == "put":
				batches[id] = e.Value
			case isBatch:
				delete(batches, id)
			case e.Key == ks.DurablePrefix():
				prefixEv = e
			case e.Key == ks.LegacyImport() && e.Type == "put":
				imported = true
			}
		}
		if prefixEv == nil {
			continue
		}
		m := Move{Revision: rev, Injected: injected[rev]}
		if prefixEv.Type != "put" {
			if prefix == nil {
				continue
			}
			m.Kind, prefix = MoveLost, nil
			d.Moves = append(d.Moves, m)
			continue
		}
		p, err := batchlog.DecodeDurablePrefix(prefixEv.Value)
		if err != nil {
			if m.Injected {
				continue
			}
			m.Kind, m.Why = MoveOther, fmt.Sprintf("the durable prefix written at rev %d does not decode: %v", rev, err)
			prefix = nil
			d.Moves = append(d.Moves, m)
			continue
		}
		c := contract.Cursor{BatchID: p.BatchID, Seq: p.LastSeq}
		if prefix != nil && *prefix == c {
			continue // the same prefix written again (or restored by a heal)
		}
		m.Cursor = c
		switch {
		case m.Injected:
			// No fault writes a valid prefix other than the one there; one
			// that did would have made nothing durable.
			m.Kind, m.Why = MoveOther, fmt.Sprintf("the harness wrote the durable prefix %s at rev %d", c, rev)
		case c == contract.Cursor{}:
			m.Kind = MoveInit
		case imported && (prefix == nil || *prefix == contract.Cursor{}):
			m.Kind = MoveImport
		default:
			m.Kind, m.Batch, m.Why = appendMove(prefix, c, batches)
		}
		prefix = &c
		d.Moves = append(d.Moves, m)
	}
	return d
}

// appendMove decides whether the move from prev to c is an append of a
// batch the history holds, and which.
func appendMove(prev *contract.Cursor, c contract.Cursor, batches map[uint64][]byte) (MoveKind, *batchlog.Batch, string) {
	if prev == nil {
		return MoveOther, nil, fmt.Sprintf("the durable prefix moved to %s with no prefix before it", c)
	}
	if c.BatchID != prev.BatchID+1 {
		return MoveOther, nil, fmt.Sprintf("the durable prefix moved from %s to %s, not one batch up", *prev, c)
	}
	raw, ok := batches[c.BatchID]
	if !ok {
		return MoveOther, nil, fmt.Sprintf("the durable prefix moved to %s while batch %d was not in the OpLog", c, c.BatchID)
	}
	b, err := batchlog.DecodeBatch(raw)
	if err != nil {
		return MoveOther, nil, fmt.Sprintf("the durable prefix moved to %s onto a batch record that does not decode: %v", c, err)
	}
	if b.ID != c.BatchID || b.FirstSeq != prev.Seq+1 || b.LastSeq != c.Seq {
		return MoveOther, nil, fmt.Sprintf("the durable prefix moved from %s to %s onto batch %d holding seq %d..%d", *prev, c, b.ID, b.FirstSeq, b.LastSeq)
	}
	return MoveAppend, &b, ""
}

// Final is the last move (false: the prefix never moved).
func (d *Durable) Final() (Move, bool) {
	if len(d.Moves) == 0 {
		return Move{}, false
	}
	return d.Moves[len(d.Moves)-1], true
}

// Lineage is the moves since the namespace's last start (the last
// MoveInit or MoveImport): the history the final durable prefix belongs
// to. Nil when there was none.
func (d *Durable) Lineage() []Move {
	for i := len(d.Moves) - 1; i >= 0; i-- {
		if k := d.Moves[i].Kind; k == MoveInit || k == MoveImport {
			return d.Moves[i:]
		}
	}
	return nil
}

// Start gives the state a MoveImport stands for (the imported snapshot's
// objects and segments at its cursor, through FromSnapshot). Nil, or an
// error, leaves it unknown (the audits give the snapshot the import
// published, as the bundle kept it: harness/audit's importStart).
type Start func(m Move) (*State, error)

// Walk replays the durable history from its first move: after each move it
// calls visit with the state the durable prefix then stands for, or with a
// nil state and an ErrUnknown saying why the model cannot know it (no
// start for an import, a batch upstream's applier refuses, a move it
// cannot follow, a history lost: unknown until the next MoveInit). s is
// the walk's own: visit clones what it keeps. visit returning false stops
// the walk.
func (d *Durable) Walk(start Start, visit func(m Move, s *State, err error) bool) {
	var s *State
	unknown := fmt.Errorf("%w: no durable prefix yet", ErrUnknown)
	for _, m := range d.Moves {
		switch m.Kind {
		case MoveInit:
			s, unknown = New(), nil
		case MoveAppend:
			if s == nil {
				break
			}
			if err := s.Apply(*m.Batch); err != nil {
				s, unknown = nil, fmt.Errorf("%w from batch %d on (rev %d): %w", ErrUnknown, m.Cursor.BatchID, m.Revision, err)
			}
		case MoveImport:
			s, unknown = nil, fmt.Errorf("%w: the history starts from a legacy import at %s (rev %d), whose state is the imported snapshot's (%w)",
				ErrUnknown, m.Cursor, m.Revision, ErrNoStart)
			if start != nil {
				base, err := start(m)
				switch {
				case err != nil:
					unknown = fmt.Errorf("%w: the legacy import at %s (rev %d): %w", ErrUnknown, m.Cursor, m.Revision, err)
				case base != nil && base.Cursor() != m.Cursor:
					unknown = fmt.Errorf("%w: the import's start is at %s, the prefix at %s", ErrUnknown, base.Cursor(), m.Cursor)
				case base != nil:
					s, unknown = base, nil
				}
			}
		case MoveLost:
			s, unknown = nil, fmt.Errorf("%w: the durable prefix was deleted at rev %d", ErrUnknown, m.Revision)
		case MoveOther:
			s, unknown = nil, fmt.Errorf("%w: %s", ErrUnknown, m.Why)
		}
		if s != nil {
			if !visit(m, s, nil) {
				return
			}
		} else if !visit(m, nil, unknown) {
			return
		}
	}
}

// StateAt is the durable state at revision rev: the state the last move at
// or before rev leads to (a copy), or an ErrUnknown.
func (d *Durable) StateAt(rev int64, start Start) (*State, error) {
	var out *State
	err := fmt.Errorf("%w: no durable prefix at rev %d", ErrUnknown, rev)
	d.Walk(start, func(m Move, s *State, e error) bool {
		if m.Revision > rev {
			return false
		}
		if s != nil {
			out, err = s.Clone(), nil
		} else {
			out, err = nil, e
		}
		return true
	})
	return out, err
}
