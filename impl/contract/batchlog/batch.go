package batchlog

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/oplogha/oplogha/impl/contract"

	"github.com/OneOfOne/xxhash"

	"github.com/oplogha/oplogha/impl/contract/jsoncpp"
)

// BatchSchemaVersion is the first element of every batch record
// (upstream kOpLogBatchRecordSchemaVersion).
const BatchSchemaVersion = 1

// Upstream's size limits on an entry (kMaxOpLogObjectKeySize,
// kMaxOpLogPayloadSize), in bytes.
const (
	MaxObjectKeySize = 4096
	MaxPayloadSize   = 10 * 1024 * 1024
)

// OpType is an entry's operation, numbered as upstream's OpType.
type OpType uint8

// Op types. The codec accepts all seven. LEASE_RENEW (4) passes the codec,
// as upstream's does, but upstream's OpLogApplier has no case for it and
// rejects such an entry: an applier built on this package must do the same.
const (
	OpPutEnd         OpType = 1
	OpPutRevoke      OpType = 2
	OpRemove         OpType = 3
	OpLeaseRenew     OpType = 4
	OpSegmentMount   OpType = 5
	OpSegmentUnmount OpType = 6
	OpSegmentUpdate  OpType = 7
)

// Valid reports whether t is in the codec's range 1..7.
func (t OpType) Valid() bool { return t >= OpPutEnd && t <= OpSegmentUpdate }

func (t OpType) String() string {
	switch t {
	case OpPutEnd:
		return "PUT_END"
	case OpPutRevoke:
		return "PUT_REVOKE"
	case OpRemove:
		return "REMOVE"
	case OpLeaseRenew:
		return "LEASE_RENEW"
	case OpSegmentMount:
		return "SEGMENT_MOUNT"
	case OpSegmentUnmount:
		return "SEGMENT_UNMOUNT"
	case OpSegmentUpdate:
		return "SEGMENT_UPDATE"
	}
	return fmt.Sprintf("OpType(%d)", uint8(t))
}

// Entry is one operation of a batch; its sequence id is the batch's
// FirstSeq plus its index. Tenant may be empty (upstream validates it as
// "default" but stores and writes it as given). Payload is the op's
// struct_pack payload (PUT_END: MetadataPayload; SEGMENT_MOUNT/UNMOUNT/
// UPDATE: the segment ops), empty for the others. A decoded empty payload is nil.
type Entry struct {
	Op      OpType
	Tenant  string
	Key     string
	Payload []byte
}

// Batch is one batch record: entries carry sequence ids FirstSeq..LastSeq.
type Batch struct {
	ID       uint64
	FirstSeq uint64
	LastSeq  uint64
	Entries  []Entry
}

// Upstream's reason strings, for the checks a batch's fields go through.
const (
	reasonSixElements  = "batch record must be a six-element array"
	reasonFieldTypes   = "batch record has invalid field types"
	reasonSchema       = "unsupported batch record schema_version"
	reasonSpan         = "batch sequence range does not match entry count"
	reasonChecksum     = "batch record checksum mismatch"
	reasonFourElements = "oplog entry must be a four-element array"
	reasonEntryTypes   = "oplog entry has invalid field types"
	reasonOpRange      = "oplog entry op_type is outside the enum range"
	reasonBase64       = "oplog entry payload is not canonical base64"
	reasonTenant       = "tenant_id is empty or invalid"
	reasonBatchID      = "batch_id must be non-zero"
)

// checkSpan is upstream's check of the sequence range against the entry count.
func checkSpan(first, last uint64, n int) *contract.Error {
	if n == 0 || first == 0 || last < first || last-first != uint64(n-1) {
		return contract.NewError(contract.ErrSpan, reasonSpan)
	}
	return nil
}

