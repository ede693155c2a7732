// Package cororpc is a client of upstream mooncake_master's coro_rpc client
// RPC over one TCP connection, as upstream's coro_rpc_client speaks it:
// frames and bodies come from impl/contract/cororpc (byte-identical to
// upstream's, proven against its vectors), requests are numbered from 0 on
// each connection, one call is on the wire at a time, and the connection
// is closed for good after a transport error (a response with a non-zero
// err_code) or any I/O failure, as upstream's client closes it: a later
// call returns ErrClosed.
package cororpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	wire "github.com/oplogha/oplogha/impl/contract/cororpc"
)

// ErrClosed: the connection was closed (by Close, or after a transport
// error or an I/O failure, which the error wraps too) and takes no more
// calls.
var ErrClosed = errors.New("cororpc: connection closed")

// ErrProtocol: the server's response is not a coro_rpc response to the
// call made (wrong magic, another seq_num, a length over the limit). The
// connection is closed.
var ErrProtocol = errors.New("cororpc: protocol violation")

// DefaultMaxResponseLen is Options.MaxResponseLen's default.
const DefaultMaxResponseLen = 64 << 20

// Options configure a connection. The zero value is upstream's client as
// a Release build runs it.
type Options struct {
	// OmitTypeLiteral writes request bodies as a build with NDEBUG does,
	// without the type literal. By default they carry it, as upstream's
	// Release build (whose flags drop -DNDEBUG) writes them; a master
	// accepts both.
	OmitTypeLiteral bool
	// MaxResponseLen bounds the body and attachment lengths a response
	// header may announce (0: DefaultMaxResponseLen); a larger one closes
	// the connection with ErrProtocol rather than allocating it.
	MaxResponseLen uint32
	// Dialer dials the connection (nil: a zero net.Dialer).
	Dialer *net.Dialer
}

// Conn is one connection to a master. Its methods are safe for concurrent
// use; calls are made one at a time, in the order they get the connection.
type Conn struct {
	nc      net.Conn
	variant wire.Variant
	maxLen  uint32

	call sync.Mutex // held for a whole call
	seq  uint32     // the next request's seq_num; under call

	mu  sync.Mutex
	err error // why the connection is closed; nil while it is open
}

// Dial connects to a master's RPC address (host:port), within ctx.
func Dial(ctx context.Context, addr string, opts Options) (*Conn, error) {
	d := opts.Dialer
	if d == nil {
		d = &net.Dialer{}
	}
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("cororpc: dial %s: %w", addr, err)
	}
	c := &Conn{nc: nc, variant: wire.TypeLiteral, maxLen: opts.MaxResponseLen}
	if opts.OmitTypeLiteral {
		c.variant = wire.NoTypeLiteral
	}
	if c.maxLen == 0 {
		c.maxLen = DefaultMaxResponseLen
	}
	return c, nil
}

// Variant is the wire variant of the request bodies the typed methods write.
func (c *Conn) Variant() wire.Variant { return c.variant }

// Err is nil while the connection takes calls, else why it does not
// (an ErrClosed).
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close closes the connection; a call under way fails.
func (c *Conn) Close() error {
	c.fail(ErrClosed)
	return nil
}

// fail closes the connection for cause, the first cause sticking, and
// returns the error later calls get.
func (c *Conn) fail(cause error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		if errors.Is(cause, ErrClosed) {
			c.err = cause
		} else {
			c.err = fmt.Errorf("%w: %w", ErrClosed, cause)
		}
		c.nc.Close()
	}
	return c.err
}

// Call sends one request, the function fn with an encoded body (from
// impl/contract/cororpc), and returns the response's err_code and body.
//
// A response with err_code 0 is the handler's reply, application errors
// included (decode it with the method's DecodeResponse). A non-zero
// err_code is a transport error: err is then a *wire.RPCError (or says
// why its body did not decode), and the connection is closed, as
// upstream's client closes it. An I/O failure, a protocol violation or
// ctx ending during the call closes it too (the error wraps ctx's error
// when ctx ended it); a ctx that has ended before the call leaves it open.
func (c *Conn) Call(ctx context.Context, fn uint32, body []byte) (errCode uint8, respBody []byte, err error) {
	c.call.Lock()
	defer c.call.Unlock()
	if err := c.Err(); err != nil {
		return 0, nil, err
	}
	if err := ctx.Err(); err != nil {
		return 0, nil, fmt.Errorf("cororpc: call %#08x: %w", fn, err)
	}
	seq := c.seq
	frame, err := wire.RequestFrame(seq, fn, body)
	if err != nil {
		return 0, nil, err
	}
	c.seq++

	deadline, _ := ctx.Deadline() // zero: none
	if err := c.nc.SetDeadline(deadline); err != nil {
		return 0, nil, c.fail(fmt.Errorf("set deadline: %w", err))
	}
	// ctx ending mid-call breaks off the blocked read or write. Once the
	// call is over, a deadline the breaking off sets must not outlive it
	// (it would cut the next call short), so the call waits for it.
	broken := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		c.nc.SetDeadline(time.Unix(1, 0))
		close(broken)
	})
	defer func() {
		if !stop() {
			<-broken
		}
	}()
	ioErr := func(what string, err error) error {
		cerr := ctx.Err()
		if cerr == nil && errors.Is(err, os.ErrDeadlineExceeded) && !deadline.IsZero() && !time.Now().Before(deadline) {
			cerr = context.DeadlineExceeded // the socket's deadline, ctx's, may pass a moment before ctx reports it
		}
		if cerr != nil {
			err = fmt.Errorf("%w (%w)", cerr, err)
		}
		return c.fail(fmt.Errorf("call %#08x seq %d: %s: %w", fn, seq, what, err))
	}

	if _, err := c.nc.Write(frame); err != nil {
		return 0, nil, ioErr("write request", err)
	}
	var head [wire.ResponseHeaderLen]byte
	if _, err := io.ReadFull(c.nc, head[:]); err != nil {
		return 0, nil, ioErr("read response header", err)
	}
	h, err := wire.DecodeResponseHeader(head[:])
	if err != nil {
		return 0, nil, c.fail(fmt.Errorf("%w: call %#08x seq %d: %w", ErrProtocol, fn, seq, err))
	}
	if h.SeqNum != seq {
		return 0, nil, c.fail(fmt.Errorf("%w: call %#08x seq %d answered with seq %d", ErrProtocol, fn, seq, h.SeqNum))
	}
	if uint64(h.Length)+uint64(h.AttachLength) > uint64(c.maxLen) {
		return 0, nil, c.fail(fmt.Errorf("%w: call %#08x seq %d: response announces %d body and %d attachment bytes, over the %d-byte limit",
			ErrProtocol, fn, seq, h.Length, h.AttachLength, c.maxLen))
	}
	rest := make([]byte, int(h.Length)+int(h.AttachLength))
	if _, err := io.ReadFull(c.nc, rest); err != nil {
		return 0, nil, ioErr("read response body", err)
	}
	respBody = rest[:h.Length] // the attachment, which no handler here sends, is dropped
	if h.ErrCode != 0 {
		rerr, derr := wire.DecodeRPCError(h.ErrCode, respBody)
		var cause error = &rerr
		if derr != nil {
			cause = fmt.Errorf("coro_rpc transport error %d: %w", h.ErrCode, derr)
		}
		c.fail(cause)
		return h.ErrCode, respBody, cause
	}
	return 0, respBody, nil
}
