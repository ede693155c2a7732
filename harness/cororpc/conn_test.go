package cororpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	wire "github.com/oplogha/oplogha/impl/contract/cororpc"
)

// The upstream RPC vectors (provenance in their README.md).
var vectorDir = filepath.Join("..", "..", "impl", "contract", "testdata", "upstream", "rpc")

func readRows[T any](t *testing.T, file string) []T {
	t.Helper()
	f, err := os.Open(filepath.Join(vectorDir, file))
	require.NoError(t, err)
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.UseNumber()
		var v T
		require.NoError(t, dec.Decode(&v))
		out = append(out, v)
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, out)
	return out
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	require.NoError(t, err)
	return b
}

// exchange is one request frame a test server expects and the response
// frame it answers with (nil: none, it hangs).
type exchange struct {
	request, response []byte
}

// readFrame reads one request frame.
func readFrame(nc net.Conn) ([]byte, error) {
	head := make([]byte, wire.RequestHeaderLen)
	if _, err := io.ReadFull(nc, head); err != nil {
		return nil, err
	}
	h, err := wire.DecodeRequestHeader(head)
	if err != nil {
		return nil, err
	}
	rest := make([]byte, int(h.Length)+int(h.AttachLength))
	if _, err := io.ReadFull(nc, rest); err != nil {
		return nil, err
	}
	return append(head, rest...), nil
}

// server is a test server on 127.0.0.1 whose one connection serve runs.
// closed receives what the connection's last read returned once the
// script is done (io.EOF when the client closed it).
type server struct {
	addr   string
	closed chan error
}

func newServer(t *testing.T, serve func(nc net.Conn)) *server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &server{addr: ln.Addr().String(), closed: make(chan error, 1)}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		serve(nc)
	}()
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	return s
}

// scripted serves exchanges in order, checking each request byte for byte,
// then waits for the client to close.
func scripted(t *testing.T, script []exchange) *server {
	var s *server
	s = newServer(t, func(nc net.Conn) {
		for i, x := range script {
			got, err := readFrame(nc)
			if err != nil {
				t.Errorf("exchange %d: read request: %v", i, err)
				return
			}
			if !bytes.Equal(got, x.request) {
				t.Errorf("exchange %d: request\n got %x\nwant %x", i, got, x.request)
			}
			if x.response == nil {
				break // hang: read until the client gives up
			}
			if _, err := nc.Write(x.response); err != nil {
				t.Errorf("exchange %d: write response: %v", i, err)
				return
			}
		}
		nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err := nc.Read(make([]byte, 1))
		s.closed <- err
	})
	return s
}

