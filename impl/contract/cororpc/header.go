package cororpc

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/oplogha/oplogha/impl/contract"
)

// Header constants of coro_rpc's own protocol.
const (
	// Magic is the first byte of every request and response header.
	Magic uint8 = 21
	// ProtocolVersion is the version byte coro_rpc writes.
	ProtocolVersion uint8 = 0
	// SerializeStructPack is the request's serialize_type for struct_pack
	// bodies, the only one upstream's master speaks.
	SerializeStructPack uint8 = 0
	// RequestHeaderLen and ResponseHeaderLen are the header sizes: packed,
	// little-endian, no padding.
	RequestHeaderLen  = 20
	ResponseHeaderLen = 16
)

// Header errors. Each is a contract.ErrMalformed (errors.Is matches both).
var (
	// ErrHeader: a request or response header is not one (wrong length,
	// wrong magic).
	ErrHeader = contract.NewKind("malformed coro_rpc header", contract.ErrMalformed)
	// ErrMagic (an ErrHeader): the first byte is not Magic.
	ErrMagic = contract.NewKind("coro_rpc header magic is not 21", ErrHeader)
	// ErrFrame: a frame's length is not its header's length plus the body
	// and attachment lengths the header announces, or a body is too long
	// for a header's 32-bit length.
	ErrFrame = contract.NewKind("malformed coro_rpc frame", contract.ErrMalformed)
)

// RequestHeader is coro_rpc's request header: magic, version,
// serialize_type, msg_type (one byte each), then seq_num, function_id,
// length (of the body) and attach_length (of the attachment that follows
// the body), four bytes each.
type RequestHeader struct {
	Magic         uint8
	Version       uint8
	SerializeType uint8
	MsgType       uint8
	SeqNum        uint32
	FunctionID    uint32
	Length        uint32
	AttachLength  uint32
}

// NewRequestHeader is the header coro_rpc_client writes for a call: magic
// 21, version 0, struct_pack, msg_type 0, no attachment.
func NewRequestHeader(seq, functionID, length uint32) RequestHeader {
	return RequestHeader{Magic: Magic, Version: ProtocolVersion, SerializeType: SerializeStructPack, SeqNum: seq, FunctionID: functionID, Length: length}
}

// Append appends h's 20 bytes to b.
func (h RequestHeader) Append(b []byte) []byte {
	b = append(b, h.Magic, h.Version, h.SerializeType, h.MsgType)
	b = binary.LittleEndian.AppendUint32(b, h.SeqNum)
	b = binary.LittleEndian.AppendUint32(b, h.FunctionID)
	b = binary.LittleEndian.AppendUint32(b, h.Length)
	return binary.LittleEndian.AppendUint32(b, h.AttachLength)
}

// Encode is h's 20 bytes.
func (h RequestHeader) Encode() []byte { return h.Append(make([]byte, 0, RequestHeaderLen)) }

// DecodeRequestHeader decodes exactly RequestHeaderLen bytes. Only the
// magic is checked: version, serialize_type and msg_type come back as read,
// for the caller to judge (upstream's master checks the magic on arrival).
func DecodeRequestHeader(b []byte) (RequestHeader, error) {
	if len(b) != RequestHeaderLen {
		return RequestHeader{}, fmt.Errorf("coro_rpc request header is %d bytes, want %d: %w", len(b), RequestHeaderLen, ErrHeader)
	}
	if b[0] != Magic {
		return RequestHeader{}, fmt.Errorf("coro_rpc request header magic %d: %w", b[0], ErrMagic)
	}
	return RequestHeader{
		Magic: b[0], Version: b[1], SerializeType: b[2], MsgType: b[3],
		SeqNum:       binary.LittleEndian.Uint32(b[4:]),
		FunctionID:   binary.LittleEndian.Uint32(b[8:]),
		Length:       binary.LittleEndian.Uint32(b[12:]),
		AttachLength: binary.LittleEndian.Uint32(b[16:]),
	}, nil
}

// ResponseHeader is coro_rpc's response header: magic, version, err_code,
// msg_type (one byte each), then seq_num (the request's), length (of the
// body) and attach_length, four bytes each. ErrCode 0 is a reply of the
// handler (application errors included, inside the body); any other value
// is a transport error whose body is an RPCError (DecodeRPCError).
type ResponseHeader struct {
	Magic        uint8
	Version      uint8
	ErrCode      uint8
	MsgType      uint8
	SeqNum       uint32
	Length       uint32
	AttachLength uint32
}

// NewResponseHeader is the header upstream's server writes for a reply:
// magic 21, version 0, msg_type 0, no attachment.
func NewResponseHeader(seq uint32, errCode uint8, length uint32) ResponseHeader {
	return ResponseHeader{Magic: Magic, Version: ProtocolVersion, ErrCode: errCode, SeqNum: seq, Length: length}
}

