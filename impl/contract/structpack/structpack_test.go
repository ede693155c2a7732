package structpack

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/impl/contract"
)

// The literal builders and type hashes of the coro_rpc bodies
// (impl/contract/cororpc; the hashes are the vectors' hash heads with bit
// 0 cleared, testdata/upstream/rpc).
func TestLiterals(t *testing.T) {
	for _, tc := range []struct {
		name string
		lit  []byte
		want []byte
		hash uint32
	}{
		{"std::string", LitString, []byte{0x80, 0x0c}, 0x9dcffa76},
		{"pair<uint16_t, string>", LitTuple(LitUint16, LitString), []byte{0xfd, 0x08, 0x80, 0x0c, 0xff}, 0x372be64c},
		{"expected<string, ErrorCode>", LitExpected(LitString, LitInt32), []byte{0x87, 0x80, 0x0c, 0x01}, 0x1cb3cc34},
		{"expected<void, ErrorCode>", LitExpected(LitVoid, LitInt32), []byte{0x87, 0xfa, 0x01}, 0xaf2868cc},
		{"expected<bool, ErrorCode>", LitExpected(LitBool, LitInt32), []byte{0x87, 0x0b, 0x01}, 0x90e800d2},
		{"PingResponse result", LitExpected(LitStruct(LitInt64, LitInt32), LitInt32), []byte{0x87, 0xfd, 0x03, 0x01, 0xff, 0x01}, 0x742a8f52},
		{"ObjectMeta", LitStruct(LitString, LitOptional(LitUint64)), []byte{0xfd, 0x80, 0x0c, 0x85, 0x04, 0xff}, 0},
	} {
		assert.Equal(t, tc.want, tc.lit, tc.name)
		typ := NewType(tc.name, false, tc.lit)
		assert.Equal(t, tc.want, typ.Literal())
		if tc.hash != 0 {
			assert.Equal(t, tc.hash, typ.Hash(), tc.name)
		}
	}
}

func TestTypeLiteralChecked(t *testing.T) {
	typ := NewType("pair", false, LitTuple(LitUint16, LitString))
	var z Size
	z.Fixed(2)
	z.Str("hi")
	write := func(w *Writer) { w.U16(300); w.Str("hi") }
	plain := Marshal(typ, false, z, write)
	lit := Marshal(typ, true, z, write)
	assert.False(t, HasTypeLiteral(plain))
	assert.True(t, HasTypeLiteral(lit))
	assert.Equal(t, []byte{0x4d, 0xe6, 0x2b, 0x37, 0x04, 0xfd, 0x08, 0x80, 0x0c, 0xff, 0x00, 0x2c, 0x01, 0x02, 'h', 'i'}, lit)
	for _, b := range [][]byte{plain, lit} {
		r, err := Open(typ, b)
		require.NoError(t, err)
		assert.Equal(t, uint16(300), r.U16())
		assert.Equal(t, "hi", r.Str())
		require.NoError(t, r.Finish())
	}

	bad := append([]byte{}, lit...)
	bad[7] = 0x81
	_, err := Open(typ, bad)
	assert.ErrorIs(t, err, contract.ErrTypeHash)
	assert.Contains(t, err.Error(), "literal byte 2 is 0x81, want 0x80")

	bad = append([]byte{}, lit...)
	bad[10] = 0xff
	_, err = Open(typ, bad)
	assert.ErrorIs(t, err, contract.ErrTypeHash)
	assert.Contains(t, err.Error(), "not NUL")

	for n := 5; n < 11; n++ {
		_, err = Open(typ, lit[:n])
		assert.ErrorIs(t, err, contract.ErrMalformed, "%d bytes", n)
		assert.NotErrorIs(t, err, contract.ErrTypeHash)
	}
}

func TestSignedAndShortIntegers(t *testing.T) {
	typ := NewType("ints", false, LitStruct(LitInt64, LitUint16))
	var z Size
	z.Fixed(10)
	b := Marshal(typ, false, z, func(w *Writer) { w.I64(-2); w.U16(0xbeef) })
	r, err := Open(typ, b)
	require.NoError(t, err)
	assert.Equal(t, int64(-2), r.I64())
	assert.Equal(t, uint16(0xbeef), r.U16())
	require.NoError(t, r.Finish())
	r, err = Open(typ, b[:len(b)-1])
	require.NoError(t, err)
	r.I64()
	r.U16()
	assert.ErrorIs(t, r.Finish(), contract.ErrMalformed)
}
