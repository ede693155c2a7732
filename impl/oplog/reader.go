package oplog

import (
	"context"
	"fmt"

	"github.com/oplogha/oplogha/impl/contract/batchlog"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/oplogha/oplogha/impl/contract/keyspace"
	"github.com/oplogha/oplogha/impl/state"
)

// Reader reads and validates the OpLog. It never treats a missing record as
// empty: every batch from the cursor to the durable prefix must be present,
// continuous in batch id and sequence, canonical and checksummed.
type Reader struct {
	KV       clientv3.KV
	Keyspace keyspace.Keyspace
	PageSize int // batches per range read; default 256
	// ReuseBuffers lets a scan decode each page's entries and payloads into
	// memory it reuses once fn has returned for every batch of the page,
	// instead of allocating it anew (the garbage collector's work was a
	// third of a replay's CPU). fn must then keep neither a batch's Entries
	// nor any entry's Payload after it returns; state.(*State).Apply keeps
	// neither (tenants and keys are strings of their own, never reused).
	ReuseBuffers bool
}

// Head is the durable prefix as read at one etcd revision, with the
// compaction floor of the same revision.
type Head struct {
	Prefix   DurablePrefix
	Present  bool  // false: no prefix record and no batch key (a fresh namespace)
	Revision int64 // the revision every read of one Scan uses
	// Floor is the compaction floor (0: none). FloorErr says why it could
	// not be read; the head is still good for replay, which never needs
	// the floor, but nothing may be compared with the floor then.
	Floor    uint64
	FloorErr error
}

// ReadHead reads the durable prefix. An absent prefix is accepted only when
// the namespace holds nothing a history leaves (a fresh, uninitialised
// namespace); batch keys without it are ErrNoDurablePrefix, any other
// residue ErrResidue. A zero prefix is held to the same rule: beside a
// floor, a pointer, an import record or a view older than itself it is
// ErrResidue too.
func (r *Reader) ReadHead(ctx context.Context) (Head, error) {
	resp, err := r.KV.Txn(ctx).Then(
		clientv3.OpGet(r.Keyspace.DurablePrefix()),
		clientv3.OpGet(r.Keyspace.BatchPrefix(), clientv3.WithPrefix(), clientv3.WithCountOnly()),
		clientv3.OpGet(r.Keyspace.CompactionFloor()),
	).Commit()
	if err != nil {
		return Head{}, fmt.Errorf("read durable prefix: %w", err)
	}
	h := Head{Revision: resp.Header.Revision}
	if fkv := firstKV(resp.Responses[2]); fkv != nil {
		f, err := DecodeFloor(fkv.Value)
		h.Floor, h.FloorErr = f.BatchID, err
		if err != nil {
			h.FloorErr = &RecordError{Key: r.Keyspace.CompactionFloor(), Err: err}
		}
	}
	kv := firstKV(resp.Responses[0])
	if kv == nil {
		if n := resp.Responses[1].GetResponseRange().Count; n > 0 {
			return Head{}, fmt.Errorf("%w: %d batch keys", ErrNoDurablePrefix, n)
		}
		// Judged at the revision the prefix was read: a claim racing this
		// read writes the view and the zero prefix together, never one alone.
		if err := checkNoResidue(ctx, r.KV, r.Keyspace, h.Revision); err != nil {
			return Head{}, err
		}
		return h, nil
	}
	if h.Prefix, err = DecodeDurablePrefix(kv.Value); err != nil {
		return Head{}, &RecordError{Key: r.Keyspace.DurablePrefix(), Err: err}
	}
	h.Present = true
	if err := r.checkTerminal(ctx, h, resp.Responses[1].GetResponseRange().Count); err != nil {
		return Head{}, err
	}
	if h.Prefix.BatchID == 0 {
		// A zero prefix is an empty cluster only where it stands alone, as
		// a claim on a fresh namespace writes it; beside what a history
		// leaves it is a reset gone half-way, refused as residue exactly
		// as an absent prefix beside it is.
		if err := checkZeroPrefixAlone(ctx, r.KV, r.Keyspace, h.Revision, kv.ModRevision); err != nil {
			return Head{}, err
		}
	}
	return h, nil
}

