package cororpc

import (
	"encoding/binary"
	"fmt"

	"github.com/oplogha/oplogha/impl/contract"
	"github.com/oplogha/oplogha/impl/contract/structpack"
)

// Errc is a coro_rpc error code (coro_rpc::errc, a uint16), the code of a
// transport error.
type Errc uint16

// coro_rpc's error codes, in its enum's order.
const (
	ErrcOK Errc = iota
	ErrcIOError
	ErrcNotConnected
	ErrcTimedOut
	ErrcInvalidRPCArguments // the body did not decode as the handler's arguments
	ErrcAddressInUse
	ErrcBadAddress
	ErrcOpenError
	ErrcListenError
	ErrcOperationCanceled
	ErrcRPCThrowException
	ErrcFunctionNotRegistered // no handler has the request's function id
	ErrcProtocolError
	ErrcUnknownProtocolVersion
	ErrcMessageTooLarge
	ErrcServerHasRan
	ErrcInvalidRPCResult
	ErrcSerialNumberConflict
)

func (c Errc) String() string {
	switch c {
	case ErrcOK:
		return "ok"
	case ErrcIOError:
		return "io_error"
	case ErrcNotConnected:
		return "not_connected"
	case ErrcTimedOut:
		return "timed_out"
	case ErrcInvalidRPCArguments:
		return "invalid_rpc_arguments"
	case ErrcAddressInUse:
		return "address_in_used"
	case ErrcBadAddress:
		return "bad_address"
	case ErrcOpenError:
		return "open_error"
	case ErrcListenError:
		return "listen_error"
	case ErrcOperationCanceled:
		return "operation_canceled"
	case ErrcRPCThrowException:
		return "rpc_throw_exception"
	case ErrcFunctionNotRegistered:
		return "function_not_registered"
	case ErrcProtocolError:
		return "protocol_error"
	case ErrcUnknownProtocolVersion:
		return "unknown_protocol_version"
	case ErrcMessageTooLarge:
		return "message_too_large"
	case ErrcServerHasRan:
		return "server_has_ran"
	case ErrcInvalidRPCResult:
		return "invalid_rpc_result"
	case ErrcSerialNumberConflict:
		return "serial_number_conflict"
	}
	return fmt.Sprintf("errc(%d)", uint16(c))
}

// RPCError is a transport error as a response carries it: a coro_rpc
// error code and the server's message. It is an error.
type RPCError struct {
	Code    Errc
	Message string
}

func (e *RPCError) Error() string {
	return fmt.Sprintf("coro_rpc transport error %s (%d): %s", e.Code, uint16(e.Code), e.Message)
}

// ErrNotRPCError: DecodeRPCError was handed err_code 0, a reply of the
// handler rather than a transport error.
var ErrNotRPCError = contract.NewKind("coro_rpc err_code 0 is not a transport error", contract.ErrMalformed)

// ErrCodeExtended is the err_code of a transport error whose code does not
// fit a byte: the body then carries the code beside the message.
const ErrCodeExtended uint8 = 255

var (
	// A transport error body: struct_pack of the message, a std::string.
	errorMessageType = structpack.NewType("coro_rpc error message", false, structpack.LitString)
	// A code above 255: struct_pack of std::pair<uint16_t, std::string>,
	// not trivially copyable, so packed as a tuple.
	errorPairType = structpack.NewType("coro_rpc error code and message", false,
		structpack.LitTuple(structpack.LitUint16, structpack.LitString))
)

// EncodeRPCError is the response's err_code and body for e, as upstream's
// server writes them: a code up to 255 is the err_code and the body is the
// message; a larger one is sent as err_code 255 with the code and the
// message in the body. e.Code must not be ErrcOK.
func EncodeRPCError(e RPCError, v Variant) (errCode uint8, body []byte, err error) {
	if e.Code == ErrcOK {
		return 0, nil, fmt.Errorf("cororpc: encode transport error: code 0 is success: %w", ErrNotRPCError)
	}
	var z structpack.Size
	z.Str(e.Message)
	if e.Code <= 255 {
		return uint8(e.Code), structpack.Marshal(errorMessageType, v == TypeLiteral, z, func(w *structpack.Writer) {
			w.Str(e.Message)
		}), nil
	}
	z.Fixed(2)
	return ErrCodeExtended, structpack.Marshal(errorPairType, v == TypeLiteral, z, func(w *structpack.Writer) {
		w.U16(uint16(e.Code))
		w.Str(e.Message)
	}), nil
}

// DecodeRPCError decodes the body of a response with a non-zero err_code,
// of either variant. For err_code 255 the body is the code and the message
// (upstream's reading); a plain message body is accepted there too (then
// the code is 255): the two bodies have different type hashes, so they
// cannot be mistaken for each other. An extended body carrying code 0
// (success) is refused.
func DecodeRPCError(errCode uint8, body []byte) (RPCError, error) {
	if errCode == 0 {
		return RPCError{}, fmt.Errorf("cororpc: decode transport error: %w", ErrNotRPCError)
	}
	if errCode == ErrCodeExtended && len(body) >= 4 && binary.LittleEndian.Uint32(body)>>1 == errorPairType.Hash()>>1 {
		var r structpack.Reader
		if err := r.Open(errorPairType, body, nil); err != nil {
			return RPCError{}, fmt.Errorf("cororpc: decode transport error %d body: %w", errCode, err)
		}
		e := RPCError{Code: Errc(r.U16()), Message: r.Str()}
		if err := r.Finish(); err != nil {
			return RPCError{}, fmt.Errorf("cororpc: decode transport error %d body: %w", errCode, err)
		}
		if e.Code == ErrcOK {
			return RPCError{}, fmt.Errorf("cororpc: decode transport error %d body: it carries code 0: %w", errCode, ErrNotRPCError)
		}
		return e, nil
	}
	var r structpack.Reader
	if err := r.Open(errorMessageType, body, nil); err != nil {
		return RPCError{}, fmt.Errorf("cororpc: decode transport error %d body: %w", errCode, err)
	}
	e := RPCError{Code: Errc(errCode), Message: r.Str()}
	if err := r.Finish(); err != nil {
		return RPCError{}, fmt.Errorf("cororpc: decode transport error %d body: %w", errCode, err)
	}
	return e, nil
}
