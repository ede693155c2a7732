package cororpc

import (
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/impl/contract/internal/vectortest"
)

// The tests of this file are driven by the upstream RPC vectors
// (testdata/upstream/rpc, provenance in its README.md).

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	require.NoError(t, err)
	return b
}

func u32(t testing.TB, n json.Number) uint32 {
	t.Helper()
	v, err := strconv.ParseUint(n.String(), 10, 32)
	require.NoError(t, err)
	return uint32(v)
}

func variantOf(t testing.TB, s string) Variant {
	t.Helper()
	switch s {
	case "type_literal":
		return TypeLiteral
	case "no_type_literal":
		return NoTypeLiteral
	}
	t.Fatalf("unknown variant %q", s)
	return 0
}

func handler(t testing.TB, name string) Handler {
	t.Helper()
	h, ok := HandlerByName(name)
	require.True(t, ok, "no handler %q", name)
	return h
}

type functionIDRow struct {
	Method        string      `json:"method"`
	QualifiedName string      `json:"qualified_name"`
	FunctionID    json.Number `json:"function_id"`
	FunctionIDHex string      `json:"function_id_hex"`
	RegisteredAt  string      `json:"registered_at"`
	DeclaredAt    string      `json:"declared_at"`
}

// TestFunctionIDs: every handler upstream registers has FunctionID of its
// qualified name; the 11 handlers here have theirs, and their constants.
func TestFunctionIDs(t *testing.T) {
	rows := vectortest.Read[functionIDRow](t, "rpc/function_ids.jsonl")
	require.Len(t, rows, 64)
	seen := map[uint32]bool{}
	handlers := 0
	for _, r := range rows {
		id := u32(t, r.FunctionID)
		assert.Equal(t, id, FunctionID(r.QualifiedName), r.QualifiedName)
		assert.Equal(t, r.FunctionIDHex, fmt.Sprintf("%#08x", FunctionID(r.QualifiedName)), r.QualifiedName)
		assert.False(t, seen[id], "duplicate id %#x", id)
		seen[id] = true
		if h, ok := HandlerByName(r.Method); ok {
			handlers++
			assert.Equal(t, r.QualifiedName, h.QualifiedName())
			assert.Equal(t, id, h.ID(), r.Method)
			byID, ok := HandlerByID(id)
			require.True(t, ok)
			assert.Equal(t, r.Method, byID.Name())
		}
	}
	assert.Equal(t, 11, handlers)
	assert.Len(t, Handlers(), 11)
	for name, id := range map[string]uint32{
		"ServiceReady": FnServiceReady, "Ping": FnPing, "MountSegment": FnMountSegment,
		"ReMountSegment": FnReMountSegment, "UnmountSegment": FnUnmountSegment, "PutStart": FnPutStart,
		"PutEnd": FnPutEnd, "PutRevoke": FnPutRevoke, "GetReplicaList": FnGetReplicaList,
		"ExistKey": FnExistKey, "Remove": FnRemove,
	} {
		assert.Equal(t, FunctionID(qualifiedPrefix+name), id, name)
	}
	assert.Equal(t, uint32(0xd6c2dae5), FunctionID("mooncake::WrappedMasterService::Ping"))
}

type headerRow struct {
	Kind             string                 `json:"kind"`
	Function         string                 `json:"function"`
	Fields           map[string]json.Number `json:"fields"`
	HeaderLen        int                    `json:"header_len"`
	HeaderHex        string                 `json:"header_hex"`
	RPCErrc          *json.Number           `json:"rpc_errc"`
	RPCErrMessage    string                 `json:"rpc_err_message"`
	ErrorBodyHex     string                 `json:"error_body_hex"`
	ErrorBodyVariant string                 `json:"error_body_variant"`
}

func (r headerRow) field(t testing.TB, name string) uint32 {
	t.Helper()
	n, ok := r.Fields[name]
	require.True(t, ok, "no field %q", name)
	return u32(t, n)
}

