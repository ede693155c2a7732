package batchlog

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"math"
	"unicode/utf8"

	"github.com/oplogha/oplogha/impl/contract"

	"github.com/OneOfOne/xxhash"

	"github.com/oplogha/oplogha/impl/contract/jsoncpp"
)

// DecodeBatch decodes a batch record value as upstream's
// DecodeOpLogBatchRecord does: it accepts what upstream accepts (within the
// JSON subset described in json.go), returns the same batch, and refuses
// what upstream refuses, with upstream's reason, checking in upstream's
// order: parse, six-element array, field types, schema version, sequence
// range against entry count, checksum, then each entry (four-element array,
// field types, op type 1..7, canonical base64, tenant, sizes), and last
// batch_id != 0.
//
// Records as upstream writes them (no whitespace, jsoncpp's escaping) take
// a fast path that decodes them in one pass over the bytes and checksums the
// bytes in place; anything else (or anything the fast path would refuse)
// goes through the general parser, which is what produces every error.
func DecodeBatch(data []byte) (Batch, error) {
	if b, ok := decodeCanonicalBatch(data); ok {
		return b, nil
	}
	return decodeGeneralBatch(data)
}

// DecodeBatchAs is DecodeBatch for a caller with an entry type of its own:
// it returns the batch without its Entries and, in their place, each entry
// converted by conv, so that a record in upstream's exact form is decoded
// straight into the caller's entries. It accepts, refuses and decodes
// exactly what DecodeBatch does.
//
// With blocks (nil: none), a record on the fast path takes its entries and
// payloads from the blocks' spare room while there is enough, instead of
// allocating them; see BatchBlocks.
func DecodeBatchAs[E any](data []byte, conv func(Entry) E, blocks *BatchBlocks[E]) (Batch, []E, error) {
	if b, es, ok := decodeCanonicalBatchAs(data, conv, blocks); ok {
		return b, es, nil
	}
	b, err := decodeGeneralBatch(data)
	if err != nil {
		return Batch{}, nil, err
	}
	es := make([]E, len(b.Entries))
	for i := range b.Entries {
		es[i] = conv(b.Entries[i])
	}
	b.Entries = nil
	return b, es, nil
}

// BatchBlocks are memory DecodeBatchAs cuts records' entries and payloads
// from, for a caller that decodes many records and is done with all of them
// before it decodes more: after Reset the same memory holds the next
// records' entries and payloads. Strings (tenants, keys) are never cut from
// it. What does not fit is allocated as without blocks.
type BatchBlocks[E any] struct {
	Entries  []E    // entries of the records decoded since Reset, capacity to spare
	Payloads []byte // payload bytes of the same
}

// NewBatchBlocks returns blocks with room for entries entries and
// payloads payload bytes.
func NewBatchBlocks[E any](entries, payloads int) *BatchBlocks[E] {
	return &BatchBlocks[E]{Entries: make([]E, 0, entries), Payloads: make([]byte, 0, payloads)}
}

// Reset makes the blocks' memory free for the next records: every batch
// decoded into them before must no longer be used.
func (bb *BatchBlocks[E]) Reset() {
	clear(bb.Entries[:cap(bb.Entries)]) // a record that failed the fast path may have left entries past the end
	bb.Entries, bb.Payloads = bb.Entries[:0], bb.Payloads[:0]
}