// checkTerminal is upstream's startup check of a durable prefix
// (OpLogBatchStorage::ValidateDurablePrefixAtStartup, which the standby
// reader repeats on every poll), at the head's revision: the zero prefix
// stands only while no batch key exists, and any other prefix's terminal
// batch must be present, be that batch and end at the prefix's last_seq.
// A missing terminal batch is ErrGap whatever the compaction floor says:
// pruning never deletes the prefix's batch, and a legacy import writes its
// terminal batch (legacy.ImportBatch) with the prefix.
func (r *Reader) checkTerminal(ctx context.Context, h Head, batchKeys int64) error {
	p := h.Prefix
	if p.BatchID == 0 {
		if batchKeys > 0 {
			return &RecordError{Key: r.Keyspace.DurablePrefix(), Err: fmt.Errorf("%w: zero durable prefix while %d batch keys exist", ErrRegression, batchKeys)}
		}
		return nil
	}
	key := r.Keyspace.Batch(p.BatchID)
	resp, err := r.KV.Get(ctx, key, clientv3.WithRev(h.Revision))
	if err != nil {
		return fmt.Errorf("read the durable prefix's terminal batch %d at revision %d: %w", p.BatchID, h.Revision, err)
	}
	if len(resp.Kvs) == 0 {
		return &RecordError{Key: key, Err: fmt.Errorf("%w: the durable prefix's terminal batch %d is missing", ErrGap, p.BatchID)}
	}
	b, err := DecodeBatch(resp.Kvs[0].Value)
	if err != nil {
		return &RecordError{Key: key, Err: err}
	}
	if b.ID != p.BatchID {
		return &RecordError{Key: key, Err: fmt.Errorf("%w: record says batch %d", ErrKeyMismatch, b.ID)}
	}
	if b.LastSeq != p.LastSeq {
		return &RecordError{Key: key, Err: fmt.Errorf("%w: terminal batch ends at seq %d, durable prefix says %d", ErrKeyMismatch, b.LastSeq, p.LastSeq)}
	}
	return nil
}

// Scan reads every batch after cursor from up to the durable prefix at one
// revision, validates it, and calls fn for each in order. It returns the head
// it scanned to. fn's error stops the scan and is returned as is.
func (r *Reader) Scan(ctx context.Context, from state.Cursor, fn func(state.Batch) error) (Head, error) {
	h, err := r.ReadHead(ctx)
	if err != nil {
		return Head{}, err
	}
	return h, r.ScanTo(ctx, from, h, fn)
}