// TestHeaders: every header encodes to its bytes and decodes to its
// fields; every transport error body encodes and decodes.
func TestHeaders(t *testing.T) {
	rows := vectortest.Read[headerRow](t, "rpc/headers.jsonl")
	require.Len(t, rows, 22)
	var requests, responses, errorBodies int
	for i, r := range rows {
		raw := unhex(t, r.HeaderHex)
		require.Len(t, raw, r.HeaderLen)
		switch r.Kind {
		case "request":
			requests++
			require.Len(t, r.Fields, 8)
			h := RequestHeader{
				Magic: uint8(r.field(t, "magic")), Version: uint8(r.field(t, "version")),
				SerializeType: uint8(r.field(t, "serialize_type")), MsgType: uint8(r.field(t, "msg_type")),
				SeqNum: r.field(t, "seq_num"), FunctionID: r.field(t, "function_id"),
				Length: r.field(t, "length"), AttachLength: r.field(t, "attach_length"),
			}
			assert.Equal(t, raw, h.Encode(), "row %d", i)
			got, err := DecodeRequestHeader(raw)
			require.NoError(t, err)
			assert.Equal(t, h, got)
			if h.AttachLength == 0 {
				assert.Equal(t, h, NewRequestHeader(h.SeqNum, h.FunctionID, h.Length))
			}
			assert.Equal(t, FunctionID(qualifiedPrefix+r.Function), h.FunctionID)
		case "response":
			responses++
			require.Len(t, r.Fields, 7)
			h := ResponseHeader{
				Magic: uint8(r.field(t, "magic")), Version: uint8(r.field(t, "version")),
				ErrCode: uint8(r.field(t, "err_code")), MsgType: uint8(r.field(t, "msg_type")),
				SeqNum: r.field(t, "seq_num"), Length: r.field(t, "length"), AttachLength: r.field(t, "attach_length"),
			}
			assert.Equal(t, raw, h.Encode(), "row %d", i)
			got, err := DecodeResponseHeader(raw)
			require.NoError(t, err)
			assert.Equal(t, h, got)
			if r.RPCErrc == nil {
				continue
			}
			errorBodies++
			code := u32(t, *r.RPCErrc)
			body := unhex(t, r.ErrorBodyHex)
			assert.Equal(t, int(h.Length), len(body))
			errCode, enc, err := EncodeRPCError(RPCError{Code: Errc(code), Message: r.RPCErrMessage}, variantOf(t, r.ErrorBodyVariant))
			require.NoError(t, err)
			assert.Equal(t, h.ErrCode, errCode)
			assert.Equal(t, body, enc)
			dec, err := DecodeRPCError(h.ErrCode, body)
			require.NoError(t, err)
			assert.Equal(t, RPCError{Code: Errc(code), Message: r.RPCErrMessage}, dec)
			assert.Equal(t, r.ErrorBodyVariant == "type_literal", HasTypeLiteral(body))
		default:
			t.Fatalf("row %d: kind %q", i, r.Kind)
		}
	}
	t.Logf("%d request headers, %d response headers, %d transport error bodies", requests, responses, errorBodies)
	assert.Equal(t, 9, requests)
	assert.Equal(t, 13, responses)
	assert.Equal(t, 8, errorBodies)
}

type bodyRow struct {
	Variant       string         `json:"variant"`
	Call          string         `json:"call"`
	QualifiedName string         `json:"qualified_name"`
	FunctionID    json.Number    `json:"function_id"`
	Direction     string         `json:"direction"`
	Case          string         `json:"case"`
	Inputs        map[string]any `json:"inputs"`
	Output        map[string]any `json:"output"`
	HashHead      string         `json:"hash_head"`
	BodyLen       int            `json:"body_len"`
	BodyHex       string         `json:"body_hex"`
}

// literalHash is the struct_pack type hash of a literal: the first four
// bytes of its MD5, big-endian, bit 0 cleared.
func literalHash(lit []byte) uint32 {
	sum := md5.Sum(lit)
	return binary.BigEndian.Uint32(sum[:4]) &^ 1
}

