package oplog

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/oplogha/oplogha/impl/contract/batchlog"

	"github.com/oplogha/oplogha/impl/state"
)

// DefaultBatchMaxEntries is oplog_batch_max_entries' default.
const DefaultBatchMaxEntries = 1024

// DefaultBatchMaxBytes is oplog_batch_max_bytes' default: the most bytes one
// encoded batch record may take. One append is one etcd transaction carrying
// the record plus its key, the durable prefix (twice: compare and put), the
// producer view and the keys read back on a failed compare, well under 2 KiB
// together; etcd refuses a request over --max-request-bytes, 1.5 MiB by
// default, so 1 MiB leaves that default half a MiB of room.
const DefaultBatchMaxBytes = 1 << 20

// Limits bound one group-committed batch. Zero fields take the defaults.
type Limits struct {
	MaxEntries int // entries in one batch; <= 0: DefaultBatchMaxEntries
	MaxBytes   int // bytes of one encoded batch record; <= 0: DefaultBatchMaxBytes
}

// Tx is where a GroupCommitter stages entries while it builds one batch: the
// primary validates each entry against its state plus the entries staged
// before it. Commit is called once the batch is durable; a Tx whose batch
// failed is dropped.
type Tx interface {
	Stage(state.Entry) error
	Commit(state.Batch) error
}

// Committed says where an acknowledged entry landed.
type Committed struct {
	BatchID uint64
	Seq     uint64
}

type request struct {
	ctx   context.Context
	entry state.Entry
	done  chan result
}

type result struct {
	c   Committed
	err error
}

// Hooks are called by the commit loop at its crash windows; the master wires
// its failpoints here. Nil hooks are skipped.
type Hooks struct {
	BeforeAppend func(entries int)   // batch built, append not yet sent
	AfterAppend  func(b state.Batch) // batch durable, not yet applied locally nor acknowledged
	AfterCommit  func(b state.Batch) // applied locally, acknowledgements about to go out
	// SabotageAckWithoutAppend, when it returns true, acknowledges the batch
	// without writing it anywhere: a deliberately broken build, for proving
	// that the harness's audits catch a lost acknowledged write. The master
	// wires it only to a test-only failpoint.
	SabotageAckWithoutAppend func() bool
}

// GroupCommitter batches entries from concurrent callers onto one Writer, up
// to Limits.MaxEntries entries and Limits.MaxBytes bytes of encoded record a
// batch. While one batch is in flight the next one collects. An entry that
// does not fit the batch being built opens the next one, so entries keep the
// order they were taken in; an entry too large for a batch of its own is
// refused with ErrBatchTooLarge before anything is sent.
type GroupCommitter struct {
	w          *Writer
	newTx      func() Tx
	hooks      Hooks
	maxEntries int
	maxBytes   int
	reqs       chan *request
	carry      *request // taken but did not fit the last batch: it opens the next
	stop       chan struct{}
	stopped    chan struct{}
	once       sync.Once
	err        error // terminal error once the loop ends (fenced, unknown outcome)
}

// NewGroupCommitter starts the commit loop. newTx begins a Tx on the current
// state.
func NewGroupCommitter(w *Writer, newTx func() Tx, limits Limits, hooks Hooks) *GroupCommitter {
	if limits.MaxEntries <= 0 {
		limits.MaxEntries = DefaultBatchMaxEntries
	}
	if limits.MaxBytes <= 0 {
		limits.MaxBytes = DefaultBatchMaxBytes
	}
	g := &GroupCommitter{w: w, newTx: newTx, hooks: hooks, maxEntries: limits.MaxEntries, maxBytes: limits.MaxBytes,
		reqs: make(chan *request, limits.MaxEntries), stop: make(chan struct{}), stopped: make(chan struct{})}
	go g.loop()
	return g
}

// recordOverheadBytes bounds what a batch record holds besides its
// entries and the commas between them (batchlog.RecordOverhead).
const recordOverheadBytes = batchlog.RecordOverhead

// entryBytes is the size of e's element in a batch record plus one for the
// comma before the next element: a batch record is at most
// recordOverheadBytes plus the sum of its entries' entryBytes. The error is
// the one EncodeBatch would meet on e.
func entryBytes(e state.Entry) (int, error) {
	if err := checkWritable(e); err != nil {
		return 0, err
	}
	ce := toContractEntry(e)
	return ce.EncodedLen() + 1, nil
}

// ErrCommitterStopped: the committer is closed or ended on a terminal error.
var ErrCommitterStopped = errors.New("group committer stopped")

// Submit stages e and waits until its batch is durable. An error that wraps
// ErrUnknownOutcome means e may or may not be durable.
func (g *GroupCommitter) Submit(ctx context.Context, e state.Entry) (Committed, error) {
	r := &request{ctx: ctx, entry: e, done: make(chan result, 1)}
	select {
	case g.reqs <- r:
	case <-g.stopped:
		return Committed{}, g.stoppedErr()
	case <-ctx.Done():
		return Committed{}, ctx.Err() // never handed over: not written
	}
	select {
	case res := <-r.done:
		return res.c, res.err
	case <-g.stopped:
		// The loop answers every request it took before it stops; no answer
		// means the request was never staged.
		select {
		case res := <-r.done:
			return res.c, res.err
		default:
			return Committed{}, g.stoppedErr()
		}
	case <-ctx.Done():
		return Committed{}, fmt.Errorf("%w: %v", ErrUnknownOutcome, ctx.Err())
	}
}

