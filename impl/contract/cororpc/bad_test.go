package cororpc

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/impl/contract"
	"github.com/oplogha/oplogha/impl/contract/internal/vectortest"
)

// vectorBodies are the non-empty bodies of both variants, with their rows.
func vectorBodies(t testing.TB) []bodyRow {
	var out []bodyRow
	for _, file := range []string{"rpc/bodies.type_literal.jsonl", "rpc/bodies.no_type_literal.jsonl"} {
		for _, r := range vectortest.Read[bodyRow](t, file) {
			if r.BodyLen > 0 {
				out = append(out, r)
			}
		}
	}
	return out
}

func decodeAs(h Handler, direction string, body []byte) (any, error) {
	if direction == "request" {
		return h.DecodeRequestAny(body)
	}
	return h.DecodeResponseAny(body)
}

// TestBadBodies: every proper prefix of every vector body, every body with
// a byte more, with a wrong hash head, with a wrong type literal, and
// decoded as another type, is refused with an error of the contract's
// kinds (and no panic).
func TestBadBodies(t *testing.T) {
	rows := vectorBodies(t)
	var prefixes, literals int
	for _, r := range rows {
		h := handler(t, r.Call)
		body := unhex(t, r.BodyHex)
		name := r.Variant + "/" + r.Call + "/" + r.Direction + "/" + r.Case
		for n := 0; n < len(body); n++ {
			prefixes++
			_, err := decodeAs(h, r.Direction, body[:n])
			require.Error(t, err, "%s: %d of %d bytes", name, n, len(body))
			assert.ErrorIs(t, err, contract.ErrMalformed, "%s: %d of %d bytes", name, n, len(body))
		}
		_, err := decodeAs(h, r.Direction, append(append([]byte{}, body...), 0))
		require.Error(t, err, "%s with a trailing byte", name)
		assert.ErrorIs(t, err, contract.ErrMalformed)
		assert.Contains(t, err.Error(), "1 bytes after the value")

		bad := append([]byte{}, body...)
		bad[1] ^= 0x40
		_, err = decodeAs(h, r.Direction, bad)
		require.Error(t, err, "%s with a wrong hash", name)
		assert.ErrorIs(t, err, contract.ErrTypeHash)

		if HasTypeLiteral(body) {
			// Each byte of the literal (and its NUL) in turn.
			lit := h.ResponseLiteral()
			if r.Direction == "request" {
				lit = h.RequestLiteral()
			}
			for i := 0; i <= len(lit); i++ {
				literals++
				bad := append([]byte{}, body...)
				bad[5+i] ^= 0x01
				_, err := decodeAs(h, r.Direction, bad)
				require.Error(t, err, "%s with literal byte %d wrong", name, i)
				assert.ErrorIs(t, err, contract.ErrTypeHash)
				assert.Contains(t, err.Error(), "type literal is not")
			}
		}
	}
	t.Logf("%d bodies: %d truncations, %d wrong literal bytes refused", len(rows), prefixes, literals)
}

// TestWrongTypeRefused: a body decoded as any other handler's request or
// response is refused, except where the two types are the same C++ type
// (ExistKey's and GetReplicaList's arguments; the void results).
func TestWrongTypeRefused(t *testing.T) {
	same := func(a, b []byte) bool { return string(a) == string(b) }
	for _, r := range vectorBodies(t) {
		body := unhex(t, r.BodyHex)
		own := handler(t, r.Call)
		ownLit := own.ResponseLiteral()
		if r.Direction == "request" {
			ownLit = own.RequestLiteral()
		}
		for _, h := range Handlers() {
			for _, dir := range []string{"request", "response"} {
				lit := h.ResponseLiteral()
				if dir == "request" {
					lit = h.RequestLiteral()
				}
				_, err := decodeAs(h, dir, body)
				if same(lit, ownLit) {
					assert.NoError(t, err, "%s %s as %s %s", r.Call, r.Direction, h.Name(), dir)
					continue
				}
				require.Error(t, err, "%s %s as %s %s", r.Call, r.Direction, h.Name(), dir)
				assert.True(t, errors.Is(err, contract.ErrTypeHash) || errors.Is(err, contract.ErrMalformed))
			}
		}
	}
}