// checkBody checks one body row: a request encodes from its inputs to the
// body and decodes back; a response decodes to its output and re-encodes
// to the body.
func checkBody(t *testing.T, r bodyRow) {
	h := handler(t, r.Call)
	v := variantOf(t, r.Variant)
	body := unhex(t, r.BodyHex)
	require.Len(t, body, r.BodyLen)
	require.Equal(t, h.QualifiedName(), r.QualifiedName)
	require.Equal(t, h.ID(), u32(t, r.FunctionID))
	lit := h.ResponseLiteral()
	if r.Direction == "request" {
		lit = h.RequestLiteral()
	}
	if len(body) == 0 {
		assert.Empty(t, r.HashHead)
		assert.Nil(t, lit, "an empty body is the empty argument list")
	} else {
		head := binary.LittleEndian.Uint32(body)
		assert.Equal(t, r.HashHead, fmt.Sprintf("%#08x", head))
		assert.Equal(t, literalHash(lit), head&^1, "hash head is MD5 of the literal")
		assert.Equal(t, v == TypeLiteral, HasTypeLiteral(body))
	}
	switch r.Direction {
	case "request":
		req := requestOf(t, r.Call, r.Inputs)
		enc, err := h.EncodeRequestAny(req, v)
		require.NoError(t, err)
		assert.Equal(t, r.BodyHex, hex.EncodeToString(enc))
		dec, err := h.DecodeRequestAny(body)
		require.NoError(t, err)
		assert.Equal(t, req, dec)
	case "response":
		want := responseOf(t, r.Call, r.Output)
		dec, err := h.DecodeResponseAny(body)
		require.NoError(t, err)
		assert.Equal(t, want, dec)
		enc, err := h.EncodeResponseAny(dec, v)
		require.NoError(t, err)
		assert.Equal(t, r.BodyHex, hex.EncodeToString(enc))
	default:
		t.Fatalf("direction %q", r.Direction)
	}
}

// TestBodies: every body of both variants.
func TestBodies(t *testing.T) {
	for _, file := range []string{"bodies.type_literal.jsonl", "bodies.no_type_literal.jsonl"} {
		rows := vectortest.Read[bodyRow](t, "rpc/"+file)
		require.Len(t, rows, 47)
		calls := map[string]bool{}
		for _, r := range rows {
			calls[r.Call] = true
			require.Equal(t, file, "bodies."+r.Variant+".jsonl")
			t.Run(fmt.Sprintf("%s/%s/%s/%s", r.Variant, r.Call, r.Direction, r.Case), func(t *testing.T) { checkBody(t, r) })
		}
		assert.Len(t, calls, 11, "every handler has bodies")
	}
}

// TestVariantsAgree: the two files hold the same values, so each row's
// value encodes in the other variant to the other file's bytes, and each
// variant decodes to the same value.
func TestVariantsAgree(t *testing.T) {
	lit := vectortest.Read[bodyRow](t, "rpc/bodies.type_literal.jsonl")
	nolit := vectortest.Read[bodyRow](t, "rpc/bodies.no_type_literal.jsonl")
	require.Equal(t, len(lit), len(nolit))
	for i := range lit {
		a, b := lit[i], nolit[i]
		require.Equal(t, a.Call+a.Direction+a.Case, b.Call+b.Direction+b.Case)
		h := handler(t, a.Call)
		if a.Direction == "request" {
			va, err := h.DecodeRequestAny(unhex(t, a.BodyHex))
			require.NoError(t, err)
			vb, err := h.DecodeRequestAny(unhex(t, b.BodyHex))
			require.NoError(t, err)
			assert.Equal(t, va, vb)
			enc, err := h.EncodeRequestAny(va, NoTypeLiteral)
			require.NoError(t, err)
			assert.Equal(t, b.BodyHex, hex.EncodeToString(enc))
		} else {
			va, err := h.DecodeResponseAny(unhex(t, a.BodyHex))
			require.NoError(t, err)
			vb, err := h.DecodeResponseAny(unhex(t, b.BodyHex))
			require.NoError(t, err)
			assert.Equal(t, va, vb)
			enc, err := h.EncodeResponseAny(vb, TypeLiteral)
			require.NoError(t, err)
			assert.Equal(t, a.BodyHex, hex.EncodeToString(enc))
		}
	}
}

type frameRow struct {
	Variant          string         `json:"variant"`
	Call             string         `json:"call"`
	QualifiedName    string         `json:"qualified_name"`
	FunctionID       json.Number    `json:"function_id"`
	Case             string         `json:"case"`
	SeqNum           json.Number    `json:"seq_num"`
	Inputs           map[string]any `json:"inputs"`
	Output           map[string]any `json:"output"`
	RPCErrCode       *json.Number   `json:"rpc_err_code"`
	RPCErrMessage    string         `json:"rpc_err_message"`
	RequestFrameHex  string         `json:"request_frame_hex"`
	ResponseFrameHex string         `json:"response_frame_hex"`
	ResponseBodyHex  string         `json:"response_body_hex"`
}

// TestFrames: every whole frame, header and body, both variants, the
// transport errors included.
func TestFrames(t *testing.T) {
	for _, file := range []string{"frames.type_literal.jsonl", "frames.no_type_literal.jsonl"} {
		rows := vectortest.Read[frameRow](t, "rpc/"+file)
		require.Len(t, rows, 15)
		errs := 0
		for _, r := range rows {
			if r.RPCErrCode != nil {
				errs++
			}
			t.Run(r.Variant+"/"+r.Call+"/"+r.Case, func(t *testing.T) { checkFrame(t, r) })
		}
		assert.Equal(t, 2, errs)
	}
}

