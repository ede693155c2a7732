package jsoncpp

import (
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

// This file is the general ("lenient") JSON parser behind the batch record
// and durable prefix decoders. Upstream parses both with jsoncpp 1.9.5's
// CharReaderBuilder at its defaults, which accepts more than RFC 8259. The
// parser here accepts RFC 8259 JSON with jsoncpp's meaning (integers that fit
// int64 are Int, larger ones UInt, anything else a double; duplicate object
// names: the last wins) plus exactly the jsoncpp extensions that the golden
// vectors show upstream accepting:
//
//   - a UTF-8 byte order mark before the value;
//   - comments (/* */ and //) before the value;
//   - anything at all after the value;
//   - raw bytes from 0x80 up in strings, taken as they are, valid UTF-8 or not.
//
// jsoncpp accepts further things that no upstream writer produces and that
// the vectors do not show; these are rejected here, each with a reason of
// ours (not a jsoncpp message): comments inside the value (jsoncpp attaches
// them to elements, and its writer would put them into the checksummed
// text), trailing commas, numbers outside the JSON grammar (leading zeros,
// '+', "1.", ".5", a lone '-'), raw control characters in strings, and
// unpaired surrogate escapes (jsoncpp decodes a lone low surrogate to CESU-8
// and pairs a high surrogate with any following \u escape).
//
// Where jsoncpp fails too, the reason is jsoncpp's, formatted as jsoncpp's
// getFormattedErrorMessages formats it ("* Line 1, Column 51\n  Missing ','
// or ']' in array declaration\n"), so upstream's reason strings can be
// matched. Nesting deeper than jsoncpp's stack limit (1000) is an error
// here; jsoncpp throws an exception out of upstream's decoder instead.

// StackLimit is jsoncpp's default stackLimit: a value nested this deep
// (the root is depth 0) makes jsoncpp throw.
const StackLimit = 1000

// Error is the first error a parse met.
type Error struct {
	msg   string
	at    int  // offset (in the document after a BOM) of the token at fault
	extra int  // offset of jsoncpp's "See ... for detail" location, or -1
	ours  bool // a restriction of this parser; jsoncpp would go on
	fatal bool // jsoncpp throws here instead of reporting an error
}

// Fatal reports whether jsoncpp would throw here (nesting deeper than
// StackLimit) instead of reporting a parse error.
func (e *Error) Fatal() bool { return e.fatal }

// Reason formats the error as upstream's reason string.
func (e *Error) Reason(doc []byte) string {
	if e.fatal {
		return e.msg
	}
	line, col := lineColumn(doc, e.at)
	if e.ours {
		return fmt.Sprintf("Line %d, Column %d: %s (jsoncpp accepts this, the contract codec does not)", line, col, e.msg)
	}
	s := fmt.Sprintf("* Line %d, Column %d\n  %s\n", line, col, e.msg)
	if e.extra >= 0 {
		line, col = lineColumn(doc, e.extra)
		s += fmt.Sprintf("See Line %d, Column %d for detail.\n", line, col)
	}
	return s
}

// lineColumn is jsoncpp's getLocationLineAndColumn: 1-based, counting "\r",
// "\n" and "\r\n" as line breaks.
func lineColumn(doc []byte, at int) (line, column int) {
	lastLineStart := 0
	for cur := 0; cur < at && cur < len(doc); {
		c := doc[cur]
		cur++
		switch c {
		case '\r':
			if cur < len(doc) && doc[cur] == '\n' {
				cur++
			}
			lastLineStart = cur
			line++
		case '\n':
			lastLineStart = cur
			line++
		}
	}
	return line + 1, at - lastLineStart + 1
}

type tokenKind uint8

const (
	tokEnd tokenKind = iota // end of input, or a NUL byte where a token starts (as in jsoncpp)
	tokObjectBegin
	tokObjectEnd
	tokArrayBegin
	tokArrayEnd
	tokString
	tokNumber
	tokTrue
	tokFalse
	tokNull
	tokComma
	tokColon
	tokComment
	tokError
)

type token struct {
	typ        tokenKind
	start, end int
}

type parser struct {
	doc []byte
	pos int
	err *Error
	// collect mode (ParseStrict): jsoncpp's errors in order, and the first
	// refusal of ours.
	collect bool
	errs    []*Error
	ours    *Error
}

// Parse parses data as upstream's jsoncpp reader would (see the file
// comment). On failure the error's reason is relative to doc, which is data
// without a leading BOM.
func Parse(data []byte) (v Value, doc []byte, err *Error) {
	doc = data
	if len(doc) >= 3 && doc[0] == 0xef && doc[1] == 0xbb && doc[2] == 0xbf {
		doc = doc[3:]
	}
	p := parser{doc: doc}
	if !p.readValue(&v, 0) {
		return Value{}, doc, p.err
	}
	return v, doc, nil
}

// fail records a jsoncpp error and returns false. In collect mode (the
// strict reader) every error is kept, as jsoncpp's OurReader keeps them.
func (p *parser) fail(msg string, at, extra int) bool {
	e := &Error{msg: msg, at: at, extra: extra}
	if p.collect {
		p.errs = append(p.errs, e)
	} else {
		p.err = e
	}
	return false
}

// failOurs records input jsoncpp accepts and this package refuses. The
// record reader stops there (false); the strict reader keeps the first such
// error aside and goes on as jsoncpp does (true), so that where jsoncpp
// fails later its own reason is reported.
func (p *parser) failOurs(msg string, at int) bool {
	e := &Error{msg: msg, at: at, extra: -1, ours: true}
	if p.collect {
		if p.ours == nil {
			p.ours = e
		}
		return true
	}
	p.err = e
	return false
}

func (p *parser) skipSpaces() {
	for p.pos < len(p.doc) {
		switch p.doc[p.pos] {
		case ' ', '\t', '\r', '\n':
			p.pos++
		default:
			return
		}
	}
}

// next is jsoncpp's getNextChar: the next byte, or 0 at the end.
func (p *parser) next() byte {
	if p.pos >= len(p.doc) {
		return 0
	}
	c := p.doc[p.pos]
	p.pos++
	return c
}

func (p *parser) match(rest string) bool {
	if len(p.doc)-p.pos < len(rest) || string(p.doc[p.pos:p.pos+len(rest)]) != rest {
		return false
	}
	p.pos += len(rest)
	return true
}

// readToken is jsoncpp's readToken; ok is false for a token jsoncpp marks as
// an error (unterminated string or comment, unknown word, stray byte).
func (p *parser) readToken() (token, bool) {
	p.skipSpaces()
	t := token{start: p.pos}
	ok := true
	switch c := p.next(); c {
	case 0:
		t.typ = tokEnd
	case '{':
		t.typ = tokObjectBegin
	case '}':
		t.typ = tokObjectEnd
	case '[':
		t.typ = tokArrayBegin
	case ']':
		t.typ = tokArrayEnd
	case ',':
		t.typ = tokComma
	case ':':
		t.typ = tokColon
	case '"':
		t.typ = tokString
		ok = p.scanString()
	case '/':
		t.typ = tokComment
		ok = p.scanComment()
	case '-', '+':
		// jsoncpp scans a signed number here ('+' included; it is refused
		// later, by the JSON grammar check); "-I"/"+I" would be an infinity,
		// which jsoncpp's default settings refuse.
		if p.pos < len(p.doc) && p.doc[p.pos] == 'I' {
			p.pos++
			ok = false
			break
		}
		t.typ = tokNumber
		p.scanNumber()
	case 't':
		t.typ, ok = tokTrue, p.match("rue")
	case 'f':
		t.typ, ok = tokFalse, p.match("alse")
	case 'n':
		t.typ, ok = tokNull, p.match("ull")
	default:
		if c >= '0' && c <= '9' {
			t.typ = tokNumber
			p.scanNumber()
			break
		}
		ok = false
	}
	if !ok {
		t.typ = tokError
	}
	t.end = p.pos
	return t, ok
}

// scanString moves past a string's closing quote; false when there is none.
func (p *parser) scanString() bool {
	for p.pos < len(p.doc) {
		c := p.doc[p.pos]
		p.pos++
		switch c {
		case '\\':
			if p.pos < len(p.doc) {
				p.pos++
			}
		case '"':
			return true
		}
	}
	return false
}

// scanComment moves past a comment whose '/' was read, as jsoncpp does
// (including its reading of "/*/" as a complete comment).
func (p *parser) scanComment() bool {
	switch p.next() {
	case '*':
		for p.pos+1 < len(p.doc) {
			c := p.next()
			if c == '*' && p.doc[p.pos] == '/' {
				break
			}
		}
		return p.next() == '/'
	case '/':
		for p.pos < len(p.doc) {
			c := p.next()
			if c == '\n' {
				break
			}
			if c == '\r' {
				if p.pos < len(p.doc) && p.doc[p.pos] == '\n' {
					p.pos++
				}
				break
			}
		}
		return true
	}
	return false
}

// scanNumber is jsoncpp's readNumber: digits, an optional fraction, an
// optional exponent, each part possibly empty.
func (p *parser) scanNumber() {
	q := p.pos
	c := byte('0')
	adv := func() {
		p.pos = q
		if q < len(p.doc) {
			c = p.doc[q]
			q++
		} else {
			c = 0
		}
	}
	isDigit := func() bool { return c >= '0' && c <= '9' }
	for isDigit() {
		adv()
	}
	if c == '.' {
		adv()
		for isDigit() {
			adv()
		}
	}
	if c == 'e' || c == 'E' {
		adv()
		if c == '+' || c == '-' {
			adv()
		}
		for isDigit() {
			adv()
		}
	}
}

// readValue is jsoncpp's readValue for a value at the given depth.
func (p *parser) readValue(v *Value, depth int) bool {
	if depth >= StackLimit {
		p.err = &Error{msg: "Exceeded stackLimit in readValue().", at: p.pos, extra: -1, fatal: true}
		return false
	}
	t, _ := p.readToken()
	for t.typ == tokComment {
		if depth > 0 {
			return p.failOurs("comment inside the record", t.start)
		}
		t, _ = p.readToken()
	}
	switch t.typ {
	case tokObjectBegin:
		return p.readObject(v, depth)
	case tokArrayBegin:
		return p.readArray(v, depth)
	case tokNumber:
		return p.decodeNumber(v, t)
	case tokString:
		s, ok := p.decodeString(t)
		*v = Value{Kind: String, Str: s}
		return ok
	case tokTrue:
		*v = Value{Kind: Bool, Boolean: true}
	case tokFalse:
		*v = Value{Kind: Bool}
	case tokNull:
		*v = Value{}
	default:
		return p.fail("Syntax error: value, object or array expected.", t.start, -1)
	}
	return true
}

func (p *parser) readArray(v *Value, depth int) bool {
	*v = Value{Kind: Array}
	for {
		p.skipSpaces()
		if p.pos < len(p.doc) && p.doc[p.pos] == ']' {
			if len(v.Arr) == 0 {
				p.pos++
				return true
			}
			return p.failOurs("trailing comma in array", p.pos)
		}
		v.Arr = append(v.Arr, Value{})
		if !p.readValue(&v.Arr[len(v.Arr)-1], depth+1) {
			return false
		}
		t, ok := p.readToken()
		if t.typ == tokComment {
			return p.failOurs("comment inside the record", t.start)
		}
		if !ok || t.typ != tokComma && t.typ != tokArrayEnd {
			return p.fail("Missing ',' or ']' in array declaration", t.start, -1)
		}
		if t.typ == tokArrayEnd {
			return true
		}
	}
}

func (p *parser) readObject(v *Value, depth int) bool {
	*v = Value{Kind: Object}
	for first := true; ; first = false {
		name, ok := p.readToken()
		if name.typ == tokComment {
			return p.failOurs("comment inside the record", name.start)
		}
		if ok && name.typ == tokObjectEnd {
			if first {
				return true
			}
			return p.failOurs("trailing comma in object", name.start)
		}
		if !ok || name.typ != tokString {
			return p.fail("Missing '}' or object member name", name.start, -1)
		}
		key, ok := p.decodeString(name)
		if !ok {
			return false
		}
		colon, ok := p.readToken()
		if !ok || colon.typ != tokColon {
			return p.fail("Missing ':' after object member name", colon.start, -1)
		}
		var value Value
		if !p.readValue(&value, depth+1) {
			return false
		}
		v.setMember(key, value)
		comma, ok := p.readToken()
		if comma.typ == tokComment {
			return p.failOurs("comment inside the record", comma.start)
		}
		if !ok || comma.typ != tokObjectEnd && comma.typ != tokComma {
			return p.fail("Missing ',' or '}' in object declaration", comma.start, -1)
		}
		if comma.typ == tokObjectEnd {
			return true
		}
	}
}

// validJSONNumber reports whether s follows the RFC 8259 number grammar.
func validJSONNumber(s []byte) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

// decodeNumber is jsoncpp's decodeNumber: an integer literal that fits int64
// is Int, one that fits uint64 is UInt, anything else is a double; a double
// out of range is an error.
func (p *parser) decodeNumber(v *Value, t token) bool {
	text := p.doc[t.start:t.end]
	if !validJSONNumber(text) {
		if !p.failOurs(fmt.Sprintf("number %q is not in the JSON grammar", text), t.start) {
			return false
		}
		if string(text) == "-" || len(text) == 0 {
			*v = Value{Kind: Int} // jsoncpp reads a lone '-' as 0
			return true
		}
	}
	integer := true
	for _, c := range text {
		if c == '.' || c == 'e' || c == 'E' {
			integer = false
			break
		}
	}
	if integer {
		neg := text[0] == '-'
		digits := text
		if neg {
			digits = text[1:]
		}
		if u, err := strconv.ParseUint(string(digits), 10, 64); err == nil {
			switch {
			case !neg && u <= math.MaxInt64:
				*v = Value{Kind: Int, Int64: int64(u)}
				return true
			case !neg:
				*v = Value{Kind: Uint, Uint64: u}
				return true
			case u <= 1<<63:
				*v = Value{Kind: Int, Int64: int64(-u)}
				return true
			}
		}
	}
	f, err := strconv.ParseFloat(string(text), 64)
	if err != nil {
		return p.fail(fmt.Sprintf("'%s' is not a number.", text), t.start, -1)
	}
	*v = Value{Kind: Real, Float: f}
	return true
}

// decodeString is jsoncpp's decodeString, with the restrictions of the file
// comment: a raw control byte and an unpaired surrogate escape are refused.
func (p *parser) decodeString(t token) (string, bool) {
	cur, end := t.start+1, t.end-1
	// Fast path: nothing to unescape or check.
	plain := true
	for i := cur; i < end; i++ {
		if c := p.doc[i]; c == '\\' || c < 0x20 {
			plain = false
			break
		}
	}
	if plain {
		return string(p.doc[cur:end]), true
	}
	out := make([]byte, 0, end-cur)
	for cur < end {
		c := p.doc[cur]
		cur++
		if c != '\\' {
			if c < 0x20 && !p.failOurs("raw control character in string", cur-1) {
				return "", false
			}
			out = append(out, c)
			continue
		}
		if cur == end {
			return "", p.fail("Empty escape sequence in string", t.start, cur)
		}
		e := p.doc[cur]
		cur++
		switch e {
		case '"', '/', '\\':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			cp, ok := p.decodeCodePoint(t, &cur, end)
			if !ok {
				return "", false
			}
			out = utf8.AppendRune(out, rune(cp))
		default:
			return "", p.fail("Bad escape sequence in string", t.start, cur)
		}
	}
	return string(out), true
}

// decodeCodePoint decodes the \u escape whose "\u" was read, and the second
// half of a surrogate pair.
func (p *parser) decodeCodePoint(t token, cur *int, end int) (uint32, bool) {
	escapeAt := *cur - 2
	cp, ok := p.decodeHex4(t, cur, end)
	if !ok {
		return 0, false
	}
	switch {
	case cp >= 0xd800 && cp <= 0xdbff:
		if end-*cur < 6 {
			return 0, p.fail("additional six characters expected to parse unicode surrogate pair.", t.start, *cur)
		}
		first := p.doc[*cur]
		*cur++
		if first != '\\' || p.doc[*cur] != 'u' {
			if first == '\\' {
				*cur++
			}
			return 0, p.fail("expecting another \\u token to begin the second half of a unicode surrogate pair", t.start, *cur)
		}
		*cur++
		lo, ok := p.decodeHex4(t, cur, end)
		if !ok {
			return 0, false
		}
		if (lo < 0xdc00 || lo > 0xdfff) && !p.failOurs("high surrogate escape not followed by a low surrogate", escapeAt) {
			return 0, false
		}
		return 0x10000 + (cp&0x3ff)<<10 + lo&0x3ff, true
	case cp >= 0xdc00 && cp <= 0xdfff:
		if !p.failOurs("unpaired low surrogate escape", escapeAt) {
			return 0, false
		}
	}
	return cp, true
}

func (p *parser) decodeHex4(t token, cur *int, end int) (uint32, bool) {
	if end-*cur < 4 {
		return 0, p.fail("Bad unicode escape sequence in string: four digits expected.", t.start, *cur)
	}
	var v uint32
	for range 4 {
		c := p.doc[*cur]
		*cur++
		v <<= 4
		switch {
		case c >= '0' && c <= '9':
			v |= uint32(c - '0')
		case c >= 'a' && c <= 'f':
			v |= uint32(c-'a') + 10
		case c >= 'A' && c <= 'F':
			v |= uint32(c-'A') + 10
		default:
			return 0, p.fail("Bad unicode escape sequence in string: hexadecimal digit expected.", t.start, *cur)
		}
	}
	return v, true
}
