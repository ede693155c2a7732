package snapshot

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"strings"
)

// ChecksumAlgorithm is the payload checksum algorithm (CRC64NVME, the one
// S3 can verify as a full-object checksum).
const ChecksumAlgorithm = "crc64nvme"

// Checksum is an algorithm-tagged checksum string, "crc64nvme:<base64>", the
// base64 being the 8 big-endian bytes, as S3's x-amz-checksum-crc64nvme.
type Checksum string

// CRC64NVME tags a CRC64NVME value.
func CRC64NVME(v uint64) Checksum { return Checksum(ChecksumAlgorithm + ":" + S3Base64(v)) }

// S3Base64 is the value as S3 headers carry it.
func S3Base64(v uint64) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	return base64.StdEncoding.EncodeToString(b[:])
}

// ParseChecksum splits a tagged checksum; only crc64nvme is known.
func ParseChecksum(s Checksum) (algorithm string, value uint64, err error) {
	alg, enc, ok := strings.Cut(string(s), ":")
	if !ok || alg == "" {
		return "", 0, fmt.Errorf("%w: %q", ErrBadChecksumTag, s)
	}
	if alg != ChecksumAlgorithm {
		return "", 0, fmt.Errorf("%w: algorithm %q", ErrVersion, alg)
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(enc)
	if err != nil || len(raw) != 8 {
		return "", 0, fmt.Errorf("%w: %q", ErrBadChecksumTag, s)
	}
	return alg, binary.BigEndian.Uint64(raw), nil
}