func checkFrame(t *testing.T, r frameRow) {
	v := variantOf(t, r.Variant)
	seq := u32(t, r.SeqNum)
	h := handler(t, r.Call)
	require.Equal(t, h.ID(), u32(t, r.FunctionID))

	// The request: from inputs where the row has them, else (the
	// transport error rows) decoded from the frame and re-encoded.
	reqFrame := unhex(t, r.RequestFrameHex)
	rh, reqBody, attach, err := ParseRequestFrame(reqFrame)
	require.NoError(t, err)
	assert.Empty(t, attach)
	assert.Equal(t, NewRequestHeader(seq, h.ID(), uint32(len(reqBody))), rh)
	req, err := h.DecodeRequestAny(reqBody)
	require.NoError(t, err)
	if r.RPCErrCode == nil {
		assert.Equal(t, requestOf(t, h.Name(), r.Inputs), req)
	}
	body, err := h.EncodeRequestAny(req, v)
	require.NoError(t, err)
	frame, err := RequestFrame(seq, h.ID(), body)
	require.NoError(t, err)
	assert.Equal(t, r.RequestFrameHex, hex.EncodeToString(frame))

	respFrame := unhex(t, r.ResponseFrameHex)
	resp, respBody, attach, err := ParseResponseFrame(respFrame)
	require.NoError(t, err)
	assert.Empty(t, attach)
	assert.Equal(t, seq, resp.SeqNum)
	if r.RPCErrCode != nil {
		code := u32(t, *r.RPCErrCode)
		assert.Equal(t, uint8(code), resp.ErrCode)
		assert.Equal(t, r.ResponseBodyHex, hex.EncodeToString(respBody))
		e, err := DecodeRPCError(resp.ErrCode, respBody)
		require.NoError(t, err)
		assert.Equal(t, RPCError{Code: Errc(code), Message: r.RPCErrMessage}, e)
		assert.Equal(t, r.Case, "rpc_error_"+e.Code.String())
		errCode, body, err := EncodeRPCError(e, v)
		require.NoError(t, err)
		frame, err := ResponseFrame(seq, errCode, body)
		require.NoError(t, err)
		assert.Equal(t, r.ResponseFrameHex, hex.EncodeToString(frame))
		return
	}
	assert.Zero(t, resp.ErrCode)
	want := responseOf(t, h.Name(), r.Output)
	got, err := h.DecodeResponseAny(respBody)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	body, err = h.EncodeResponseAny(want, v)
	require.NoError(t, err)
	frame, err = ResponseFrame(seq, 0, body)
	require.NoError(t, err)
	assert.Equal(t, r.ResponseFrameHex, hex.EncodeToString(frame))
}

type captureRow struct {
	Source                 string         `json:"source"`
	Connection             int            `json:"connection"`
	SeqNum                 json.Number    `json:"seq_num"`
	Call                   string         `json:"call"`
	FunctionID             json.Number    `json:"function_id"`
	RPCErrCode             json.Number    `json:"rpc_err_code"`
	Inputs                 map[string]any `json:"inputs"`
	Output                 map[string]any `json:"output"`
	RequestHasTypeLiteral  bool           `json:"request_has_type_literal"`
	ResponseHasTypeLiteral bool           `json:"response_has_type_literal"`
	RequestFrameHex        string         `json:"request_frame_hex"`
	ResponseFrameHex       string         `json:"response_frame_hex"`
	RequestVariant         string         `json:"request_variant"`
	RequestCase            string         `json:"request_case"`
	ResponseHex            string         `json:"response_hex"`
	ExpectedCase           *string        `json:"expected_case"`
	MatchesTypeLiteral     *bool          `json:"matches_type_literal_vector"`
	MatchesHeaderErrorBody *bool          `json:"matches_header_vector_error_body"`
}