// decodeGeneralBatch decodes through the general JSON parser and upstream's
// checks, in upstream's order.
func decodeGeneralBatch(data []byte) (Batch, error) {
	root, doc, perr := jsoncpp.Parse(data)
	if perr != nil {
		return Batch{}, contract.NewError(contract.ErrMalformed, perr.Reason(doc))
	}
	if root.Kind != jsoncpp.Array || len(root.Arr) != 6 {
		return Batch{}, contract.NewError(contract.ErrMalformed, reasonSixElements)
	}
	f := root.Arr
	if !f[0].IsUInt() || !f[1].IsUInt64() || !f[2].IsUInt64() || !f[3].IsUInt64() ||
		f[4].Kind != jsoncpp.Array || !f[5].IsUInt() {
		return Batch{}, contract.NewError(contract.ErrMalformed, reasonFieldTypes)
	}
	if f[0].AsUInt64() != BatchSchemaVersion {
		return Batch{}, contract.NewError(contract.ErrVersion, reasonSchema)
	}
	b := Batch{ID: f[1].AsUInt64(), FirstSeq: f[2].AsUInt64(), LastSeq: f[3].AsUInt64()}
	raw := f[4].Arr
	if err := checkSpan(b.FirstSeq, b.LastSeq, len(raw)); err != nil {
		return Batch{}, err
	}
	// The checksum covers jsoncpp's serialization of the first five
	// elements as parsed, not the bytes as stored.
	head := jsoncpp.Value{Kind: jsoncpp.Array, Arr: f[:5]}
	if uint64(xxhash.Checksum32S(jsoncpp.Append(nil, &head), 0)) != f[5].AsUInt64() {
		return Batch{}, contract.NewError(contract.ErrChecksum, reasonChecksum)
	}
	b.Entries = make([]Entry, len(raw))
	for i := range raw {
		r := &raw[i]
		if r.Kind != jsoncpp.Array || len(r.Arr) != 4 {
			return Batch{}, contract.EntryError(contract.ErrMalformed, i, reasonFourElements)
		}
		ef := r.Arr
		if !ef[0].IsUInt() || ef[1].Kind != jsoncpp.String || ef[2].Kind != jsoncpp.String || ef[3].Kind != jsoncpp.String {
			return Batch{}, contract.EntryError(contract.ErrMalformed, i, reasonEntryTypes)
		}
		op := ef[0].AsUInt64()
		if op == 0 || op > uint64(OpSegmentUpdate) {
			return Batch{}, contract.EntryError(contract.ErrUnknownOp, i, reasonOpRange)
		}
		payload, ok := decodeCanonicalBase64([]byte(ef[3].Str))
		if !ok {
			return Batch{}, contract.EntryError(contract.ErrMalformed, i, reasonBase64)
		}
		if err := checkEntry(i, op, ef[1].Str, ef[2].Str, len(payload)); err != nil {
			return Batch{}, err
		}
		b.Entries[i] = Entry{Op: OpType(op), Tenant: ef[1].Str, Key: ef[2].Str, Payload: payload}
	}
	if b.ID == 0 {
		return Batch{}, contract.NewError(contract.ErrSpan, reasonBatchID)
	}
	return b, nil
}

// decodeCanonicalBase64 decodes s if it is exactly what upstream's
// base64::Encode writes for some bytes (standard alphabet, '=' padding, zero
// pad bits, nothing else): upstream decodes leniently and then requires the
// re-encoding to give back s. An empty s is the empty payload (nil).
func decodeCanonicalBase64(s []byte) ([]byte, bool) {
	if len(s) == 0 {
		return nil, true
	}
	if len(s)%4 != 0 {
		return nil, false
	}
	// Go's decoder skips '\r' and '\n'; upstream's re-encoding would not
	// reproduce them, so any byte outside the alphabet refuses here.
	for _, c := range s {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '=') {
			return nil, false
		}
	}
	out := make([]byte, base64.StdEncoding.DecodedLen(len(s)))
	n, err := base64.StdEncoding.Strict().Decode(out, s)
	if err != nil {
		return nil, false
	}
	return out[:n], true
}

// base64Values maps a byte of the standard alphabet to its six bits, and
// every other byte ('=' included) to 0xff.
var base64Values = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i, c := range "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/" {
		t[c] = byte(i)
	}
	return t
}()

