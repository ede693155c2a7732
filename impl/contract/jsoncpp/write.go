package jsoncpp

import (
	"math"
	"strconv"
)

// This file reproduces, byte for byte, how upstream serializes JSON: jsoncpp
// 1.9.5's StreamWriterBuilder with indentation "" and otherwise default
// settings (no whitespace, ':' between name and value, object members sorted
// by name bytes, non-ASCII escaped). The batch record's checksum is XXH32 of
// this serialization, so it must match exactly, invalid UTF-8 included.

const hexDigits = "0123456789abcdef"

// AppendString appends s as jsoncpp writes a string: '"' and '\\' and
// \b \f \n \r \t as short escapes, other bytes below 0x20 as \u00xx, ASCII
// 0x20..0x7f (including '/' and DEL) raw, and everything from 0x80 on decoded
// as jsoncpp decodes it (see jsoncppCodePoint) and written as lowercase
// \uxxxx, with a surrogate pair above the BMP. Invalid UTF-8 comes out as
// \ufffd, so such a string does not survive a round trip (see Lossless).
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			if c < 0x20 {
				dst = appendU16Escape(dst, uint32(c))
				continue
			}
			if c < 0x80 {
				dst = append(dst, c)
				continue
			}
			cp, n := jsoncppCodePoint(s[i:])
			i += n - 1
			if cp < 0x10000 {
				dst = appendU16Escape(dst, cp)
				continue
			}
			cp -= 0x10000
			dst = appendU16Escape(dst, 0xd800+((cp>>10)&0x3ff))
			dst = appendU16Escape(dst, 0xdc00+(cp&0x3ff))
		}
	}
	return append(dst, '"')
}

func appendU16Escape(dst []byte, v uint32) []byte {
	return append(dst, '\\', 'u',
		hexDigits[v>>12&0xf], hexDigits[v>>8&0xf], hexDigits[v>>4&0xf], hexDigits[v&0xf])
}

// jsoncppCodePoint decodes the code point at the start of s (s[0] >= 0x80)
// the way jsoncpp's writer does, returning it and the bytes consumed. It is
// not a UTF-8 validator: continuation bytes are not checked, a stray
// continuation byte is taken as a 2-byte lead, a sequence cut short by the
// end of s consumes one byte, and a result that is overlong, a surrogate, or
// (for 4 bytes) below 0x10000 becomes U+FFFD. 4-byte values above U+10FFFF
// are passed on (and written as a wrapped surrogate pair).
func jsoncppCodePoint(s string) (uint32, int) {
	const replacement = 0xfffd
	b0 := uint32(s[0])
	switch {
	case b0 < 0xe0:
		if len(s) < 2 {
			return replacement, 1
		}
		cp := (b0&0x1f)<<6 | uint32(s[1])&0x3f
		if cp < 0x80 {
			return replacement, 2
		}
		return cp, 2
	case b0 < 0xf0:
		if len(s) < 3 {
			return replacement, 1
		}
		cp := (b0&0x0f)<<12 | (uint32(s[1])&0x3f)<<6 | uint32(s[2])&0x3f
		if cp >= 0xd800 && cp <= 0xdfff || cp < 0x800 {
			return replacement, 3
		}
		return cp, 3
	case b0 < 0xf8:
		if len(s) < 4 {
			return replacement, 1
		}
		cp := (b0&0x07)<<18 | (uint32(s[1])&0x3f)<<12 | (uint32(s[2])&0x3f)<<6 | uint32(s[3])&0x3f
		if cp < 0x10000 {
			return replacement, 4
		}
		return cp, 4
	}
	return replacement, 1
}

// AppendDouble appends v as jsoncpp writes a real: printf("%.17g"), with
// ".0" added when the result has neither '.' nor 'e'. Non-finite values
// cannot come out of the parser (an overflowing literal is a parse error),
// but are written as jsoncpp writes them without special floats.
func AppendDouble(dst []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return append(dst, "null"...)
	case math.IsInf(v, 1):
		return append(dst, "1e+9999"...)
	case math.IsInf(v, -1):
		return append(dst, "-1e+9999"...)
	}
	start := len(dst)
	dst = strconv.AppendFloat(dst, v, 'g', 17, 64)
	for _, c := range dst[start:] {
		if c == '.' || c == 'e' {
			return dst
		}
	}
	return append(dst, ".0"...)
}

// Append appends v as jsoncpp serializes it (see the file comment).
func Append(dst []byte, v *Value) []byte {
	switch v.Kind {
	case Null:
		return append(dst, "null"...)
	case Bool:
		if v.Boolean {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case Int:
		return strconv.AppendInt(dst, v.Int64, 10)
	case Uint:
		return strconv.AppendUint(dst, v.Uint64, 10)
	case Real:
		return AppendDouble(dst, v.Float)
	case String:
		return AppendString(dst, v.Str)
	case Array:
		dst = append(dst, '[')
		for i := range v.Arr {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = Append(dst, &v.Arr[i])
		}
		return append(dst, ']')
	case Object:
		dst = append(dst, '{')
		for i := range v.Obj {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendString(dst, v.Obj[i].Name)
			dst = append(dst, ':')
			dst = Append(dst, &v.Obj[i].Value)
		}
		return append(dst, '}')
	}
	return dst
}
