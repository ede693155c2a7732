package snapshot

import (
	"errors"
	"fmt"

	"github.com/oplogha/oplogha/impl/contract"
)

// ChecksumAlgorithm is the payload checksum algorithm (CRC64NVME, the one
// S3 can verify as a full-object checksum).
const ChecksumAlgorithm = contract.ChecksumAlgorithm

// Checksum is an algorithm-tagged checksum string, "crc64nvme:<base64>", the
// base64 being the 8 big-endian bytes, as S3's x-amz-checksum-crc64nvme. The
// format is the contract's (contract.Checksum); this package computes the
// CRC.
type Checksum = contract.Checksum

// CRC64NVME tags a CRC64NVME value.
func CRC64NVME(v uint64) Checksum { return contract.CRC64NVME(v) }

// S3Base64 is the value as S3 headers carry it.
func S3Base64(v uint64) string { return contract.S3Base64(v) }

// ParseChecksum splits a tagged checksum; only crc64nvme is known
// (contract.ParseChecksum). A string that is not tagged is ErrBadChecksumTag
// (the contract's ErrChecksumTag), another algorithm ErrVersion here and
// contract.ErrVersion.
func ParseChecksum(s Checksum) (algorithm string, value uint64, err error) {
	algorithm, value, err = contract.ParseChecksum(s)
	if err != nil && errors.Is(err, contract.ErrVersion) {
		err = &contractError{kind: ErrVersion, err: err, msg: fmt.Sprintf("%v: %s", ErrVersion, reason(err))}
	}
	return algorithm, value, err
}

// contractError is a contract error seen through this package's kind:
// errors.Is matches both, and the message is this package's.
type contractError struct {
	kind error
	err  error
	msg  string
}

func (e *contractError) Error() string   { return e.msg }
func (e *contractError) Unwrap() []error { return []error{e.kind, e.err} }

// reason is a contract error's reason, or its text.
func reason(err error) string {
	var ce *contract.Error
	if errors.As(err, &ce) {
		return ce.Reason
	}
	return err.Error()
}