func dial(t *testing.T, addr string, opts Options) *Conn {
	t.Helper()
	c, err := Dial(context.Background(), addr, opts)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// check compares a typed call's result with the Expected the response
// decodes to: the value, or the ErrorCode as a typed error.
func check[T any](t *testing.T, want wire.Expected[T], got T, err error) {
	t.Helper()
	if want.HasValue {
		require.NoError(t, err)
		assert.Equal(t, want.Value, got)
		return
	}
	var code wire.ErrorCode
	require.ErrorAs(t, err, &code)
	assert.Equal(t, want.Error, code)
	assert.ErrorIs(t, err, want.Error)
}

// callLike makes, through the typed method of c, the call whose request
// body a frame carries, and checks the result against the response body.
func callLike(t *testing.T, c *Conn, fn uint32, reqBody, respBody []byte) {
	t.Helper()
	h, ok := wire.HandlerByID(fn)
	require.True(t, ok)
	reqAny, err := h.DecodeRequestAny(reqBody)
	require.NoError(t, err)
	ctx := ctxT(t)
	mustDecode := func(v any, err error) any { require.NoError(t, err); return v }
	switch req := reqAny.(type) {
	case wire.ServiceReadyRequest:
		v, err := c.ServiceReady(ctx)
		check(t, mustDecode(wire.ServiceReady.DecodeResponse(respBody)).(wire.Expected[string]), v, err)
	case wire.PingRequest:
		v, err := c.Ping(ctx, req.ClientID)
		check(t, mustDecode(wire.Ping.DecodeResponse(respBody)).(wire.Expected[wire.PingResponse]), v, err)
	case wire.MountSegmentRequest:
		err := c.MountSegment(ctx, req.Segment, req.ClientID)
		check(t, mustDecode(wire.MountSegment.DecodeResponse(respBody)).(wire.Expected[wire.Void]), wire.Void{}, err)
	case wire.ReMountSegmentRequest:
		err := c.ReMountSegment(ctx, req.Segments, req.ClientID)
		check(t, mustDecode(wire.ReMountSegment.DecodeResponse(respBody)).(wire.Expected[wire.Void]), wire.Void{}, err)
	case wire.UnmountSegmentRequest:
		err := c.UnmountSegment(ctx, req.SegmentID, req.ClientID)
		check(t, mustDecode(wire.UnmountSegment.DecodeResponse(respBody)).(wire.Expected[wire.Void]), wire.Void{}, err)
	case wire.PutStartRequest:
		v, err := c.PutStart(ctx, req.ClientID, req.Key, req.SliceLength, req.Config, req.TenantID)
		check(t, mustDecode(wire.PutStart.DecodeResponse(respBody)).(wire.Expected[[]wire.ReplicaDescriptor]), v, err)
	case wire.PutEndRequest:
		err := c.PutEnd(ctx, req.ClientID, req.ObjectMeta, req.ReplicaType, req.TenantID)
		check(t, mustDecode(wire.PutEnd.DecodeResponse(respBody)).(wire.Expected[wire.Void]), wire.Void{}, err)
	case wire.PutRevokeRequest:
		err := c.PutRevoke(ctx, req.ClientID, req.Key, req.ReplicaType, req.TenantID)
		check(t, mustDecode(wire.PutRevoke.DecodeResponse(respBody)).(wire.Expected[wire.Void]), wire.Void{}, err)
	case wire.GetReplicaListRequest:
		v, err := c.GetReplicaList(ctx, req.Key, req.TenantID)
		check(t, mustDecode(wire.GetReplicaList.DecodeResponse(respBody)).(wire.Expected[wire.GetReplicaListResponse]), v, err)
	case wire.ExistKeyRequest:
		v, err := c.ExistKey(ctx, req.Key, req.TenantID)
		check(t, mustDecode(wire.ExistKey.DecodeResponse(respBody)).(wire.Expected[bool]), v, err)
	case wire.RemoveRequest:
		err := c.Remove(ctx, req.Key, req.Force, req.TenantID)
		check(t, mustDecode(wire.Remove.DecodeResponse(respBody)).(wire.Expected[wire.Void]), wire.Void{}, err)
	default:
		t.Fatalf("no typed call for %T", reqAny)
	}
}

type captureRow struct {
	Source                string      `json:"source"`
	Connection            int         `json:"connection"`
	SeqNum                json.Number `json:"seq_num"`
	Call                  string      `json:"call"`
	RequestHasTypeLiteral bool        `json:"request_has_type_literal"`
	RequestFrameHex       string      `json:"request_frame_hex"`
	ResponseFrameHex      string      `json:"response_frame_hex"`
}

// TestReplayMasterCapture: each connection of the capture of a real
// coro_rpc_client and mooncake_master, replayed: the typed calls, made
// with the inputs the client sent, write exactly the client's frames
// (seq_num from 0), and return what the master's answers decode to.
func TestReplayMasterCapture(t *testing.T) {
	conns := map[int][]captureRow{}
	for _, r := range readRows[captureRow](t, "master-capture.jsonl") {
		if r.Source == "coro_rpc_client_to_master" {
			conns[r.Connection] = append(conns[r.Connection], r)
		}
	}
	require.Len(t, conns, 3)
	calls := 0
	for conn, rows := range conns {
		var script []exchange
		for _, r := range rows {
			script = append(script, exchange{unhex(t, r.RequestFrameHex), unhex(t, r.ResponseFrameHex)})
		}
		s := scripted(t, script)
		c := dial(t, s.addr, Options{})
		for i := range rows {
			calls++
			h, reqBody, _, err := wire.ParseRequestFrame(script[i].request)
			require.NoError(t, err)
			require.Equal(t, uint32(i), h.SeqNum, "connection %d", conn)
			_, respBody, _, err := wire.ParseResponseFrame(script[i].response)
			require.NoError(t, err)
			callLike(t, c, h.FunctionID, reqBody, respBody)
		}
		require.NoError(t, c.Err())
		c.Close()
		assert.ErrorIs(t, <-s.closed, io.EOF)
	}
	assert.Equal(t, 23, calls)
}

type frameRow struct {
	Variant          string       `json:"variant"`
	Call             string       `json:"call"`
	Case             string       `json:"case"`
	RPCErrCode       *json.Number `json:"rpc_err_code"`
	RPCErrMessage    string       `json:"rpc_err_message"`
	RequestFrameHex  string       `json:"request_frame_hex"`
	ResponseFrameHex string       `json:"response_frame_hex"`
}

// TestReplayFrames: the 13 calls of each frames file on one connection,
// in each variant (OmitTypeLiteral for the NDEBUG client's).
func TestReplayFrames(t *testing.T) {
	for _, v := range []wire.Variant{wire.TypeLiteral, wire.NoTypeLiteral} {
		var script []exchange
		for _, r := range readRows[frameRow](t, "frames."+v.String()+".jsonl") {
			if r.RPCErrCode == nil {
				script = append(script, exchange{unhex(t, r.RequestFrameHex), unhex(t, r.ResponseFrameHex)})
			}
		}
		require.Len(t, script, 13)
		s := scripted(t, script)
		c := dial(t, s.addr, Options{OmitTypeLiteral: v == wire.NoTypeLiteral})
		assert.Equal(t, v, c.Variant())
		for _, x := range script {
			h, reqBody, _, err := wire.ParseRequestFrame(x.request)
			require.NoError(t, err)
			_, respBody, _, err := wire.ParseResponseFrame(x.response)
			require.NoError(t, err)
			callLike(t, c, h.FunctionID, reqBody, respBody)
		}
		c.Close()
		assert.ErrorIs(t, <-s.closed, io.EOF)
	}
}

// TestTransportErrorClosesConnection: a response with a non-zero err_code
// is returned as a *wire.RPCError, and closes the connection: the server
// sees it closed, and the next call fails without reaching it.
func TestTransportErrorClosesConnection(t *testing.T) {
	for _, r := range readRows[frameRow](t, "frames.type_literal.jsonl") {
		if r.RPCErrCode == nil {
			continue
		}
		t.Run(r.Case, func(t *testing.T) {
			req, resp := unhex(t, r.RequestFrameHex), unhex(t, r.ResponseFrameHex)
			s := scripted(t, []exchange{{req, resp}})
			c := dial(t, s.addr, Options{})
			h, reqBody, _, err := wire.ParseRequestFrame(req)
			require.NoError(t, err)
			errCode, body, err := c.Call(ctxT(t), h.FunctionID, reqBody)
			var rerr *wire.RPCError
			require.ErrorAs(t, err, &rerr)
			assert.Equal(t, r.RPCErrMessage, rerr.Message)
			assert.Equal(t, uint8(rerr.Code), errCode)
			assert.Equal(t, r.Case, "rpc_error_"+rerr.Code.String())
			_, wantBody, _, _ := wire.ParseResponseFrame(resp)
			assert.Equal(t, wantBody, body)

			assert.ErrorIs(t, <-s.closed, io.EOF, "the client closed the connection")
			assert.ErrorIs(t, c.Err(), ErrClosed)
			assert.ErrorAs(t, c.Err(), &rerr)
			_, err = c.Ping(ctxT(t), wire.UUID{First: 1, Second: 2})
			assert.ErrorIs(t, err, ErrClosed)
		})
	}
}

// TestExtendedTransportError: a code above 255 comes as err_code 255 with
// the code in the body (the vectors' header rows).
func TestExtendedTransportError(t *testing.T) {
	type headerRow struct {
		HeaderHex        string `json:"header_hex"`
		RPCErrMessage    string `json:"rpc_err_message"`
		ErrorBodyHex     string `json:"error_body_hex"`
		ErrorBodyVariant string `json:"error_body_variant"`
	}
	n := 0
	for _, r := range readRows[headerRow](t, "headers.jsonl") {
		if r.ErrorBodyHex == "" {
			continue
		}
		head := unhex(t, r.HeaderHex)
		h, err := wire.DecodeResponseHeader(head)
		require.NoError(t, err)
		if h.ErrCode != wire.ErrCodeExtended {
			continue
		}
		n++
		s := newServer(t, func(nc net.Conn) {
			f, err := readFrame(nc)
			if err != nil {
				t.Error(err)
				return
			}
			rh, _ := wire.DecodeRequestHeader(f[:wire.RequestHeaderLen])
			h.SeqNum = rh.SeqNum
			nc.Write(append(h.Encode(), unhex(t, r.ErrorBodyHex)...))
		})
		c := dial(t, s.addr, Options{})
		_, err = c.ServiceReady(ctxT(t))
		var rerr *wire.RPCError
		require.ErrorAs(t, err, &rerr)
		assert.Equal(t, wire.RPCError{Code: 300, Message: r.RPCErrMessage}, *rerr)
		assert.ErrorIs(t, c.Err(), ErrClosed)
	}
	assert.Equal(t, 2, n)
}

// hang is a server that reads one request and never answers.
func hang(t *testing.T) *server {
	body, err := wire.Ping.EncodeRequest(wire.PingRequest{}, wire.TypeLiteral)
	require.NoError(t, err)
	frame, err := wire.RequestFrame(0, wire.FnPing, body)
	require.NoError(t, err)
	return scripted(t, []exchange{{frame, nil}})
}

func TestDeadline(t *testing.T) {
	s := hang(t)
	c := dial(t, s.addr, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.Ping(ctx, wire.UUID{})
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.ErrorIs(t, err, ErrClosed)
	assert.ErrorIs(t, <-s.closed, io.EOF)
	_, err = c.Ping(ctxT(t), wire.UUID{})
	assert.ErrorIs(t, err, ErrClosed)
}

func TestCancel(t *testing.T) {
	s := hang(t)
	c := dial(t, s.addr, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := c.Ping(ctx, wire.UUID{})
	assert.ErrorIs(t, err, context.Canceled)
	assert.ErrorIs(t, err, ErrClosed)
	assert.ErrorIs(t, <-s.closed, io.EOF)
}

// TestEndedContextLeavesConnectionOpen: a call whose ctx has ended before
// it starts sends nothing and uses no seq_num.
func TestEndedContextLeavesConnectionOpen(t *testing.T) {
	resp, err := wire.Ping.EncodeResponse(wire.Ok(wire.PingResponse{ViewVersionID: 9, ClientStatus: wire.ClientOK}), wire.TypeLiteral)
	require.NoError(t, err)
	respFrame, err := wire.ResponseFrame(0, 0, resp)
	require.NoError(t, err)
	body, err := wire.Ping.EncodeRequest(wire.PingRequest{}, wire.TypeLiteral)
	require.NoError(t, err)
	reqFrame, err := wire.RequestFrame(0, wire.FnPing, body)
	require.NoError(t, err)
	s := scripted(t, []exchange{{reqFrame, respFrame}})
	c := dial(t, s.addr, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = c.Ping(ctx, wire.UUID{})
	assert.ErrorIs(t, err, context.Canceled)
	require.NoError(t, c.Err())
	got, err := c.Ping(ctxT(t), wire.UUID{})
	require.NoError(t, err)
	assert.Equal(t, wire.PingResponse{ViewVersionID: 9, ClientStatus: wire.ClientOK}, got)
}

// respondWith is a server answering its first request with what answer
// makes of the request's header.
func respondWith(t *testing.T, answer func(h wire.RequestHeader) []byte) *server {
	return newServer(t, func(nc net.Conn) {
		f, err := readFrame(nc)
		if err != nil {
			t.Error(err)
			return
		}
		h, _ := wire.DecodeRequestHeader(f[:wire.RequestHeaderLen])
		nc.Write(answer(h))
		nc.Read(make([]byte, 1))
	})
}

func TestProtocolViolations(t *testing.T) {
	for name, answer := range map[string]func(h wire.RequestHeader) []byte{
		"wrong seq": func(h wire.RequestHeader) []byte {
			return wire.NewResponseHeader(h.SeqNum+1, 0, 0).Encode()
		},
		"wrong magic": func(h wire.RequestHeader) []byte {
			b := wire.NewResponseHeader(h.SeqNum, 0, 0).Encode()
			b[0] = 0x16
			return b
		},
		"over the limit": func(h wire.RequestHeader) []byte {
			return wire.NewResponseHeader(h.SeqNum, 0, 1<<30).Encode()
		},
	} {
		t.Run(name, func(t *testing.T) {
			s := respondWith(t, answer)
			c := dial(t, s.addr, Options{})
			_, _, err := c.Call(ctxT(t), wire.FnServiceReady, nil)
			assert.ErrorIs(t, err, ErrProtocol)
			assert.ErrorIs(t, err, ErrClosed)
			assert.ErrorIs(t, c.Err(), ErrClosed)
		})
	}
	t.Run("hang up mid-response", func(t *testing.T) {
		// The server announces a body, then closes the connection.
		s := newServer(t, func(nc net.Conn) {
			f, err := readFrame(nc)
			if err != nil {
				t.Error(err)
				return
			}
			h, _ := wire.DecodeRequestHeader(f[:wire.RequestHeaderLen])
			nc.Write(append(wire.NewResponseHeader(h.SeqNum, 0, 10).Encode(), 1, 2, 3)) // 3 of 10 body bytes
		})
		c := dial(t, s.addr, Options{})
		_, _, err := c.Call(ctxT(t), wire.FnServiceReady, nil)
		assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
		assert.ErrorIs(t, err, ErrClosed)
	})
	t.Run("undecodable reply keeps the connection", func(t *testing.T) {
		s := respondWith(t, func(h wire.RequestHeader) []byte {
			f, _ := wire.ResponseFrame(h.SeqNum, 0, []byte{1, 2, 3, 4, 5})
			return f
		})
		c := dial(t, s.addr, Options{})
		_, err := c.ServiceReady(ctxT(t))
		assert.Error(t, err)
		assert.NoError(t, c.Err())
	})
}

// TestConcurrentCalls: calls from many goroutines go one at a time, each
// with its own seq_num, and each gets its own answer.
func TestConcurrentCalls(t *testing.T) {
	const workers, each = 8, 10
	s := newServer(t, func(nc net.Conn) {
		for {
			f, err := readFrame(nc)
			if err != nil {
				return
			}
			h, body, _, err := wire.ParseRequestFrame(f)
			if err != nil {
				t.Error(err)
				return
			}
			req, err := wire.Ping.DecodeRequest(body)
			if err != nil {
				t.Error(err)
				return
			}
			// The answer names the seq and echoes the client id.
			resp, _ := wire.Ping.EncodeResponse(wire.Ok(wire.PingResponse{ViewVersionID: int64(h.SeqNum)<<32 | int64(req.ClientID.First)}), wire.TypeLiteral)
			out, _ := wire.ResponseFrame(h.SeqNum, 0, resp)
			if _, err := nc.Write(out); err != nil {
				return
			}
		}
	})
	c := dial(t, s.addr, Options{})
	var (
		mu   sync.Mutex
		seqs = map[int64]bool{}
		wg   sync.WaitGroup
	)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				got, err := c.Ping(context.Background(), wire.UUID{First: uint64(w)})
				if !assert.NoError(t, err) {
					return
				}
				assert.Equal(t, int64(w), got.ViewVersionID&0xffffffff)
				mu.Lock()
				seqs[got.ViewVersionID>>32] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	assert.Len(t, seqs, workers*each)
	for i := range int64(workers * each) {
		assert.True(t, seqs[i], "seq %d", i)
	}
}

func TestDialFails(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	_, err = Dial(ctxT(t), addr, Options{})
	assert.Error(t, err)
	assert.False(t, errors.Is(err, ErrClosed))
}
