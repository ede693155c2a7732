package contract

import (
	"encoding/base64"
	"encoding/binary"
	"strconv"
	"strings"
)

// ChecksumAlgorithm is the one payload checksum algorithm (CRC64NVME, the
// one S3 can verify as a full-object checksum).
const ChecksumAlgorithm = "crc64nvme"

// Checksum is an algorithm-tagged checksum string, as the RFC ("Descriptor")
// requires of payload_checksum, here "crc64nvme:<base64>" with the base64 of
// the 8 big-endian bytes, as S3's x-amz-checksum-crc64nvme carries them
// (impl/master/CONTRACT.md §4). Pointers, descriptors and manifests hold
// it. Only the string is here; the CRC itself is computed by impl/snapshot.
type Checksum string

// CRC64NVME tags a CRC64NVME value.
func CRC64NVME(v uint64) Checksum { return Checksum(ChecksumAlgorithm + ":" + S3Base64(v)) }

// S3Base64 is the value as S3 headers carry it: base64 of the 8 big-endian
// bytes.
func S3Base64(v uint64) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	return base64.StdEncoding.EncodeToString(b[:])
}

// ParseChecksum splits a tagged checksum. A string without a tag or whose
// value is not the strict base64 of 8 bytes is ErrChecksumTag; a tag other
// than crc64nvme is ErrVersion.
func ParseChecksum(s Checksum) (algorithm string, value uint64, err error) {
	alg, enc, ok := strings.Cut(string(s), ":")
	if !ok || alg == "" {
		return "", 0, newError(ErrChecksumTag, strconv.Quote(string(s)))
	}
	if alg != ChecksumAlgorithm {
		return "", 0, newError(ErrVersion, "checksum algorithm "+strconv.Quote(alg))
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(enc)
	if err != nil || len(raw) != 8 {
		return "", 0, newError(ErrChecksumTag, strconv.Quote(string(s)))
	}
	return alg, binary.BigEndian.Uint64(raw), nil
}