// appendCanonicalBase64 is decodeCanonicalBase64 for the fast path, in one
// pass over s: it appends the decoded bytes to dst and returns them as well
// (capped, so that an append to them cannot reach into what follows), or
// false where decodeCanonicalBase64 refuses. An empty s is nil. The two
// must agree on every input (FuzzCanonicalBase64).
func appendCanonicalBase64(dst, s []byte) ([]byte, []byte, bool) {
	if len(s) == 0 {
		return dst, nil, true
	}
	if len(s)%4 != 0 {
		return dst, nil, false
	}
	pad := 0
	if s[len(s)-1] == '=' {
		pad = 1
		if s[len(s)-2] == '=' {
			pad = 2
		}
	}
	n := len(s)/4*3 - pad
	start := len(dst)
	if cap(dst)-start < n {
		dst = append(dst[:cap(dst)], make([]byte, start+n-cap(dst))...)
	}
	dst = dst[:start+n]
	out := dst[start:]
	full := len(s)
	if pad > 0 {
		full -= 4
	}
	in, o := s[:full], out
	for len(in) >= 8 && len(o) >= 8 { // eight characters to six bytes, written as eight
		a, b, c, d := base64Values[in[0]], base64Values[in[1]], base64Values[in[2]], base64Values[in[3]]
		e, f, g, h := base64Values[in[4]], base64Values[in[5]], base64Values[in[6]], base64Values[in[7]]
		if (a|b|c|d|e|f|g|h)&0xc0 != 0 {
			return dst[:start], nil, false
		}
		binary.BigEndian.PutUint64(o, uint64(a)<<58|uint64(b)<<52|uint64(c)<<46|uint64(d)<<40|uint64(e)<<34|uint64(f)<<28|uint64(g)<<22|uint64(h)<<16)
		in, o = in[8:], o[6:]
	}
	for len(in) >= 4 && len(o) >= 3 {
		a, b, c, d := base64Values[in[0]], base64Values[in[1]], base64Values[in[2]], base64Values[in[3]]
		if (a|b|c|d)&0xc0 != 0 {
			return dst[:start], nil, false
		}
		v := uint32(a)<<18 | uint32(b)<<12 | uint32(c)<<6 | uint32(d)
		o[0], o[1], o[2] = byte(v>>16), byte(v>>8), byte(v)
		in, o = in[4:], o[3:]
	}
	switch q := s[full:]; pad {
	case 1: // xyz=: two bytes, the last two bits of z zero
		a, b, c := base64Values[q[0]], base64Values[q[1]], base64Values[q[2]]
		if (a|b|c)&0xc0 != 0 || c&0x3 != 0 {
			return dst[:start], nil, false
		}
		o[0], o[1] = a<<2|b>>4, b<<4|c>>2
	case 2: // xy==: one byte, the last four bits of y zero
		a, b := base64Values[q[0]], base64Values[q[1]]
		if (a|b)&0xc0 != 0 || b&0xf != 0 {
			return dst[:start], nil, false
		}
		o[0] = a<<2 | b>>4
	}
	return dst, out[:n:n], true
}

// decodeCanonicalBatch is the fast path. It accepts only a record in the
// exact form upstream writes, where the stored bytes before the checksum are
// the checksummed serialization, and only if it passes every check; it
// reports false for anything else, and the general path then decides.
func decodeCanonicalBatch(data []byte) (Batch, bool) {
	b, es, ok := decodeCanonicalBatchAs(data, func(e Entry) Entry { return e }, nil)
	b.Entries = es
	return b, ok
}

