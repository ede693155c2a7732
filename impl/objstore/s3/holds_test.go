package s3

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/impl/objstore"
)

func TestHolds(t *testing.T) {
	crc, other := uint32(0x1234), uint32(0x1235)
	require.True(t, holds(objstore.Info{Size: 10, CRC32C: &crc, FullObj: true}, 10, crc))
	require.False(t, holds(objstore.Info{Size: 11, CRC32C: &crc, FullObj: true}, 10, crc), "other size")
	require.False(t, holds(objstore.Info{Size: 10, CRC32C: &other, FullObj: true}, 10, crc), "other checksum")
	require.False(t, holds(objstore.Info{Size: 10}, 10, crc), "no checksum: not provable")
	require.False(t, holds(objstore.Info{Size: 10, CRC32C: &crc}, 10, crc), "not a full-object checksum")
}