// TestMasterCapture: what a real coro_rpc_client sent a real
// mooncake_master encodes here byte for byte from its decoded inputs, and
// every answer of the master decodes to its output and re-encodes.
func TestMasterCapture(t *testing.T) {
	rows := vectortest.Read[captureRow](t, "rpc/master-capture.jsonl")
	require.Len(t, rows, 41)
	bodies := map[string]string{} // call/case -> type_literal response body hex
	for _, b := range vectortest.Read[bodyRow](t, "rpc/bodies.type_literal.jsonl") {
		if b.Direction == "response" {
			bodies[b.Call+"/"+b.Case] = b.BodyHex
		}
	}
	var errorBody string
	for _, h := range vectortest.Read[headerRow](t, "rpc/headers.jsonl") {
		if h.ErrorBodyVariant == "type_literal" && h.RPCErrc != nil && u32(t, *h.RPCErrc) == uint32(ErrcFunctionNotRegistered) {
			errorBody = h.ErrorBodyHex
		}
	}
	require.NotEmpty(t, errorBody)
	var pairs, replies int
	lastSeq := map[int]int{}
	for i, r := range rows {
		switch r.Source {
		case "coro_rpc_client_to_master":
			pairs++
			seq := u32(t, r.SeqNum)
			// coro_rpc_client numbers each connection's calls from 0.
			prev, ok := lastSeq[r.Connection]
			if !ok {
				prev = -1
			}
			assert.Equal(t, prev+1, int(seq), "row %d", i)
			lastSeq[r.Connection] = int(seq)
			t.Run(fmt.Sprintf("conn%d/seq%d/%s", r.Connection, seq, r.Call), func(t *testing.T) {
				h := handler(t, r.Call)
				require.Equal(t, h.ID(), u32(t, r.FunctionID))
				req := requestOf(t, r.Call, r.Inputs)
				v := NoTypeLiteral
				if r.RequestHasTypeLiteral {
					v = TypeLiteral
				}
				body, err := h.EncodeRequestAny(req, v)
				require.NoError(t, err)
				frame, err := RequestFrame(seq, h.ID(), body)
				require.NoError(t, err)
				assert.Equal(t, r.RequestFrameHex, hex.EncodeToString(frame))

				resp, respBody, _, err := ParseResponseFrame(unhex(t, r.ResponseFrameHex))
				require.NoError(t, err)
				assert.Equal(t, seq, resp.SeqNum)
				assert.Equal(t, uint8(u32(t, r.RPCErrCode)), resp.ErrCode)
				assert.Equal(t, r.ResponseHasTypeLiteral, HasTypeLiteral(respBody))
				want := responseOf(t, r.Call, r.Output)
				got, err := h.DecodeResponseAny(respBody)
				require.NoError(t, err)
				assert.Equal(t, want, got)
				enc, err := h.EncodeResponseAny(got, TypeLiteral)
				require.NoError(t, err)
				assert.Equal(t, respBody, enc)
			})
		case "vector_request_to_master":
			replies++
			t.Run(fmt.Sprintf("reply/%s/%s/%s", r.RequestVariant, r.Call, r.RequestCase), func(t *testing.T) {
				body := unhex(t, r.ResponseHex)
				code := u32(t, r.RPCErrCode)
				if code != 0 {
					e, err := DecodeRPCError(uint8(code), body)
					require.NoError(t, err)
					assert.Equal(t, Errc(code), e.Code)
					if r.MatchesHeaderErrorBody != nil && *r.MatchesHeaderErrorBody {
						assert.Equal(t, errorBody, r.ResponseHex)
					}
					errCode, encBody, err := EncodeRPCError(e, TypeLiteral)
					require.NoError(t, err)
					assert.Equal(t, uint8(code), errCode)
					assert.Equal(t, body, encBody)
					return
				}
				h := handler(t, r.Call)
				got, err := h.DecodeResponseAny(body)
				require.NoError(t, err)
				assert.True(t, HasTypeLiteral(body), "a Release master writes the type literal")
				enc, err := h.EncodeResponseAny(got, TypeLiteral)
				require.NoError(t, err)
				assert.Equal(t, body, enc)
				if r.ExpectedCase != nil {
					require.NotNil(t, r.MatchesTypeLiteral)
					want, ok := bodies[r.Call+"/"+*r.ExpectedCase]
					require.True(t, ok, "no body vector %s/%s", r.Call, *r.ExpectedCase)
					assert.Equal(t, *r.MatchesTypeLiteral, want == r.ResponseHex)
				}
			})
		default:
			t.Fatalf("row %d: source %q", i, r.Source)
		}
	}
	t.Logf("%d client/master frame pairs, %d master replies to vector requests", pairs, replies)
	assert.Equal(t, 23, pairs)
	assert.Equal(t, 18, replies)
}