func (g *GroupCommitter) stoppedErr() error {
	<-g.stopped
	if g.err != nil {
		return fmt.Errorf("%w: %w", ErrCommitterStopped, g.err)
	}
	return ErrCommitterStopped
}

// Err is the error that ended the loop, if any (nil while it runs or after Close).
func (g *GroupCommitter) Err() error {
	select {
	case <-g.stopped:
		return g.err
	default:
		return nil
	}
}

// Done is closed when the loop has ended.
func (g *GroupCommitter) Done() <-chan struct{} { return g.stopped }

// Close stops the loop after the batch in flight; waiting callers get ErrCommitterStopped.
func (g *GroupCommitter) Close() {
	g.once.Do(func() { close(g.stop) })
	<-g.stopped
}

func (g *GroupCommitter) loop() {
	finished := false
	defer func() {
		if !finished {
			// A panic (a failpoint, or a bug) or Goexit in the loop is a
			// crash: the batch in flight may be durable. Draining or closing
			// stopped would tell waiters "never staged" (a definite failure)
			// in the moments before the process dies; a crashed writer
			// answers no one, and its waiters' outcomes stay unknown.
			return
		}
		g.drain()
		close(g.stopped)
	}()
	g.run()
	finished = true
}

func (g *GroupCommitter) run() {
	for {
		// An entry carried over from the last batch comes first, before
		// anything taken after it.
		first := g.carry
		g.carry = nil
		if first == nil {
			select {
			case <-g.stop:
				return
			case first = <-g.reqs:
			}
		}
		tx := g.newTx()
		batch := make([]*request, 0, g.maxEntries)
		size := recordOverheadBytes
		// add stages r, or answers it; it returns false, staging nothing,
		// when r fits a batch of its own but not this one.
		add := func(r *request) bool {
			if r.ctx.Err() != nil {
				r.done <- result{err: r.ctx.Err()} // caller gave up before staging: not written
				return true
			}
			n, err := entryBytes(r.entry)
			if err != nil {
				// EncodeBatch would fail the whole batch on it: refuse it alone.
				r.done <- result{err: fmt.Errorf("%w: entry cannot be encoded in a batch record: %w", state.ErrMalformed, err)}
				return true
			}
			if recordOverheadBytes+n > g.maxBytes {
				r.done <- result{err: fmt.Errorf("%w: the entry takes %d bytes of batch record, the budget is %d", ErrBatchTooLarge, n, g.maxBytes)}
				return true
			}
			if size+n > g.maxBytes {
				return false // never for an empty batch: it fits on its own
			}
			if err := tx.Stage(r.entry); err != nil {
				r.done <- result{err: err}
				return true
			}
			batch = append(batch, r)
			size += n
			return true
		}
		add(first)
	collect:
		for len(batch) < g.maxEntries {
			select {
			case r := <-g.reqs:
				if !add(r) {
					g.carry = r
					break collect
				}
			default:
				break collect
			}
		}
		if len(batch) == 0 {
			continue
		}
		entries := make([]state.Entry, len(batch))
		for i, r := range batch {
			entries[i] = r.entry
		}
		if g.hooks.BeforeAppend != nil {
			g.hooks.BeforeAppend(len(entries))
		}
		if g.hooks.SabotageAckWithoutAppend != nil && g.hooks.SabotageAckWithoutAppend() {
			p := g.w.Prefix()
			for i, r := range batch {
				r.done <- result{c: Committed{BatchID: p.BatchID + 1, Seq: p.LastSeq + 1 + uint64(i)}}
			}
			continue
		}
		b, err := g.w.Append(context.Background(), entries)
		if err == nil {
			if g.hooks.AfterAppend != nil {
				g.hooks.AfterAppend(b)
			}
			err = tx.Commit(b)
			if err != nil {
				err = fmt.Errorf("batch %d is durable but did not apply locally: %w", b.ID, err)
				for _, r := range batch {
					r.done <- result{err: fmt.Errorf("%w: %v", ErrUnknownOutcome, err)}
				}
				g.err = err
				return
			}
			if g.hooks.AfterCommit != nil {
				g.hooks.AfterCommit(b)
			}
			for i, r := range batch {
				r.done <- result{c: Committed{BatchID: b.ID, Seq: b.FirstSeq + uint64(i)}}
			}
			continue
		}
		for _, r := range batch {
			r.done <- result{err: err}
		}
		if errors.Is(err, ErrBatchTooLarge) && !errors.Is(err, ErrUnknownOutcome) {
			// etcd refused the request before proposing it (see Writer.Append):
			// nothing was written, the writer's prefix stands and the Tx is
			// dropped. Only this batch's entries failed.
			continue
		}
		// Fenced, prefix moved or unknown outcome: this writer cannot go on.
		g.err = err
		return
	}
}

// drain fails requests that arrived after the loop decided to stop, and the
// one carried over to a batch that was never built: none was staged.
func (g *GroupCommitter) drain() {
	err := ErrCommitterStopped
	if g.err != nil {
		err = fmt.Errorf("%w: %w", ErrCommitterStopped, g.err)
	}
	if r := g.carry; r != nil {
		g.carry = nil
		r.done <- result{err: err}
	}
	for {
		select {
		case r := <-g.reqs:
			r.done <- result{err: err}
		default:
			return
		}
	}
}
