package snapshot

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/oplogha/oplogha/impl/contract"
	"github.com/oplogha/oplogha/impl/contract/batchsnap"
	"github.com/oplogha/oplogha/impl/objstore"
	"github.com/oplogha/oplogha/impl/state"
)

// builderBatch is how many converted objects travel to the builder at once.
const builderBatch = 4096

type built struct {
	k state.ObjectKey
	o *state.Object
}

// pipelinedBuilder feeds a state.Builder from another goroutine, so
// verifying, decoding and converting (this goroutine) and building (B-tree
// inserts) run on two cores. Converted objects share nothing with the
// decoder's reused buffers, so handing them across is safe. The builder's
// first error stops the read at the next object.
type pipelinedBuilder struct {
	b       *state.Builder
	ch      chan []built
	cur     []built
	started bool
	done    chan struct{}
	mu      sync.Mutex
	err     error
	objects uint64
}

func newPipelinedBuilder() *pipelinedBuilder {
	return &pipelinedBuilder{b: state.NewBuilder(), ch: make(chan []built, 2), done: make(chan struct{})}
}

func (p *pipelinedBuilder) visitor() batchsnap.Visitor {
	// A chunk decoded whole, then converted: measured faster here than the
	// per-object scan (which reads each chunk twice) when a state is built
	// from it; the scan serves readers that keep nothing (Verify).
	return batchsnap.Visitor{Segments: p.segments, Chunk: p.chunk}
}

func (p *pipelinedBuilder) segments(segs []batchsnap.SegmentInfo) error {
	for i := range segs {
		s, err := state.SegmentFromSnapshot(segs[i])
		if err != nil {
			return fmt.Errorf("segment %d: %w", i, err)
		}
		if err := p.b.AddSegment(s); err != nil {
			return err
		}
	}
	return nil
}

func (p *pipelinedBuilder) failed() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

func (p *pipelinedBuilder) chunk(c *batchsnap.ObjectChunk) error {
	for i := range c.Objects {
		if err := p.object(&c.Objects[i]); err != nil {
			return fmt.Errorf("chunk %d %w", c.ChunkIndex, err)
		}
	}
	return nil
}

func (p *pipelinedBuilder) object(e *batchsnap.ObjectEntry) error {
	if !p.started {
		// Segments are all added (they precede every object); from here on
		// only the builder goroutine touches the Builder.
		p.started = true
		go p.run()
	}
	k, o, err := state.ObjectFromSnapshot(e)
	if err != nil {
		return fmt.Errorf("object %d: %w", p.objects, err)
	}
	if p.cur == nil {
		p.cur = make([]built, 0, builderBatch)
	}
	p.cur = append(p.cur, built{k, o})
	if len(p.cur) == builderBatch {
		if err := p.failed(); err != nil {
			return err
		}
		p.ch <- p.cur
		p.cur = nil
	}
	p.objects++
	return nil
}

func (p *pipelinedBuilder) run() {
	defer close(p.done)
	var err error
	for batch := range p.ch {
		for i := 0; err == nil && i < len(batch); i++ {
			err = p.b.AddObjectShared(batch[i].k, batch[i].o)
		}
		if err != nil {
			p.mu.Lock()
			p.err = err
			p.mu.Unlock()
		}
	}
}

// result waits for the builder and returns the state at cursor c, or the
// first error: the reader's (readErr) before the builder's.
func (p *pipelinedBuilder) result(readErr error, c state.Cursor) (*state.State, error) {
	if p.started {
		if len(p.cur) > 0 {
			p.ch <- p.cur
			p.cur = nil
		}
		close(p.ch)
		<-p.done
	}
	if readErr == nil {
		readErr = p.failed()
	}
	if readErr != nil {
		return nil, readErr
	}
	return p.b.Finish(c)
}

// Timings split a read of a snapshot: Download is the time until the last
// object came out of the store, Decode until the state was built. They run
// side by side (the next chunk downloads while one is decoded), so Decode
// includes most of Download.
type Timings struct {
	Download, Decode time.Duration
}

// timedGetter notes when the last object read from a store was read whole.
type timedGetter struct {
	g     contract.ObjectGetter
	start time.Time
	last  atomic.Int64 // nanoseconds since start
}

func (t *timedGetter) GetObject(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	rc, n, err := t.g.GetObject(ctx, key)
	if err != nil {
		return rc, n, err
	}
	return &timedBody{ReadCloser: rc, t: t}, n, nil
}

type timedBody struct {
	io.ReadCloser
	t *timedGetter
}

func (b *timedBody) Close() error {
	b.t.last.Store(int64(time.Since(b.t.start)))
	return b.ReadCloser.Close()
}

// OpenState reads the snapshot p names into a new state: by exact keys,
// each object verified by size and CRC32C before it is decoded, decoded and
// built on two cores. Nothing is returned unless all of it is valid. The
// head is returned with an error too, when it was read.
func OpenState(ctx context.Context, st objstore.Store, p batchsnap.Pointer) (*batchsnap.Head, *state.State, Timings, error) {
	tg := &timedGetter{g: objstore.Getter(st), start: time.Now()}
	var t Timings
	h, err := batchsnap.OpenHead(ctx, tg, p)
	if err != nil {
		return h, nil, t, err
	}
	b := newPipelinedBuilder()
	err = h.ReadContent(ctx, tg, b.visitor())
	s, err := b.result(err, h.Descriptor.Cursor())
	t.Download, t.Decode = time.Duration(tg.last.Load()), time.Since(tg.start)
	if err != nil {
		return h, nil, t, err
	}
	if b.objects != h.Objects() {
		return h, nil, t, fmt.Errorf("%w: read %d objects, the manifest lists %d", ErrCount, b.objects, h.Objects())
	}
	return h, s, t, nil
}

// Verify reads the snapshot p names whole and decodes every object into
// this model without keeping it: what a node checks before it trusts a
// snapshot it did not write (retention's revalidation).
func Verify(ctx context.Context, st objstore.Store, p batchsnap.Pointer) (*batchsnap.Head, error) {
	g := objstore.Getter(st)
	h, err := batchsnap.OpenHead(ctx, g, p)
	if err != nil {
		return h, err
	}
	var check state.SnapshotChecker
	var n uint64
	return h, h.ReadContent(ctx, g, batchsnap.Visitor{
		Segments: func(segs []batchsnap.SegmentInfo) error {
			for i := range segs {
				if _, err := state.SegmentFromSnapshot(segs[i]); err != nil {
					return fmt.Errorf("segment %d: %w", i, err)
				}
			}
			return nil
		},
		Object: func(e *batchsnap.ObjectEntry) error {
			if err := check.Check(e); err != nil {
				return fmt.Errorf("object %d: %w", n, err) // by position: no tenant key in a log line
			}
			n++
			return nil
		},
		Views: true,
	})
}