// decodeCanonicalBatchAs is decodeCanonicalBatch with each entry converted
// by conv (the batch it returns has no Entries), cut from blocks (nil:
// none) where they have room; blocks grow only by what a decoded record took.
func decodeCanonicalBatchAs[E any](data []byte, conv func(Entry) E, blocks *BatchBlocks[E]) (Batch, []E, bool) {
	s := canonScanner{data: data}
	if !s.lit("[1,") {
		return Batch{}, nil, false
	}
	id, ok1 := s.uint(math.MaxUint64)
	ok2 := s.lit(",")
	first, ok3 := s.uint(math.MaxUint64)
	ok4 := s.lit(",")
	last, ok5 := s.uint(math.MaxUint64)
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !s.lit(",[") || id == 0 || first == 0 || last < first {
		return Batch{}, nil, false
	}
	count := last - first + 1
	if count == 0 || count > uint64(len(data)/12) { // an entry takes at least 12 bytes: [1,"","",""]
		return Batch{}, nil, false
	}
	b := Batch{ID: id, FirstSeq: first, LastSeq: last}
	var (
		entries   []E
		n         uint64 // entries so far
		arena     []byte // payloads are cut from shared blocks
		tenant    string // the last entry's: entries of a batch mostly share it
		inBlocks  bool   // entries are cut from blocks.Entries
		blockFrom = -1   // arena began as blocks.Payloads' spare room, from here
		blockTo   = -1   // and left it here (-1: it still is)
	)
	if blocks != nil {
		if at := len(blocks.Entries); uint64(cap(blocks.Entries)-at) >= count {
			entries, inBlocks = blocks.Entries[at:at:at+int(count)], true
		}
		blockFrom = len(blocks.Payloads)
		arena = blocks.Payloads[blockFrom:]
	}
	if entries == nil {
		entries = make([]E, 0, count)
	}
	for {
		if !s.lit("[") {
			return Batch{}, nil, false
		}
		op, ok := s.uint(uint64(OpSegmentUpdate))
		if !ok || op == 0 || !s.lit(",") {
			return Batch{}, nil, false
		}
		tenant, ok = s.strLike(tenant)
		if !ok || !s.lit(",") {
			return Batch{}, nil, false
		}
		key, ok := s.str()
		if !ok || !s.lit(",\"") {
			return Batch{}, nil, false
		}
		start := s.pos
		if i := bytes.IndexByte(data[s.pos:], '"'); i >= 0 {
			s.pos += i
		} else {
			s.pos = len(data)
		}
		// A block for this payload and, guessing they are alike, the ones
		// after it, within what the rest of the record can hold (base64
		// takes four bytes for three).
		if need := (s.pos - start) / 4 * 3; cap(arena)-len(arena) < need {
			if blockFrom >= 0 && blockTo < 0 {
				blockTo = blockFrom + len(arena)
			}
			alike, bound := uint64(need)*(count-n), uint64(len(data)-start)/4*3
			arena = make([]byte, 0, max(uint64(need), min(alike, bound)))
		}
		var payload []byte
		arena, payload, ok = appendCanonicalBase64(arena, data[start:s.pos])
		if !ok || !s.lit("\"]") || checkEntry(int(n), op, tenant, key, len(payload)) != nil {
			return Batch{}, nil, false
		}
		entries = append(entries, conv(Entry{Op: OpType(op), Tenant: tenant, Key: key, Payload: payload}))
		if n++; n > count {
			return Batch{}, nil, false
		}
		if s.lit(",") {
			continue
		}
		if !s.lit("]") {
			return Batch{}, nil, false
		}
		break
	}
	if n != count {
		return Batch{}, nil, false
	}
	comma := s.pos
	if !s.lit(",") {
		return Batch{}, nil, false
	}
	sum, ok := s.uint(math.MaxUint32)
	if !ok || !s.lit("]") || s.pos != len(data) {
		return Batch{}, nil, false
	}
	h := xxhash.NewS32(0)
	h.Write(data[:comma])
	h.Write([]byte{']'})
	if uint64(h.Sum32()) != sum {
		return Batch{}, nil, false
	}
	if blocks != nil { // the record decodes: what it took of the blocks is taken
		if blockTo < 0 {
			blockTo = blockFrom + len(arena)
		}
		blocks.Payloads = blocks.Payloads[:blockTo]
		if inBlocks {
			blocks.Entries = blocks.Entries[:len(blocks.Entries)+len(entries)]
		}
	}
	return b, entries, true
}

// canonScanner reads the canonical record form; each method reports false
// (leaving pos anywhere) when the bytes are not in that form.
type canonScanner struct {
	data []byte
	pos  int
}

