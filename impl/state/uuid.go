package state

import (
	"fmt"
	"strconv"
	"strings"
)

// UUID is upstream Mooncake's client UUID, a pair of uint64 (types.h
// `using UUID = std::pair<uint64_t, uint64_t>`). Its text form, in JSON and
// wherever a person reads it, is upstream's: "<first>-<second>" in decimal
// (types.cpp, the operator<< that the legacy snapshot writer uses).
type UUID struct {
	First  uint64
	Second uint64
}

// IsZero reports whether u is {0, 0}, upstream's default client id.
func (u UUID) IsZero() bool { return u == UUID{} }

func (u UUID) String() string {
	return strconv.FormatUint(u.First, 10) + "-" + strconv.FormatUint(u.Second, 10)
}

// ParseUUID reads the text form "<first>-<second>" (two decimal uint64).
func ParseUUID(s string) (UUID, error) {
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		return UUID{}, fmt.Errorf("%w: client id %q: want <uint64>-<uint64>", ErrMalformed, s)
	}
	hi, err1 := parseDecimal(a)
	lo, err2 := parseDecimal(b)
	if err1 != nil || err2 != nil {
		return UUID{}, fmt.Errorf("%w: client id %q: want <uint64>-<uint64>", ErrMalformed, s)
	}
	return UUID{First: hi, Second: lo}, nil
}

// parseDecimal accepts only plain decimal digits (no sign, no spaces), so
// that one UUID has exactly one text form besides leading zeros.
func parseDecimal(s string) (uint64, error) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("not decimal: %q", s)
	}
	return strconv.ParseUint(s, 10, 64)
}

// MarshalText writes the text form.
func (u UUID) MarshalText() ([]byte, error) { return []byte(u.String()), nil }

// UnmarshalText reads the text form; "" is the zero UUID (a client that
// does not say who it is, as upstream's default-constructed UUID).
func (u *UUID) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*u = UUID{}
		return nil
	}
	v, err := ParseUUID(string(b))
	if err != nil {
		return err
	}
	*u = v
	return nil
}