// ScanTo is Scan against a head already read.
func (r *Reader) ScanTo(ctx context.Context, from state.Cursor, h Head, fn func(state.Batch) error) error {
	if !from.Consistent() {
		return fmt.Errorf("%w: inconsistent cursor %s", ErrRegression, from)
	}
	p := h.Prefix
	switch {
	case p.BatchID < from.BatchID:
		return fmt.Errorf("%w: durable prefix %d is behind cursor %s", ErrRegression, p.BatchID, from)
	case p.BatchID == from.BatchID:
		if p.LastSeq != from.Seq {
			return fmt.Errorf("%w: durable prefix seq %d differs from cursor %s", ErrRegression, p.LastSeq, from)
		}
		return nil
	}
	page := r.PageSize
	if page <= 0 {
		page = 256
	}
	want, prev := from.BatchID+1, from
	end := r.Keyspace.Batch(p.BatchID + 1)
	if p.BatchID == ^uint64(0) {
		end = clientv3.GetPrefixRangeEnd(r.Keyspace.BatchPrefix())
	}
	// Pages are read and decoded on a second goroutine, one or two pages
	// ahead of the batches being checked and handed to fn here: the same
	// range reads in the same order as reading one page after the other (a
	// page starts after the last batch of the one before, where a page
	// without a gap leaves want), but etcd and the decoder work while fn
	// applies. Every check is made here, in key order, as before; a page
	// read ahead of an error is dropped, and the reader stops with the scan.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pages := make(chan decodedPage, 1)
	free := make(chan *entryBlocks, 2) // pages' blocks fn is done with (ReuseBuffers)
	go r.readPages(ctx, want, end, page, h.Revision, p.BatchID, pages, free)
	for want <= p.BatchID {
		pg, ok := <-pages
		if !ok { // the reader stopped: the scan's context ended (or, never, a page it should not have ended at)
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("read batches from %d at revision %d: %w", want, h.Revision, err)
			}
			return fmt.Errorf("%w: batch %d (durable prefix %d)", ErrGap, want, p.BatchID)
		}
		if pg.err != nil {
			return fmt.Errorf("read batches from %d at revision %d: %w", want, h.Revision, pg.err)
		}
		if len(pg.records) == 0 {
			return fmt.Errorf("%w: batch %d (durable prefix %d)", ErrGap, want, p.BatchID)
		}
		for i := range pg.records {
			rec := &pg.records[i]
			key, id := rec.key, rec.id
			if !rec.parsed {
				return &RecordError{Key: key, Err: fmt.Errorf("%w: not a batch key", ErrKeyMismatch)}
			}
			if id != want {
				return fmt.Errorf("%w: batch %d (next present is %d)", ErrGap, want, id)
			}
			if rec.err != nil {
				return &RecordError{Key: key, Err: rec.err}
			}
			b := rec.batch
			rec.batch = state.Batch{} // fn may keep it; this page need not
			if b.ID != id {
				return &RecordError{Key: key, Err: fmt.Errorf("%w: record says batch %d", ErrKeyMismatch, b.ID)}
			}
			if b.FirstSeq != prev.Seq+1 {
				kind := ErrGap
				if b.FirstSeq <= prev.Seq {
					kind = ErrRegression
				}
				return &RecordError{Key: key, Err: fmt.Errorf("%w: first seq %d after seq %d", kind, b.FirstSeq, prev.Seq)}
			}
			if err := fn(b); err != nil {
				return err
			}
			prev = state.Cursor{BatchID: b.ID, Seq: b.LastSeq}
			want++
		}
		if pg.blocks != nil { // fn is done with every batch of the page
			pg.blocks.Reset()
			select {
			case free <- pg.blocks:
			default:
			}
		}
	}
	if prev.Seq != p.LastSeq {
		return fmt.Errorf("%w: last batch ends at seq %d, durable prefix says %d", ErrKeyMismatch, prev.Seq, p.LastSeq)
	}
	return nil
}

// decodedPage is one range read of ScanTo, its records decoded (or the
// read's error), their entries and payloads cut from blocks where they fit
// (nil: allocated).
type decodedPage struct {
	records []decodedRecord
	blocks  *entryBlocks
	err     error
}

type entryBlocks = batchlog.BatchBlocks[state.Entry]

// decodedRecord is one key of a page: the batch id its key names (parsed
// false: none) and its record decoded, or why it did not decode.
type decodedRecord struct {
	key    string
	id     uint64
	parsed bool
	batch  state.Batch
	err    error
}

