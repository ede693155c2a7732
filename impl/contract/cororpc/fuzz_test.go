package cororpc

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/oplogha/oplogha/impl/contract/internal/vectortest"
)

// The fuzz targets, one per decoder, seeded from the vectors. None may
// panic; what decodes must re-encode to something that decodes to the same
// value (bodies), or to the very bytes (headers, frames).

func handlerIndex(t testing.TB, name string) uint8 {
	for i, h := range Handlers() {
		if h.Name() == name {
			return uint8(i)
		}
	}
	t.Fatalf("no handler %q", name)
	return 0
}

func FuzzDecodeRequestHeader(f *testing.F) {
	for _, r := range vectortest.Read[headerRow](f, "rpc/headers.jsonl") {
		if r.Kind == "request" {
			f.Add(unhex(f, r.HeaderHex))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := DecodeRequestHeader(data)
		if err != nil {
			return
		}
		if enc := h.Encode(); !bytes.Equal(enc, data) {
			t.Fatalf("%x decodes to %+v, which encodes to %x", data, h, enc)
		}
	})
}

func FuzzDecodeResponseHeader(f *testing.F) {
	for _, r := range vectortest.Read[headerRow](f, "rpc/headers.jsonl") {
		if r.Kind == "response" {
			f.Add(unhex(f, r.HeaderHex))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := DecodeResponseHeader(data)
		if err != nil {
			return
		}
		if enc := h.Encode(); !bytes.Equal(enc, data) {
			t.Fatalf("%x decodes to %+v, which encodes to %x", data, h, enc)
		}
	})
}

func seedBodies(f *testing.F, direction string) {
	for _, r := range vectorBodies(f) {
		if r.Direction == direction && r.BodyLen < 1024 {
			f.Add(handlerIndex(f, r.Call), unhex(f, r.BodyHex))
		}
	}
}

// roundTrip checks that v, decoded from data, re-encodes in data's
// variant to bytes that decode to v again.
func roundTrip(t *testing.T, data []byte, v any, encode func(any, Variant) ([]byte, error), decode func([]byte) (any, error)) {
	variant := NoTypeLiteral
	if HasTypeLiteral(data) {
		variant = TypeLiteral
	}
	enc, err := encode(v, variant)
	if err != nil {
		t.Fatalf("%x decodes to %+v, which does not encode: %v", data, v, err)
	}
	w, err := decode(enc)
	if err != nil || !reflect.DeepEqual(v, w) {
		t.Fatalf("%x decodes to %+v, re-encoded %x decodes to %+v, %v", data, v, enc, w, err)
	}
}

func FuzzDecodeRequest(f *testing.F) {
	seedBodies(f, "request")
	hs := Handlers()
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		h := hs[int(which)%len(hs)]
		v, err := h.DecodeRequestAny(data)
		if err != nil {
			return
		}
		roundTrip(t, data, v, h.EncodeRequestAny, h.DecodeRequestAny)
	})
}

func FuzzDecodeResponse(f *testing.F) {
	seedBodies(f, "response")
	hs := Handlers()
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		h := hs[int(which)%len(hs)]
		v, err := h.DecodeResponseAny(data)
		if err != nil {
			return
		}
		roundTrip(t, data, v, h.EncodeResponseAny, h.DecodeResponseAny)
	})
}

func FuzzDecodeRPCError(f *testing.F) {
	for _, r := range vectortest.Read[headerRow](f, "rpc/headers.jsonl") {
		if r.RPCErrc != nil {
			f.Add(uint8(r.field(f, "err_code")), unhex(f, r.ErrorBodyHex))
		}
	}
	f.Fuzz(func(t *testing.T, errCode uint8, data []byte) {
		e, err := DecodeRPCError(errCode, data)
		if err != nil {
			return
		}
		variant := NoTypeLiteral
		if HasTypeLiteral(data) {
			variant = TypeLiteral
		}
		code, body, err := EncodeRPCError(e, variant)
		if err != nil {
			t.Fatalf("%d %x decodes to %+v, which does not encode: %v", errCode, data, e, err)
		}
		w, err := DecodeRPCError(code, body)
		if err != nil || w != e {
			t.Fatalf("%d %x decodes to %+v, re-encoded to %d %x, which decodes to %+v, %v", errCode, data, e, code, body, w, err)
		}
	})
}

func seedFrames(f *testing.F, field func(frameRow) string) {
	for _, file := range []string{"rpc/frames.type_literal.jsonl", "rpc/frames.no_type_literal.jsonl"} {
		for _, r := range vectortest.Read[frameRow](f, file) {
			f.Add(unhex(f, field(r)))
		}
	}
}

func FuzzParseRequestFrame(f *testing.F) {
	seedFrames(f, func(r frameRow) string { return r.RequestFrameHex })
	f.Fuzz(func(t *testing.T, data []byte) {
		h, body, attach, err := ParseRequestFrame(data)
		if err != nil {
			return
		}
		if enc := append(append(h.Encode(), body...), attach...); !bytes.Equal(enc, data) {
			t.Fatalf("%x parses to %+v %x %x", data, h, body, attach)
		}
	})
}

func FuzzParseResponseFrame(f *testing.F) {
	seedFrames(f, func(r frameRow) string { return r.ResponseFrameHex })
	f.Fuzz(func(t *testing.T, data []byte) {
		h, body, attach, err := ParseResponseFrame(data)
		if err != nil {
			return
		}
		if enc := append(append(h.Encode(), body...), attach...); !bytes.Equal(enc, data) {
			t.Fatalf("%x parses to %+v %x %x", data, h, body, attach)
		}
	})
}