func TestEmptyArgumentList(t *testing.T) {
	b, err := ServiceReady.EncodeRequest(ServiceReadyRequest{}, TypeLiteral)
	require.NoError(t, err)
	assert.Empty(t, b)
	_, err = ServiceReady.DecodeRequest([]byte{0})
	assert.ErrorIs(t, err, contract.ErrMalformed)
	_, err = ServiceReady.DecodeRequest(nil)
	assert.NoError(t, err)
}

func TestBadHeaders(t *testing.T) {
	req := NewRequestHeader(1, FnPing, 21).Encode()
	resp := NewResponseHeader(1, 0, 21).Encode()
	for n := 0; n < len(req); n++ {
		_, err := DecodeRequestHeader(req[:n])
		assert.ErrorIs(t, err, ErrHeader)
	}
	for n := 0; n < len(resp); n++ {
		_, err := DecodeResponseHeader(resp[:n])
		assert.ErrorIs(t, err, ErrHeader)
	}
	_, err := DecodeRequestHeader(append(req, 0))
	assert.ErrorIs(t, err, ErrHeader)
	_, err = DecodeResponseHeader(append(resp, 0))
	assert.ErrorIs(t, err, ErrHeader)

	req[0], resp[0] = 22, 0
	_, err = DecodeRequestHeader(req)
	assert.ErrorIs(t, err, ErrMagic)
	assert.ErrorIs(t, err, contract.ErrMalformed)
	assert.Contains(t, err.Error(), "magic 22")
	_, err = DecodeResponseHeader(resp)
	assert.ErrorIs(t, err, ErrMagic)

	// A frame must be as long as its header says.
	frame, err := RequestFrame(3, FnPing, []byte{1, 2, 3})
	require.NoError(t, err)
	_, _, _, err = ParseRequestFrame(frame[:len(frame)-1])
	assert.ErrorIs(t, err, ErrFrame)
	_, _, _, err = ParseRequestFrame(append(frame, 0))
	assert.ErrorIs(t, err, ErrFrame)
	_, _, _, err = ParseRequestFrame(frame[:5])
	assert.ErrorIs(t, err, ErrHeader)
	frame, err = ResponseFrame(3, 0, []byte{1, 2, 3})
	require.NoError(t, err)
	_, _, _, err = ParseResponseFrame(frame[:len(frame)-1])
	assert.ErrorIs(t, err, ErrFrame)
	_, _, _, err = ParseResponseFrame(frame[:15])
	assert.ErrorIs(t, err, ErrHeader)
}

func TestRPCErrors(t *testing.T) {
	_, err := DecodeRPCError(0, nil)
	assert.ErrorIs(t, err, ErrNotRPCError)
	_, _, err = EncodeRPCError(RPCError{Code: ErrcOK}, TypeLiteral)
	assert.ErrorIs(t, err, ErrNotRPCError)

	// Code 255 fits a byte: upstream sends it as err_code 255 with a plain
	// message; the decoder tells it from the extended form by its hash.
	for _, v := range []Variant{TypeLiteral, NoTypeLiteral} {
		for _, e := range []RPCError{{255, "edge"}, {256, "above"}, {65535, "max"}, {ErrcFunctionNotRegistered, ""}} {
			code, body, err := EncodeRPCError(e, v)
			require.NoError(t, err)
			if e.Code >= 255 {
				assert.Equal(t, ErrCodeExtended, code)
			}
			got, err := DecodeRPCError(code, body)
			require.NoError(t, err)
			assert.Equal(t, e, got)
			for n := 0; n < len(body); n++ {
				_, err := DecodeRPCError(code, body[:n])
				assert.Error(t, err)
			}
			_, err = DecodeRPCError(code, append(body, 0))
			assert.Error(t, err)
		}
	}
	assert.Equal(t, "coro_rpc transport error function_not_registered (11): x", (&RPCError{11, "x"}).Error())

	// An extended body that carries code 0 is no transport error.
	code, body, err := EncodeRPCError(RPCError{300, "x"}, NoTypeLiteral)
	require.NoError(t, err)
	body[4], body[5] = 0, 0
	_, err = DecodeRPCError(code, body)
	assert.ErrorIs(t, err, ErrNotRPCError)
}