// readPages reads the pages of batches from..last below end at revision
// rev, decodes them and sends them to pages in order, until a page reaches
// last, holds nothing or fails (which it sends), or ctx ends. It closes
// pages when it stops. The read of a page starts as soon as the one before
// it arrives (its last key says where the next starts), so etcd serves a
// page while this goroutine decodes the one before. With ReuseBuffers, a
// page is decoded into blocks from free (or new ones, sized by the page
// before).
func (r *Reader) readPages(ctx context.Context, from uint64, end string, limit int, rev int64, last uint64, pages chan<- decodedPage,
	free <-chan *entryBlocks) {
	defer close(pages)
	type read struct {
		resp *clientv3.GetResponse
		err  error
	}
	get := func(from uint64) <-chan read {
		ch := make(chan read, 1)
		go func() {
			resp, err := r.KV.Get(ctx, r.Keyspace.Batch(from), clientv3.WithRange(end), clientv3.WithRev(rev), clientv3.WithLimit(int64(limit)))
			ch <- read{resp, err}
		}()
		return ch
	}
	next := get(from)
	var took struct{ entries, payloads int } // by the last page
	for next != nil {
		var rd read
		select {
		case rd = <-next:
		case <-ctx.Done():
			return
		}
		next = nil
		var pg decodedPage
		if rd.err != nil {
			pg.err = rd.err
		} else if kvs := rd.resp.Kvs; len(kvs) > 0 {
			if id, ok := r.Keyspace.ParseBatch(string(kvs[len(kvs)-1].Key)); ok && id >= from && id < last {
				from = id + 1
				next = get(from) // the page after: where this one leaves the scan if it holds no gap
			}
			if r.ReuseBuffers && took.entries > 0 {
				select {
				case pg.blocks = <-free:
				default:
				}
				if b := pg.blocks; b == nil || cap(b.Entries) < took.entries || cap(b.Payloads) < took.payloads {
					pg.blocks = batchlog.NewBatchBlocks[state.Entry](took.entries+took.entries/4, took.payloads+took.payloads/4)
				}
			}
			took.entries, took.payloads = 0, 0
			pg.records = make([]decodedRecord, len(kvs))
			for i, kv := range kvs {
				rec := &pg.records[i]
				rec.key = string(kv.Key)
				if rec.id, rec.parsed = r.Keyspace.ParseBatch(rec.key); rec.parsed {
					rec.batch, rec.err = decodeBatch(kv.Value, pg.blocks)
					took.entries += len(rec.batch.Entries)
					for _, e := range rec.batch.Entries {
						took.payloads += len(e.Payload)
					}
				}
			}
		}
		select {
		case pages <- pg:
		case <-ctx.Done():
			return
		}
	}
}

// ReadAll reads the complete OpLog from batch 1 (RFC "Complete OpLog Fallback").
func (r *Reader) ReadAll(ctx context.Context, fn func(state.Batch) error) (Head, error) {
	return r.Scan(ctx, state.Cursor{}, fn)
}

// ResidueKeys are the keys only a history leaves behind: with none of them
// (and no prefix, no batch) a namespace is fresh.
func ResidueKeys(ks keyspace.Keyspace) []string {
	return []string{ks.ProducerView(), ks.CompactionFloor(), ks.SnapshotLatest(), ks.SnapshotFallback(), ks.LegacyImport()}
}

// checkZeroPrefixAlone returns a *ResidueError naming what stands beside
// a zero durable prefix written at prefixRev, at revision rev: any residue
// key but the producer view, and the view too when it is older than the
// prefix (a claim writes a fresh namespace's view and zero prefix in one
// transaction; a later claim moves the view past it).
func checkZeroPrefixAlone(ctx context.Context, kv clientv3.KV, ks keyspace.Keyspace, rev, prefixRev int64) error {
	return residueAt(ctx, kv, ks, rev, func(k *mvccKV) bool {
		return string(k.Key) != ks.ProducerView() || k.ModRevision < prefixRev
	})
}

// checkNoResidue returns a *ResidueError naming every residue key present
// at revision rev.
func checkNoResidue(ctx context.Context, kv clientv3.KV, ks keyspace.Keyspace, rev int64) error {
	return residueAt(ctx, kv, ks, rev, func(*mvccKV) bool { return true })
}

// residueAt returns a *ResidueError naming every residue key present at
// revision rev that counts (counts judges each present key).
func residueAt(ctx context.Context, kv clientv3.KV, ks keyspace.Keyspace, rev int64, counts func(*mvccKV) bool) error {
	keys := ResidueKeys(ks)
	ops := make([]clientv3.Op, len(keys))
	for i, k := range keys {
		ops[i] = clientv3.OpGet(k, clientv3.WithKeysOnly(), clientv3.WithRev(rev))
	}
	resp, err := kv.Txn(ctx).Then(ops...).Commit()
	if err != nil {
		return fmt.Errorf("read namespace residue: %w", err)
	}
	var present []string
	for i, k := range keys {
		if got := firstKV(resp.Responses[i]); got != nil && counts(got) {
			present = append(present, k)
		}
	}
	if len(present) > 0 {
		return &ResidueError{Keys: present}
	}
	return nil
}