// ValidTenant is upstream's TenantId(raw).IsValid(): an empty tenant stands
// for "default" and is valid; otherwise it must not start with '_' (reserved)
// and must have no byte below 0x20 and no DEL. Other bytes, UTF-8 or not, are allowed.
func ValidTenant(tenant string) bool {
	if tenant == "" {
		return true
	}
	if tenant[0] == '_' {
		return false
	}
	for i := 0; i < len(tenant); i++ {
		if c := tenant[i]; c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}

// checkEntry is upstream's validation of a decoded entry after its payload
// was found to be canonical base64: op range, tenant, sizes.
func checkEntry(i int, op uint64, tenant, key string, payloadLen int) *contract.Error {
	switch {
	case op == 0 || op > uint64(OpSegmentUpdate):
		return contract.EntryError(contract.ErrUnknownOp, i, reasonOpRange)
	case !ValidTenant(tenant):
		return contract.EntryError(contract.ErrTenant, i, reasonTenant)
	case len(key) > MaxObjectKeySize:
		return contract.EntryError(contract.ErrTooLarge, i, "object_key too large: size="+strconv.Itoa(len(key)))
	case payloadLen > MaxPayloadSize:
		return contract.EntryError(contract.ErrTooLarge, i, "payload too large: size="+strconv.Itoa(payloadLen))
	}
	return nil
}

// Validate checks b against every rule the decoder enforces, in the
// decoder's order, so that whatever passes encodes to a record that decodes.
// Upstream's encoder checks nothing; refusing here keeps a writer from
// putting a record into etcd that every reader would reject.
func (b *Batch) Validate() error {
	if err := checkSpan(b.FirstSeq, b.LastSeq, len(b.Entries)); err != nil {
		return err
	}
	for i := range b.Entries {
		e := &b.Entries[i]
		if err := checkEntry(i, uint64(e.Op), e.Tenant, e.Key, len(e.Payload)); err != nil {
			return err
		}
	}
	if b.ID == 0 {
		return contract.NewError(contract.ErrSpan, reasonBatchID)
	}
	return nil
}

// Lossless reports (as contract.ErrLossy, naming the entry) whether b would decode
// to itself after EncodeBatch. EncodeBatch writes invalid UTF-8 exactly as
// upstream does (as U+FFFD or a mangled code point), so a writer that must
// not alter keys checks this first.
func (b *Batch) Lossless() error {
	for i := range b.Entries {
		if !utf8.ValidString(b.Entries[i].Tenant) || !utf8.ValidString(b.Entries[i].Key) {
			return &contract.Error{Kind: contract.ErrLossy, Entry: i}
		}
	}
	return nil
}

// RecordOverhead is the most bytes a batch record holds besides its
// entries' elements and the commas between them: "[1,", the batch id, first
// and last seq (at most 20 digits each) each with the comma after it, the
// brackets around the entries, and ",checksum]" (at most 10 digits). A
// record of entries es is at most RecordOverhead plus the sum of their
// EncodedLen plus one comma between each two.
const RecordOverhead = 3 + 3*21 + 2 + 12

// EncodedLen is the number of bytes e's element takes in the record
// EncodeBatch writes, [op,"tenant","key","base64(payload)"], so that a
// writer can cut batches to a byte budget before encoding them.
func (e *Entry) EncodedLen() int {
	var scratch [64]byte
	n := 1 + len(strconv.AppendUint(scratch[:0], uint64(e.Op), 10)) + 1
	n += len(jsoncpp.AppendString(scratch[:0], e.Tenant)) + 1
	n += len(jsoncpp.AppendString(scratch[:0], e.Key)) + 1
	return n + 2 + base64.StdEncoding.EncodedLen(len(e.Payload)) + 1
}

// EncodeBatch returns the batch record upstream's EncodeOpLogBatchRecord
// writes for b:
//
//	[1,batch_id,first_seq,last_seq,[[op,"tenant","key","base64(payload)"],...],checksum]
//
// with no whitespace, strings escaped as jsoncpp escapes them, and checksum
// the XXH32 (seed 0) of the same serialization of the first five elements,
// in decimal. b must pass Validate.
func EncodeBatch(b Batch) ([]byte, error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	size := 64
	for i := range b.Entries {
		e := &b.Entries[i]
		size += 16 + len(e.Tenant) + len(e.Key) + base64.StdEncoding.EncodedLen(len(e.Payload))
	}
	out := make([]byte, 0, size)
	out = append(out, "[1,"...)
	out = strconv.AppendUint(out, b.ID, 10)
	out = append(out, ',')
	out = strconv.AppendUint(out, b.FirstSeq, 10)
	out = append(out, ',')
	out = strconv.AppendUint(out, b.LastSeq, 10)
	out = append(out, ",["...)
	for i := range b.Entries {
		e := &b.Entries[i]
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, '[')
		out = strconv.AppendUint(out, uint64(e.Op), 10)
		out = append(out, ',')
		out = jsoncpp.AppendString(out, e.Tenant)
		out = append(out, ',')
		out = jsoncpp.AppendString(out, e.Key)
		out = append(out, ',', '"')
		out = base64.StdEncoding.AppendEncode(out, e.Payload)
		out = append(out, '"', ']')
	}
	out = append(out, "]]"...)
	// out is now the serialization of the first five elements: the checksum
	// covers exactly it. The record replaces its closing bracket with
	// ",checksum]".
	sum := xxhash.Checksum32S(out, 0)
	out[len(out)-1] = ','
	out = strconv.AppendUint(out, uint64(sum), 10)
	return append(out, ']'), nil
}
