package batchsnap

import (
	"hash"
	"hash/crc32"
)

// castagnoli is the CRC-32C table; the standard library computes it with
// the CPU's CRC32 instruction where there is one.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// CRC32C is upstream's Crc32cValue (include/crc32c.h): CRC-32C
// (Castagnoli, reflected polynomial 0x82F63B78, init and final XOR
// 0xFFFFFFFF) of the exact stored bytes of one object. There is no checksum
// over a whole snapshot and none inside the struct_pack bytes.
func CRC32C(data []byte) uint32 { return crc32.Checksum(data, castagnoli) }

// NewCRC32C is a running CRC32C.
func NewCRC32C() hash.Hash32 { return crc32.New(castagnoli) }

// UpdateCRC32C continues crc over data.
func UpdateCRC32C(crc uint32, data []byte) uint32 { return crc32.Update(crc, castagnoli, data) }
