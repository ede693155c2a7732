package jsoncpp

import "strings"

// ParseStrict parses data as upstream's batch-OpLog snapshot metadata
// reader does (metadata.cpp's ParseJsonObject): jsoncpp 1.9.5's OurReader
// with allowComments false, failIfExtra true, rejectDupKeys true and
// strictRoot true, every other feature at its default (a BOM is skipped,
// trailing commas pass, no single quotes, special floats or numeric keys).
//
// Failures keep jsoncpp's error list and its error recovery: an error in an
// object or array skips ahead to the next '}' or ']' (dropping the errors
// the skipped tokens would raise), the enclosing containers recover the same
// way, and the reader then still checks for text after the value and for
// the root's type, so one input can report several errors, in jsoncpp's
// order and words ("* Line 1, Column 361\n  Duplicate key: 'schema_version'\n
// * Line 1, Column 477\n  Extra non-whitespace after JSON value.\n").
//
// As for Parse, a few inputs jsoncpp accepts and no upstream writer
// produces are refused with a reason of ours: comments inside the value
// (jsoncpp's object and array readers skip them even with allowComments
// false), raw control bytes in strings, unpaired surrogate escapes and
// numbers outside the JSON grammar. Such a refusal is reported only when
// jsoncpp accepts the input; where jsoncpp fails, its reasons are reported.
func ParseStrict(data []byte) (Value, *StrictError) {
	doc := data
	if len(doc) >= 3 && doc[0] == 0xef && doc[1] == 0xbb && doc[2] == 0xbf {
		doc = doc[3:]
	}
	p := &parser{doc: doc, collect: true}
	var root Value
	ok := p.strictValue(&root, 0)
	if p.err != nil { // only the stack limit sets err in collect mode
		return Value{}, &StrictError{reason: p.err.msg, Fatal: true}
	}
	t, _ := p.readToken()
	if t.typ != tokEnd {
		p.fail("Extra non-whitespace after JSON value.", t.start, -1)
		return Value{}, p.strictError(data, doc)
	}
	if root.Kind != Array && root.Kind != Object {
		// jsoncpp points this error at the start of the document, BOM included.
		p.fail("A valid JSON document must be either an array or an object value.", len(doc)-len(data), -1)
		return Value{}, p.strictError(data, doc)
	}
	if !ok {
		return Value{}, p.strictError(data, doc)
	}
	if p.ours != nil {
		return Value{}, &StrictError{reason: p.ours.Reason(doc), Ours: true}
	}
	return root, nil
}

// StrictError is a ParseStrict failure.
type StrictError struct {
	reason string
	// Ours: jsoncpp accepts the input; this package does not.
	Ours bool
	// Fatal: jsoncpp throws (nesting deeper than StackLimit) instead of
	// reporting an error.
	Fatal bool
}

// Reason is the failure as upstream reports it: jsoncpp's formatted error
// messages, every error in order; or, for Ours and Fatal, a reason of ours
// and the exception's text.
func (e *StrictError) Reason() string { return e.reason }

func (e *StrictError) Error() string { return e.reason }

func (p *parser) strictError(data, doc []byte) *StrictError {
	var b strings.Builder
	for _, e := range p.errs {
		b.WriteString(e.Reason(doc))
	}
	return &StrictError{reason: b.String()}
}

// recover is jsoncpp's recoverFromError: skip tokens until one of kind
// until (or the end); errors the skipped tokens raise are dropped.
func (p *parser) recover(until tokenKind) bool {
	for {
		t, _ := p.readToken()
		if t.typ == until || t.typ == tokEnd {
			return false
		}
	}
}

// strictValue is OurReader::readValue with allowComments false: one token,
// and a comment is a syntax error.
func (p *parser) strictValue(v *Value, depth int) bool {
	if depth >= StackLimit {
		p.err = &Error{msg: "Exceeded stackLimit in readValue().", at: p.pos, extra: -1, fatal: true}
		return false
	}
	t, _ := p.readToken()
	switch t.typ {
	case tokObjectBegin:
		return p.strictObject(v, depth)
	case tokArrayBegin:
		return p.strictArray(v, depth)
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

// strictObject is OurReader::readObject (1.9.5) with rejectDupKeys and
// trailing commas allowed.
func (p *parser) strictObject(v *Value, depth int) bool {
	*v = Value{Kind: Object}
	var name token
	for {
		var ok bool
		name, ok = p.readToken()
		for ok && name.typ == tokComment {
			p.failOurs("comment inside the value", name.start)
			name, ok = p.readToken()
		}
		if !ok {
			break
		}
		if name.typ == tokObjectEnd {
			return true // empty object, or a trailing comma
		}
		if name.typ != tokString {
			break
		}
		key, ok := p.decodeString(name)
		if !ok {
			return p.recover(tokObjectEnd)
		}
		if _, dup := v.Get(key); dup {
			p.fail("Duplicate key: '"+key+"'", name.start, -1)
			return p.recover(tokObjectEnd)
		}
		colon, ok := p.readToken()
		if !ok || colon.typ != tokColon {
			p.fail("Missing ':' after object member name", colon.start, -1)
			return p.recover(tokObjectEnd)
		}
		var value Value
		if !p.strictValue(&value, depth+1) {
			if p.err != nil {
				return false
			}
			return p.recover(tokObjectEnd)
		}
		v.setMember(key, value)
		comma, ok := p.readToken()
		if !ok || comma.typ != tokObjectEnd && comma.typ != tokComma && comma.typ != tokComment {
			p.fail("Missing ',' or '}' in object declaration", comma.start, -1)
			return p.recover(tokObjectEnd)
		}
		for ok && comma.typ == tokComment {
			p.failOurs("comment inside the value", comma.start)
			comma, ok = p.readToken()
		}
		if comma.typ == tokObjectEnd {
			return true
		}
	}
	p.fail("Missing '}' or object member name", name.start, -1)
	return p.recover(tokObjectEnd)
}

// strictArray is OurReader::readArray (1.9.5) with trailing commas allowed.
func (p *parser) strictArray(v *Value, depth int) bool {
	*v = Value{Kind: Array}
	for {
		p.skipSpaces()
		if p.pos < len(p.doc) && p.doc[p.pos] == ']' {
			p.pos++
			return true // empty array, or a trailing comma
		}
		v.Arr = append(v.Arr, Value{})
		if !p.strictValue(&v.Arr[len(v.Arr)-1], depth+1) {
			if p.err != nil {
				return false
			}
			return p.recover(tokArrayEnd)
		}
		t, ok := p.readToken()
		for ok && t.typ == tokComment {
			p.failOurs("comment inside the value", t.start)
			t, ok = p.readToken()
		}
		if !ok || t.typ != tokComma && t.typ != tokArrayEnd {
			p.fail("Missing ',' or ']' in array declaration", t.start, -1)
			return p.recover(tokArrayEnd)
		}
		if t.typ == tokArrayEnd {
			return true
		}
	}
}