// Append appends h's 16 bytes to b.
func (h ResponseHeader) Append(b []byte) []byte {
	b = append(b, h.Magic, h.Version, h.ErrCode, h.MsgType)
	b = binary.LittleEndian.AppendUint32(b, h.SeqNum)
	b = binary.LittleEndian.AppendUint32(b, h.Length)
	return binary.LittleEndian.AppendUint32(b, h.AttachLength)
}

// Encode is h's 16 bytes.
func (h ResponseHeader) Encode() []byte { return h.Append(make([]byte, 0, ResponseHeaderLen)) }

// DecodeResponseHeader decodes exactly ResponseHeaderLen bytes, checking
// the magic only (as DecodeRequestHeader).
func DecodeResponseHeader(b []byte) (ResponseHeader, error) {
	if len(b) != ResponseHeaderLen {
		return ResponseHeader{}, fmt.Errorf("coro_rpc response header is %d bytes, want %d: %w", len(b), ResponseHeaderLen, ErrHeader)
	}
	if b[0] != Magic {
		return ResponseHeader{}, fmt.Errorf("coro_rpc response header magic %d: %w", b[0], ErrMagic)
	}
	return ResponseHeader{
		Magic: b[0], Version: b[1], ErrCode: b[2], MsgType: b[3],
		SeqNum:       binary.LittleEndian.Uint32(b[4:]),
		Length:       binary.LittleEndian.Uint32(b[8:]),
		AttachLength: binary.LittleEndian.Uint32(b[12:]),
	}, nil
}

// bodyLen is len(body) as a header length.
func bodyLen(body []byte) (uint32, error) {
	if uint64(len(body)) > math.MaxUint32 {
		return 0, fmt.Errorf("coro_rpc body of %d bytes does not fit a 32-bit length: %w", len(body), ErrFrame)
	}
	return uint32(len(body)), nil
}

// RequestFrame is a whole request as coro_rpc_client writes it: the header
// (NewRequestHeader) then body.
func RequestFrame(seq, functionID uint32, body []byte) ([]byte, error) {
	n, err := bodyLen(body)
	if err != nil {
		return nil, err
	}
	return append(NewRequestHeader(seq, functionID, n).Append(make([]byte, 0, RequestHeaderLen+len(body))), body...), nil
}

// ResponseFrame is a whole response as upstream's server writes it: the
// header (NewResponseHeader) then body.
func ResponseFrame(seq uint32, errCode uint8, body []byte) ([]byte, error) {
	n, err := bodyLen(body)
	if err != nil {
		return nil, err
	}
	return append(NewResponseHeader(seq, errCode, n).Append(make([]byte, 0, ResponseHeaderLen+len(body))), body...), nil
}

// ParseRequestFrame splits one whole request frame into its header, body
// and attachment (which alias frame). The frame must be exactly as long as
// its header says.
func ParseRequestFrame(frame []byte) (h RequestHeader, body, attach []byte, err error) {
	if len(frame) < RequestHeaderLen {
		return RequestHeader{}, nil, nil, fmt.Errorf("coro_rpc request frame of %d bytes is shorter than its header: %w", len(frame), ErrHeader)
	}
	if h, err = DecodeRequestHeader(frame[:RequestHeaderLen]); err != nil {
		return RequestHeader{}, nil, nil, err
	}
	body, attach, err = splitFrame("request", frame[RequestHeaderLen:], h.Length, h.AttachLength)
	if err != nil {
		return RequestHeader{}, nil, nil, err
	}
	return h, body, attach, nil
}

// ParseResponseFrame splits one whole response frame, as ParseRequestFrame.
func ParseResponseFrame(frame []byte) (h ResponseHeader, body, attach []byte, err error) {
	if len(frame) < ResponseHeaderLen {
		return ResponseHeader{}, nil, nil, fmt.Errorf("coro_rpc response frame of %d bytes is shorter than its header: %w", len(frame), ErrHeader)
	}
	if h, err = DecodeResponseHeader(frame[:ResponseHeaderLen]); err != nil {
		return ResponseHeader{}, nil, nil, err
	}
	body, attach, err = splitFrame("response", frame[ResponseHeaderLen:], h.Length, h.AttachLength)
	if err != nil {
		return ResponseHeader{}, nil, nil, err
	}
	return h, body, attach, nil
}

func splitFrame(what string, rest []byte, length, attachLength uint32) (body, attach []byte, err error) {
	if want := uint64(length) + uint64(attachLength); uint64(len(rest)) != want {
		return nil, nil, fmt.Errorf("coro_rpc %s header announces %d body and %d attachment bytes, the frame has %d after the header: %w", what, length, attachLength, len(rest), ErrFrame)
	}
	return rest[:length], rest[length:], nil
}
