package verify

import (
	"context"
	"fmt"
	"strings"

	"github.com/oplogha/oplogha/impl/contract/batchlog"
	"github.com/oplogha/oplogha/impl/contract/keyspace"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// scan walks every key under the root at the head's revision, in key
// order (batch ids are zero-padded, so key order is id order), judging
// each batch record as it passes: nothing but a few cursors is held, so a
// namespace of millions of batches verifies in constant memory.
type scan struct {
	rep *Report
	ks  keyspace.Keyspace
	h   *head

	floor     uint64 // batches at or below it may be gone
	terminal  uint64 // the durable prefix's batch; 0 when none is claimed
	next      uint64 // the lowest batch id that must still be present
	prev      uint64 // the last batch key seen
	prevLast  uint64 // its last_seq, when prevValid
	prevValid bool
	seen      bool // the terminal batch was present
	unknown   int64

	// wanted maps a batch id a pointer names to the last_seq its record
	// says (0: the record is gone or unreadable).
	wanted map[uint64]uint64
}

func newScan(rep *Report, ks keyspace.Keyspace, h *head) *scan {
	s := &scan{rep: rep, ks: ks, h: h, wanted: map[uint64]uint64{}}
	if h.floorOK {
		s.floor = h.floor
	}
	if h.prefixOK {
		s.terminal = h.prefix.BatchID
	}
	s.next = s.floor + 1
	for _, sl := range h.slots {
		if sl.p != nil {
			s.wanted[sl.p.LastIncludedBatchID] = 0
		}
	}
	return s
}

func (s *scan) run(ctx context.Context, kv clientv3.KV, opt Options) error {
	root := s.ks.Root() + "/"
	end := clientv3.GetPrefixRangeEnd(root)
	key := root
	for {
		resp, err := kv.Get(ctx, key, clientv3.WithRange(end), clientv3.WithRev(s.h.revision), clientv3.WithLimit(opt.PageSize))
		if err != nil {
			return fmt.Errorf("read %s at revision %d: %w", root, s.h.revision, err)
		}
		for _, item := range resp.Kvs {
			s.rep.Keys++
			k := string(item.Key)
			if strings.HasPrefix(k, s.ks.BatchPrefix()) {
				s.batch(k, value(item))
				continue
			}
			s.other(k)
		}
		if opt.Progress != nil {
			opt.Progress(s.rep.Keys)
		}
		if !resp.More || len(resp.Kvs) == 0 {
			break
		}
		key = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
	return nil
}

// batch judges one batch key.
func (s *scan) batch(key string, val []byte) {
	r := s.rep
	id, ok := s.ks.ParseBatch(key)
	if !ok {
		r.violate(key, "not a batch record key: want 20 decimal digits after %s", s.ks.BatchPrefix())
		return
	}
	r.Batches++
	if r.FirstBatch == 0 {
		r.FirstBatch = id
	}
	r.LastBatch = id
	if s.h.prefixOK && id > s.terminal {
		r.violate(key, "batch %d is beyond the durable prefix %d (upstream writes a batch and the prefix that covers it in one transaction)", id, s.terminal)
	}
	if id > s.next && s.next <= s.terminal {
		s.missing(s.next, min(id-1, s.terminal))
	}
	s.next = max(s.next, id+1)
	contiguous := s.prevValid && s.prev+1 == id
	s.prev, s.prevValid = id, false
	b, err := batchlog.DecodeBatch(val)
	if err != nil {
		r.violate(key, "batch record rejected: %v", err)
		return
	}
	if b.ID != id {
		r.violate(key, "record says batch %d", b.ID)
		return
	}
	switch {
	case id == 1 && s.h.imported:
		// A legacy import's batch 1 stands for the imported state: one
		// LEASE_RENEW (no applier applies it) at the import's sequence.
		if len(b.Entries) != 1 || b.Entries[0].Op != batchlog.OpLeaseRenew || b.Entries[0].Tenant != "" || b.Entries[0].Key != "" || len(b.Entries[0].Payload) != 0 {
			r.violate(key, "a legacy import's batch 1 must be its single empty LEASE_RENEW entry (an entry that applies would "+
				"let a replay from batch 0 end without the imported state)")
		}
	case id == 1 && b.FirstSeq != 1:
		r.violate(key, "the first batch starts at seq %d, not 1 (only a legacy import's batch 1 may start later)", b.FirstSeq)
	case contiguous && b.FirstSeq != s.prevLast+1:
		r.violate(key, "first_seq %d does not follow batch %d's last_seq %d", b.FirstSeq, id-1, s.prevLast)
	}
	if id == s.terminal {
		s.seen = true
		if b.LastSeq != s.h.prefix.LastSeq {
			r.violate(key, "the durable prefix's terminal batch ends at seq %d, the prefix says %d (upstream refuses to start)", b.LastSeq, s.h.prefix.LastSeq)
		}
	}
	if _, want := s.wanted[id]; want {
		s.wanted[id] = b.LastSeq
	}
	s.prevLast, s.prevValid = b.LastSeq, true
}

// missing records a run of absent batches the floor does not cover.
func (s *scan) missing(from, to uint64) {
	if from > to {
		return
	}
	what := fmt.Sprintf("batch %d is missing", from)
	if to > from {
		what = fmt.Sprintf("batches %d..%d are missing", from, to)
	}
	s.rep.violate(s.ks.Batch(from), "%s: above the compaction floor %d and at or below the durable prefix %d, every batch "+
		"must be present", what, s.floor, s.terminal)
}

// other classifies a key that is not a batch record.
func (s *scan) other(key string) {
	ks := s.ks
	switch {
	case key == ks.DurablePrefix(), key == ks.ProducerView(), key == ks.Leader(),
		strings.HasPrefix(key, ks.LeaderCandidates()),
		key == ks.SnapshotMaintenance(), key == ks.SnapshotLatest(), key == ks.SnapshotFallback(),
		key == ks.CompactionFloor(), key == ks.LegacyImport():
	case legacyKey(ks.Root(), key):
		s.rep.violate(key, "a legacy per-entry OpLog key: upstream's batch OpLog refuses to start beside one (clear the legacy layout first)")
	default:
		s.unknown++
		if len(s.rep.Unknown) < maxUnknown {
			s.rep.Unknown = append(s.rep.Unknown, key)
		}
	}
}

// finish judges what only the whole scan shows.
func (s *scan) finish() {
	r, ks := s.rep, s.ks
	switch {
	case !r.PrefixPresent && r.Batches > 0:
		r.violate(ks.DurablePrefix(), "absent while %d batch keys exist (upstream refuses to start)", r.Batches)
	case s.h.prefixOK && s.terminal == 0 && r.Batches > 0:
		r.violate(ks.DurablePrefix(), "zero durable prefix while %d batch keys exist (upstream refuses to start)", r.Batches)
	case s.terminal > 0:
		if s.next <= s.terminal {
			s.missing(s.next, s.terminal-1)
		}
		if !s.seen {
			r.violate(ks.Batch(s.terminal), "the durable prefix's terminal batch %d is missing (upstream refuses to start)", s.terminal)
		}
	}
	if s.h.floorOK && s.h.prefixOK && s.floor > s.terminal {
		r.violate(ks.CompactionFloor(), "the compaction floor %d is above the durable prefix %d", s.floor, s.terminal)
	}
	if s.h.snapshotKeys() && s.h.viewRaw == nil && r.Batches > 0 {
		r.violate(ks.ProducerView(), "absent while snapshot keys exist: pointer publication and pruning are fenced by it")
	}
	if s.unknown > int64(len(r.Unknown)) {
		r.Unknown = append(r.Unknown, fmt.Sprintf("… and %d more", s.unknown-int64(len(r.Unknown))))
	}
}
