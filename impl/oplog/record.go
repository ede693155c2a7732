package oplog

import (
	"errors"
	"fmt"

	"github.com/oplogha/oplogha/impl/contract/batchlog"

	"github.com/oplogha/oplogha/impl/contract"
	"github.com/oplogha/oplogha/impl/state"
)

// The batch record is upstream Mooncake's (impl/contract):
//
//	[1,batch_id,first_seq,last_seq,[[op,"tenant","key","base64(payload)"],...],checksum]
//
// with checksum the XXH32 of jsoncpp's serialization of the first five
// elements. This file converts between state's batches and contract's and
// gives contract's errors this package's kinds; the codec itself is
// contract's, so what this package writes is what an upstream master writes
// for the same entries, and what an upstream master wrote reads here.

// EncodeBatch encodes b as upstream's encoder would. Besides contract's
// checks (contract.(*Batch).Validate) it refuses what would not come back
// unchanged or could not be applied: a tenant or key that is not valid
// UTF-8 (upstream writes it lossily) and an op the applier does not know
// (LEASE_RENEW passes the codec, but no applier accepts it).
func EncodeBatch(b state.Batch) ([]byte, error) {
	cb, err := toContract(b)
	if err != nil {
		return nil, err
	}
	rec, err := batchlog.EncodeBatch(cb)
	if err != nil {
		return nil, codecErr(err)
	}
	return rec, nil
}

// DecodeBatch decodes a batch record as upstream's decoder does: it accepts
// what upstream accepts (upstream's own non-canonical forms included, see
// contract's README) and refuses the rest with upstream's reason. An entry
// whose op the applier does not know (LEASE_RENEW) decodes, as upstream's;
// applying it fails with state.ErrUnknownOp.
func DecodeBatch(data []byte) (state.Batch, error) {
	return decodeBatch(data, nil)
}

// decodeBatch is DecodeBatch cutting entries and payloads from blocks
// (nil: none).
func decodeBatch(data []byte, blocks *batchlog.BatchBlocks[state.Entry]) (state.Batch, error) {
	cb, entries, err := batchlog.DecodeBatchAs(data, fromContractEntry, blocks)
	if err != nil {
		return state.Batch{}, codecErr(err)
	}
	return state.Batch{ID: cb.ID, FirstSeq: cb.FirstSeq, LastSeq: cb.LastSeq, Entries: entries}, nil
}

// toContract is b as a contract batch, after the checks only a writer makes.
func toContract(b state.Batch) (batchlog.Batch, error) {
	cb := batchlog.Batch{ID: b.ID, FirstSeq: b.FirstSeq, LastSeq: b.LastSeq, Entries: make([]batchlog.Entry, len(b.Entries))}
	for i, e := range b.Entries {
		if err := checkWritable(e); err != nil {
			return batchlog.Batch{}, fmt.Errorf("entry %d: %w", i, err)
		}
		cb.Entries[i] = toContractEntry(e)
	}
	return cb, nil
}

func toContractEntry(e state.Entry) batchlog.Entry {
	return batchlog.Entry{Op: batchlog.OpType(e.Op), Tenant: e.Tenant, Key: e.Key, Payload: e.Payload}
}

// checkWritable refuses an entry EncodeBatch must not write, whatever batch
// it is in: one upstream's decoder refuses (contract's entry checks: op,
// tenant, sizes), an op the applier does not know, or a tenant or key that
// would not survive the record's JSON.
func checkWritable(e state.Entry) error {
	if !e.Op.Known() {
		return fmt.Errorf("%w: %d", state.ErrUnknownOp, uint8(e.Op))
	}
	one := batchlog.Batch{ID: 1, FirstSeq: 1, LastSeq: 1, Entries: []batchlog.Entry{toContractEntry(e)}}
	if err := one.Validate(); err != nil {
		return codecErr(err)
	}
	if err := one.Lossless(); err != nil {
		return codecErr(err)
	}
	return nil
}

func fromContractEntry(e batchlog.Entry) state.Entry {
	return state.Entry{Op: state.OpType(e.Op), Tenant: e.Tenant, Key: e.Key, Payload: e.Payload}
}

// codecError is a contract error seen through this package's kinds:
// errors.Is matches both (ErrChecksum and contract.ErrChecksum, say), and
// the message is contract's, upstream's reason included.
type codecError struct {
	kind error
	err  error
}

func (e *codecError) Error() string   { return e.err.Error() }
func (e *codecError) Unwrap() []error { return []error{e.kind, e.err} }

// codecKinds maps contract's sentinel errors to this package's. A stored
// op outside upstream's enum is a malformed record (an unknown op a caller
// asks to write is state.ErrUnknownOp, refused before contract sees it).
var codecKinds = []struct{ from, to error }{
	{contract.ErrChecksum, ErrChecksum},
	{contract.ErrVersion, ErrVersion},
	{contract.ErrSpan, ErrSpan},
	{contract.ErrUnknownOp, ErrMalformed},
	{contract.ErrMalformed, ErrMalformed},
	{contract.ErrTenant, ErrMalformed},
	{contract.ErrTooLarge, ErrMalformed},
	{contract.ErrTypeHash, ErrMalformed},
}

// codecErr wraps err, a contract codec error, in this package's kind.
func codecErr(err error) error {
	for _, k := range codecKinds {
		if errors.Is(err, k.from) {
			return &codecError{kind: k.to, err: err}
		}
	}
	return &codecError{kind: ErrMalformed, err: err}
}