func (s *canonScanner) lit(l string) bool {
	if len(s.data)-s.pos < len(l) || string(s.data[s.pos:s.pos+len(l)]) != l {
		return false
	}
	s.pos += len(l)
	return true
}

// uint reads a decimal without sign or leading zero, at most max.
func (s *canonScanner) uint(max uint64) (uint64, bool) {
	start := s.pos
	var v uint64
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		if c < '0' || c > '9' {
			break
		}
		d := uint64(c - '0')
		if d > max || v > (max-d)/10 {
			return 0, false
		}
		v = v*10 + d
		s.pos++
	}
	n := s.pos - start
	return v, n > 0 && (n == 1 || s.data[start] != '0')
}

// str reads a string written exactly as jsoncpp.AppendString writes the bytes it
// decodes to: raw 0x20..0x7f except '"' and '\\'; the short escapes for
// '"', '\\', \b \f \n \r \t; lowercase \u00xx for the other bytes below 0x20;
// lowercase \uxxxx for a BMP code point from 0x80 on that is not a
// surrogate; a lowercase surrogate pair above the BMP. Such a string always
// decodes to valid UTF-8, which re-encodes to the same bytes.
func (s *canonScanner) str() (string, bool) { return s.strLike("") }

// strLike is str that returns like itself, not a new string, when the
// string reads as like's bytes without escapes.
func (s *canonScanner) strLike(like string) (string, bool) {
	if !s.lit("\"") {
		return "", false
	}
	start := s.pos
	for s.pos < len(s.data) && jsonPlain[s.data[s.pos]] {
		s.pos++
	}
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		if c == '"' {
			raw := s.data[start:s.pos]
			s.pos++
			if string(raw) == like {
				return like, true
			}
			return string(raw), true
		}
		if c == '\\' {
			break
		}
		if c < 0x20 || c >= 0x80 {
			return "", false
		}
		s.pos++
	}
	if s.pos >= len(s.data) {
		return "", false
	}
	out := append(make([]byte, 0, s.pos-start+16), s.data[start:s.pos]...)
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		switch {
		case c == '"':
			s.pos++
			return string(out), true
		case c < 0x20 || c >= 0x80:
			return "", false
		case c != '\\':
			out = append(out, c)
			s.pos++
			continue
		}
		if s.pos+1 >= len(s.data) {
			return "", false
		}
		e := s.data[s.pos+1]
		s.pos += 2
		switch e {
		case '"', '\\':
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
			cp, ok := s.hex4()
			if !ok {
				return "", false
			}
			switch {
			case cp < 0x20:
				if cp == '\b' || cp == '\f' || cp == '\n' || cp == '\r' || cp == '\t' {
					return "", false
				}
			case cp < 0x80, cp >= 0xdc00 && cp <= 0xdfff:
				return "", false
			case cp >= 0xd800 && cp <= 0xdbff:
				if !s.lit("\\u") {
					return "", false
				}
				lo, ok := s.hex4()
				if !ok || lo < 0xdc00 || lo > 0xdfff {
					return "", false
				}
				cp = 0x10000 + (cp&0x3ff)<<10 + lo&0x3ff
			}
			out = utf8.AppendRune(out, rune(cp))
		default:
			return "", false
		}
	}
	return "", false
}

// jsonPlain marks the bytes a canonical string holds unescaped: 0x20..0x7f
// but '"' and '\\'.
var jsonPlain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// hex4 reads four lowercase hex digits.
func (s *canonScanner) hex4() (uint32, bool) {
	if len(s.data)-s.pos < 4 {
		return 0, false
	}
	var v uint32
	for _, c := range s.data[s.pos : s.pos+4] {
		v <<= 4
		switch {
		case c >= '0' && c <= '9':
			v |= uint32(c - '0')
		case c >= 'a' && c <= 'f':
			v |= uint32(c-'a') + 10
		default:
			return 0, false
		}
	}
	s.pos += 4
	return v, true
}
