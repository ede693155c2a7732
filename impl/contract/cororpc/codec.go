package cororpc

import (
	"fmt"

	"github.com/oplogha/oplogha/impl/contract"
	"github.com/oplogha/oplogha/impl/contract/structpack"
)

// Variant is one of the two wire forms of a struct_pack body.
type Variant uint8

const (
	// NoTypeLiteral is what a build with NDEBUG writes: hash, then the
	// values (a metainfo byte only where container lengths are wider than
	// one byte).
	NoTypeLiteral Variant = iota
	// TypeLiteral is what a build without NDEBUG writes (upstream's Release
	// and Debug builds, and a coro_rpc_client built so): hash, metainfo,
	// the NUL-terminated type literal, then the values.
	TypeLiteral
)

func (v Variant) String() string {
	if v == TypeLiteral {
		return "type_literal"
	}
	return "no_type_literal"
}

// HasTypeLiteral reports whether a body carries a type literal (was
// written in the TypeLiteral variant). It validates nothing.
func HasTypeLiteral(body []byte) bool { return structpack.HasTypeLiteral(body) }

// Expected is a tl::expected<T, ErrorCode>, every handler's return value:
// on the wire a has-value byte, then Value (nothing for Void) or Error as an
// int32. Application errors travel so, in a response with err_code 0.
type Expected[T any] struct {
	HasValue bool
	Value    T         // when HasValue
	Error    ErrorCode // when !HasValue
}

// Ok is an Expected holding v.
func Ok[T any](v T) Expected[T] { return Expected[T]{HasValue: true, Value: v} }

// Fail is an Expected holding the error code c.
func Fail[T any](c ErrorCode) Expected[T] { return Expected[T]{Error: c} }

// Get is the value, or the error code as an error.
func (e Expected[T]) Get() (T, error) {
	if !e.HasValue {
		var zero T
		return zero, e.Error
	}
	return e.Value, nil
}

// part is the struct_pack form of one C++ type: its literal and how to
// measure, write and read a value of it (with no buffer header).
type part[T any] struct {
	lit []byte
	// measure adds v's size to z, or refuses a value that has no wire
	// form (a replica descriptor without a variant).
	measure func(v *T, z *structpack.Size) error
	write   func(v *T, w *structpack.Writer)
	read    func(v *T, r *structpack.Reader)
}

// body is the codec of a whole body of one C++ type: a part with its
// buffer header. A nil typ is the empty argument list, an empty body.
type body[T any] struct {
	typ *structpack.Type
	p   part[T]
}

func newBody[T any](name string, p part[T]) body[T] {
	return body[T]{typ: structpack.NewType(name, false, p.lit), p: p}
}

func (b *body[T]) encode(v *T, variant Variant) ([]byte, error) {
	if b.typ == nil {
		return []byte{}, nil
	}
	var z structpack.Size
	if err := b.p.measure(v, &z); err != nil {
		return nil, err
	}
	return structpack.Marshal(b.typ, variant == TypeLiteral, z, func(w *structpack.Writer) { b.p.write(v, w) }), nil
}

func (b *body[T]) decode(data []byte) (T, error) {
	var v T
	if b.typ == nil {
		if len(data) != 0 {
			return v, contract.NewError(contract.ErrMalformed, fmt.Sprintf("the empty argument list has a %d-byte body", len(data)))
		}
		return v, nil
	}
	var r structpack.Reader
	if err := r.Open(b.typ, data, nil); err != nil {
		return v, err
	}
	b.p.read(&v, &r)
	if err := r.Finish(); err != nil {
		var zero T
		return zero, err
	}
	return v, nil
}

// expected is the part of tl::expected<T, ErrorCode> (ErrorCode: an int32
// enum, literal int32).
func expected[T any](value part[T]) part[Expected[T]] {
	return part[Expected[T]]{
		lit: structpack.LitExpected(value.lit, structpack.LitInt32),
		measure: func(v *Expected[T], z *structpack.Size) error {
			z.Fixed(1)
			if !v.HasValue {
				z.Fixed(4)
				return nil
			}
			return value.measure(&v.Value, z)
		},
		write: func(v *Expected[T], w *structpack.Writer) {
			w.Bool(v.HasValue)
			if v.HasValue {
				value.write(&v.Value, w)
			} else {
				w.I32(int32(v.Error))
			}
		},
		read: func(v *Expected[T], r *structpack.Reader) {
			if v.HasValue = r.Bool(); v.HasValue {
				value.read(&v.Value, r)
			} else {
				v.Error = ErrorCode(r.I32())
			}
		},
	}
}

