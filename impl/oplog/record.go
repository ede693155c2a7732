package oplog

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"hash/crc32"
	"strconv"

	"github.com/oplogha/oplogha/impl/state"
)

// RecordVersion is the batch record layout version (the first array element).
const RecordVersion = 1

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// EncodeBatch encodes b as the canonical batch record
//
//	[1, batch_id, first_seq, last_seq, [[op_type, tenant, key, base64(payload)]…], checksum]
//
// where checksum is the CRC32C (decimal) of the compact JSON of the first five
// elements, that is of the record's bytes up to the comma before the checksum
// with a closing bracket in place of the comma.
func EncodeBatch(b state.Batch) ([]byte, error) {
	if err := checkSpan(b); err != nil {
		return nil, err
	}
	head, err := encodeHead(b)
	if err != nil {
		return nil, err
	}
	sum := crc32.Checksum(head, castagnoli)
	out := append(head[:len(head)-1:len(head)-1], ',')
	out = strconv.AppendUint(out, uint64(sum), 10)
	return append(out, ']'), nil
}

// encodeHead is the compact JSON array of the first five elements.
func encodeHead(b state.Batch) ([]byte, error) {
	out := make([]byte, 0, 64+len(b.Entries)*64)
	out = append(out, '[')
	out = strconv.AppendUint(out, RecordVersion, 10)
	for _, v := range []uint64{b.ID, b.FirstSeq, b.LastSeq} {
		out = append(out, ',')
		out = strconv.AppendUint(out, v, 10)
	}
	out = append(out, ",["...)
	var err error
	for i, e := range b.Entries {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, '[')
		out = strconv.AppendUint(out, uint64(e.Op), 10)
		out = append(out, ',')
		if out, err = appendString(out, e.Tenant); err != nil {
			return nil, fmt.Errorf("entry %d tenant: %w", i, err)
		}
		out = append(out, ',')
		if out, err = appendString(out, e.Key); err != nil {
			return nil, fmt.Errorf("entry %d key: %w", i, err)
		}
		out = append(out, ',', '"')
		out = base64.StdEncoding.AppendEncode(out, e.Payload)
		out = append(out, '"', ']')
	}
	return append(out, ']', ']'), nil
}

func checkSpan(b state.Batch) error {
	switch {
	case b.ID == 0:
		return fmt.Errorf("%w: batch id 0", ErrSpan)
	case b.FirstSeq == 0:
		return fmt.Errorf("%w: first seq 0", ErrSpan)
	case len(b.Entries) == 0:
		return fmt.Errorf("%w: no entries", ErrSpan)
	case b.LastSeq < b.FirstSeq || b.LastSeq-b.FirstSeq+1 != uint64(len(b.Entries)):
		return fmt.Errorf("%w: seq %d..%d with %d entries", ErrSpan, b.FirstSeq, b.LastSeq, len(b.Entries))
	}
	for i, e := range b.Entries {
		if !e.Op.Known() {
			return fmt.Errorf("%w: entry %d: %d", state.ErrUnknownOp, i, uint8(e.Op))
		}
	}
	return nil
}

// DecodeBatch decodes a batch record, accepting only its canonical encoding
// with a matching checksum and a consistent sequence span.
func DecodeBatch(data []byte) (state.Batch, error) {
	elems, err := parseArray(data, 6)
	if err != nil {
		return state.Batch{}, err
	}
	var nums [4]uint64
	for i := range nums {
		if nums[i], err = parseUint(elems[i]); err != nil {
			return state.Batch{}, fmt.Errorf("element %d: %w", i, err)
		}
	}
	if nums[0] != RecordVersion {
		return state.Batch{}, fmt.Errorf("%w: %d", ErrVersion, nums[0])
	}
	b := state.Batch{ID: nums[1], FirstSeq: nums[2], LastSeq: nums[3]}
	rawEntries, err := parseArray(elems[4], -1)
	if err != nil {
		return state.Batch{}, fmt.Errorf("entries: %w", err)
	}
	b.Entries = make([]state.Entry, len(rawEntries))
	for i, re := range rawEntries {
		f, err := parseArray(re, 4)
		if err != nil {
			return state.Batch{}, fmt.Errorf("entry %d: %w", i, err)
		}
		op, err := parseUint(f[0])
		if err != nil {
			return state.Batch{}, fmt.Errorf("entry %d op: %w", i, err)
		}
		if op > 255 || !state.OpType(op).Known() {
			return state.Batch{}, fmt.Errorf("entry %d: %w: %d", i, state.ErrUnknownOp, op)
		}
		e := state.Entry{Op: state.OpType(op)}
		if e.Tenant, err = parseString(f[1]); err != nil {
			return state.Batch{}, fmt.Errorf("entry %d tenant: %w", i, err)
		}
		if e.Key, err = parseString(f[2]); err != nil {
			return state.Batch{}, fmt.Errorf("entry %d key: %w", i, err)
		}
		p, err := parseString(f[3])
		if err != nil {
			return state.Batch{}, fmt.Errorf("entry %d payload: %w", i, err)
		}
		if e.Payload, err = base64.StdEncoding.Strict().DecodeString(p); err != nil {
			return state.Batch{}, fmt.Errorf("entry %d payload: %w: %v", i, ErrMalformed, err)
		}
		if len(e.Payload) == 0 {
			e.Payload = nil
		}
		b.Entries[i] = e
	}
	sum, err := parseUint(elems[5])
	if err != nil {
		return state.Batch{}, fmt.Errorf("checksum: %w", err)
	}
	if err := checkSpan(b); err != nil {
		return state.Batch{}, err
	}
	head, err := encodeHead(b)
	if err != nil {
		return state.Batch{}, err
	}
	// The bytes before the checksum must be the canonical head; only then is
	// the checksum compared, so a mismatch names the real fault.
	body := head[:len(head)-1]
	if len(data) < len(body)+1 || !bytes.Equal(data[:len(body)], body) || data[len(body)] != ',' {
		return state.Batch{}, ErrNonCanonical
	}
	if want := uint64(crc32.Checksum(head, castagnoli)); sum != want {
		return state.Batch{}, fmt.Errorf("%w: stored %d, computed %d", ErrChecksum, sum, want)
	}
	if canon, _ := EncodeBatch(b); !bytes.Equal(canon, data) {
		return state.Batch{}, ErrNonCanonical
	}
	return b, nil
}
