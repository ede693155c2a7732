package oplog

import (
	"hash/crc32"
	"strconv"
)

// crcOf is the checksum element for a crafted five-element head.
func crcOf(head string) string {
	return strconv.FormatUint(uint64(crc32.Checksum([]byte(head), castagnoli)), 10)
}
