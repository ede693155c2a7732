package oplog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// parseUint parses a canonical unsigned decimal: digits only, no sign, no
// leading zero (except "0"), no exponent, within uint64.
func parseUint(raw []byte) (uint64, error) {
	if len(raw) == 0 || len(raw) > 20 {
		return 0, fmt.Errorf("%w: number %q", ErrMalformed, raw)
	}
	for _, c := range raw {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%w: number %q", ErrMalformed, raw)
		}
	}
	if len(raw) > 1 && raw[0] == '0' {
		return 0, fmt.Errorf("%w: number %q has a leading zero", ErrNonCanonical, raw)
	}
	v, err := strconv.ParseUint(string(raw), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: number %q: out of range", ErrMalformed, raw)
	}
	return v, nil
}

// appendString appends s as a JSON string without HTML escaping. s must be
// valid UTF-8 (json would silently replace bad bytes).
func appendString(dst []byte, s string) ([]byte, error) {
	if !utf8.ValidString(s) {
		return nil, fmt.Errorf("%w: string is not valid UTF-8", ErrMalformed)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return append(dst, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...), nil
}

// parseString decodes a JSON string element.
func parseString(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", fmt.Errorf("%w: want a string, got %.20q", ErrMalformed, raw)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return s, nil
}

// parseArray decodes a JSON array of exactly n elements (n < 0: any length).
func parseArray(raw []byte, n int) ([]json.RawMessage, error) {
	if len(raw) == 0 || raw[0] != '[' {
		return nil, fmt.Errorf("%w: want an array", ErrMalformed)
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if n >= 0 && len(elems) != n {
		return nil, fmt.Errorf("%w: array of %d elements, want %d", ErrMalformed, len(elems), n)
	}
	return elems, nil
}
