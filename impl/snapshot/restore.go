package snapshot

import (
	"context"
	"io"
	"sync"

	"github.com/oplogha/oplogha/impl/objstore"
	"github.com/oplogha/oplogha/impl/state"
)

// builderBatch is how many decoded objects travel to the builder at once.
const builderBatch = 4096

type decoded struct {
	k state.ObjectKey
	o state.Object
}

// pipelinedBuilder feeds a state.Builder from another goroutine, so decoding
// (varints, checksums, interning) and building (B-tree loads, allocation)
// run on two cores. Decoded objects are the decoder's to give away (their
// strings and replica lists are never reused), so handing them across is
// safe. The builder's first error stops the decode at the next object.
type pipelinedBuilder struct {
	b       *state.Builder
	ch      chan []decoded
	free    chan []decoded
	cur     []decoded
	started bool
	done    chan struct{}
	mu      sync.Mutex
	err     error
}

func newPipelinedBuilder() *pipelinedBuilder {
	return &pipelinedBuilder{b: state.NewBuilder(), ch: make(chan []decoded, 2), free: make(chan []decoded, 3), done: make(chan struct{})}
}

func (p *pipelinedBuilder) visitor() Visitor {
	return Visitor{Segment: p.b.AddSegment, Object: p.object}
}

func (p *pipelinedBuilder) failed() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

func (p *pipelinedBuilder) object(k state.ObjectKey, o state.Object) error {
	if !p.started {
		// Segments are all added (they precede every object); from here on
		// only the builder goroutine touches the Builder.
		p.started = true
		go p.run()
	}
	if p.cur == nil {
		select {
		case p.cur = <-p.free:
		default:
			p.cur = make([]decoded, 0, builderBatch)
		}
	}
	p.cur = append(p.cur, decoded{k, o})
	if len(p.cur) == builderBatch {
		if err := p.failed(); err != nil {
			return err
		}
		p.ch <- p.cur
		p.cur = nil
	}
	return nil
}

func (p *pipelinedBuilder) run() {
	defer close(p.done)
	var err error
	for batch := range p.ch {
		for i := 0; err == nil && i < len(batch); i++ {
			err = p.b.AddObject(batch[i].k, batch[i].o)
		}
		if err != nil {
			p.mu.Lock()
			p.err = err
			p.mu.Unlock()
		}
		clear(batch)
		select {
		case p.free <- batch[:0]:
		default:
		}
	}
}

// result waits for the builder and returns the state at cursor c, or the
// first error: the decoder's (decodeErr) before the builder's.
func (p *pipelinedBuilder) result(decodeErr error, c state.Cursor) (*state.State, error) {
	if err := p.stop(); decodeErr == nil {
		decodeErr = err
	}
	if decodeErr != nil {
		return nil, decodeErr
	}
	return p.b.Finish(c)
}

// stop hands over what is left and waits for the builder goroutine.
func (p *pipelinedBuilder) stop() error {
	if p.started {
		if len(p.cur) > 0 {
			p.ch <- p.cur
			p.cur = nil
		}
		close(p.ch)
		<-p.done
	}
	return p.failed()
}

// Restore decodes a payload into a new state (a temporary recovery context:
// nothing is returned unless all of it is valid).
func Restore(r io.Reader) (*state.State, Header, error) {
	p := newPipelinedBuilder()
	h, _, err := Decode(r, p.visitor())
	s, err := p.result(err, h.Cursor)
	return s, h, err
}

// OpenState is Open into a new state: the snapshot at prefix, read by exact
// keys and verified object by object, decoded and built on two cores.
// Nothing is returned unless all of it is valid.
func OpenState(ctx context.Context, st objstore.Store, prefix string) (Descriptor, Manifest, Header, *state.State, error) {
	d, m, h, s, _, err := OpenStateTimed(ctx, st, prefix)
	return d, m, h, s, err
}

// OpenStateTimed is OpenState that also says how long the download and the
// decode took.
func OpenStateTimed(ctx context.Context, st objstore.Store, prefix string) (Descriptor, Manifest, Header, *state.State, Timings, error) {
	p := newPipelinedBuilder()
	var t Timings
	d, m, h, err := open(ctx, st, prefix, p.visitor(), &t)
	s, err := p.result(err, h.Cursor)
	return d, m, h, s, t, err
}