// Method is one handler of upstream's WrappedMasterService as the wire
// sees it: its function id, and the codecs of its argument list (Req) and
// of its tl::expected<Res, ErrorCode> return value. Encoding writes either
// Variant; decoding accepts both and checks the type literal when present.
type Method[Req, Res any] struct {
	name string
	id   uint32
	req  body[Req]
	res  body[Expected[Res]]
}

func newMethod[Req, Res any](name string, id uint32, req body[Req], res part[Res]) *Method[Req, Res] {
	return &Method[Req, Res]{name: name, id: id, req: req, res: newBody(name+" result", expected(res))}
}

// Name is the handler's name ("Ping").
func (m *Method[Req, Res]) Name() string { return m.name }

// QualifiedName is the name coro_rpc hashes ("mooncake::WrappedMasterService::Ping").
func (m *Method[Req, Res]) QualifiedName() string { return qualifiedPrefix + m.name }

// ID is the function id (FunctionID of QualifiedName).
func (m *Method[Req, Res]) ID() uint32 { return m.id }

// RequestLiteral and ResponseLiteral are the type literals (without their
// NUL) of the argument list (nil for none) and of the return value.
func (m *Method[Req, Res]) RequestLiteral() []byte {
	if m.req.typ == nil {
		return nil
	}
	return m.req.typ.Literal()
}

func (m *Method[Req, Res]) ResponseLiteral() []byte { return m.res.typ.Literal() }

// EncodeRequest is the request body for req: struct_pack of the argument
// list, every argument included (one argument is packed as itself, several
// as a std::tuple, none as an empty body).
func (m *Method[Req, Res]) EncodeRequest(req Req, v Variant) ([]byte, error) {
	b, err := m.req.encode(&req, v)
	if err != nil {
		return nil, fmt.Errorf("cororpc: encode %s request: %w", m.name, err)
	}
	return b, nil
}

// DecodeRequest decodes a request body of either variant.
func (m *Method[Req, Res]) DecodeRequest(body []byte) (Req, error) {
	req, err := m.req.decode(body)
	if err != nil {
		return req, fmt.Errorf("cororpc: decode %s request: %w", m.name, err)
	}
	return req, nil
}

// EncodeResponse is the response body for res (err_code 0).
func (m *Method[Req, Res]) EncodeResponse(res Expected[Res], v Variant) ([]byte, error) {
	b, err := m.res.encode(&res, v)
	if err != nil {
		return nil, fmt.Errorf("cororpc: encode %s response: %w", m.name, err)
	}
	return b, nil
}

// DecodeResponse decodes a response body (err_code 0) of either variant.
func (m *Method[Req, Res]) DecodeResponse(body []byte) (Expected[Res], error) {
	res, err := m.res.decode(body)
	if err != nil {
		return res, fmt.Errorf("cororpc: decode %s response: %w", m.name, err)
	}
	return res, nil
}

// EncodeRequestAny is EncodeRequest for a req of type Req held in an any.
func (m *Method[Req, Res]) EncodeRequestAny(req any, v Variant) ([]byte, error) {
	r, ok := req.(Req)
	if !ok {
		return nil, fmt.Errorf("cororpc: %s request is a %T, want %T", m.name, req, r)
	}
	return m.EncodeRequest(r, v)
}

// DecodeRequestAny is DecodeRequest, the Req in an any.
func (m *Method[Req, Res]) DecodeRequestAny(body []byte) (any, error) { return m.DecodeRequest(body) }

// EncodeResponseAny is EncodeResponse for an Expected[Res] held in an any.
func (m *Method[Req, Res]) EncodeResponseAny(res any, v Variant) ([]byte, error) {
	r, ok := res.(Expected[Res])
	if !ok {
		return nil, fmt.Errorf("cororpc: %s response is a %T, want %T", m.name, res, r)
	}
	return m.EncodeResponse(r, v)
}

// DecodeResponseAny is DecodeResponse, the Expected[Res] in an any.
func (m *Method[Req, Res]) DecodeResponseAny(body []byte) (any, error) {
	return m.DecodeResponse(body)
}

// Handler is a Method of any types, for code that dispatches on the
// function id (a test server): the typed methods behind an any.
type Handler interface {
	Name() string
	QualifiedName() string
	ID() uint32
	RequestLiteral() []byte
	ResponseLiteral() []byte
	EncodeRequestAny(req any, v Variant) ([]byte, error)
	DecodeRequestAny(body []byte) (any, error)
	EncodeResponseAny(res any, v Variant) ([]byte, error)
	DecodeResponseAny(body []byte) (any, error)
}