// TestEncodeRefusesWhatHasNoWireForm: a replica without a variant.
func TestEncodeRefusesWhatHasNoWireForm(t *testing.T) {
	_, err := PutStart.EncodeResponse(Ok([]ReplicaDescriptor{{ID: 1}}), TypeLiteral)
	assert.ErrorIs(t, err, contract.ErrMalformed)
	_, err = GetReplicaList.EncodeResponse(Ok(GetReplicaListResponse{Replicas: []ReplicaDescriptor{{ID: 1}}}), NoTypeLiteral)
	assert.ErrorIs(t, err, contract.ErrMalformed)
	// The error side of an expected carries no value to refuse.
	_, err = PutStart.EncodeResponse(Fail[[]ReplicaDescriptor](ObjectNotFound), TypeLiteral)
	assert.NoError(t, err)
	_, err = Ping.EncodeRequestAny(RemoveRequest{}, TypeLiteral)
	assert.Error(t, err)
	_, err = Ping.EncodeResponseAny(Ok(Void{}), TypeLiteral)
	assert.Error(t, err)
}

// TestContainerWidth: the width of every container length follows the
// largest container of the whole body, in both variants.
func TestContainerWidth(t *testing.T) {
	for _, tc := range []struct {
		n        int
		meta     byte // metainfo without the literal bit
		lenBytes int
	}{{255, 0, 1}, {256, 0x08, 2}, {65535, 0x08, 2}, {65536, 0x10, 4}} {
		key := string(make([]byte, tc.n))
		req := RemoveRequest{Key: key, Force: true, TenantID: "default"}
		for _, v := range []Variant{NoTypeLiteral, TypeLiteral} {
			b, err := Remove.EncodeRequest(req, v)
			require.NoError(t, err)
			off := 4
			if tc.meta != 0 || v == TypeLiteral {
				meta := tc.meta
				if v == TypeLiteral {
					meta |= 0b100
				}
				assert.Equal(t, meta, b[4], "key of %d bytes", tc.n)
				off = 5
				if v == TypeLiteral {
					off += len(Remove.RequestLiteral()) + 1
				}
			} else {
				assert.Zero(t, b[0]&1)
			}
			assert.Len(t, b, off+2*tc.lenBytes+tc.n+1+len("default"))
			got, err := Remove.DecodeRequest(b)
			require.NoError(t, err)
			assert.Equal(t, req, got)
		}
	}
}

func TestErrorCode(t *testing.T) {
	assert.Equal(t, "OBJECT_NOT_FOUND", ObjectNotFound.String())
	assert.Equal(t, "ErrorCode(-4242)", ErrorCode(-4242).String())
	var err error = ObjectHasLease
	var code ErrorCode
	require.ErrorAs(t, err, &code)
	assert.Equal(t, ObjectHasLease, code)
	assert.Equal(t, "mooncake OBJECT_HAS_LEASE (-706)", err.Error())
	_, err = Fail[bool](ObjectNotFound).Get()
	assert.ErrorIs(t, err, ObjectNotFound)
	v, err := Ok(true).Get()
	assert.NoError(t, err)
	assert.True(t, v)
	assert.Equal(t, "NEED_REMOUNT", ClientNeedRemount.String())
}
