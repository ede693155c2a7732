package batchlog

import (
	"strconv"
	"strings"

	"github.com/oplogha/oplogha/impl/contract"
)

// BatchIDWidth is the zero-padded decimal width of a batch id in its key
// (upstream kOpLogBatchIdWidth), so that key order is numeric order. 20
// digits hold every uint64.
const BatchIDWidth = 20

// root is "/oplog/<normalized id>", or "" when the id is invalid.
func root(clusterID string) string {
	id, ok := contract.NormalizeClusterID(clusterID)
	if !ok {
		return ""
	}
	return "/oplog/" + id
}

// under is root(clusterID)+suffix, or "" when the id is invalid: every key
// builder returns the empty string for an invalid cluster id, as upstream's do.
func under(clusterID, suffix string) string {
	r := root(clusterID)
	if r == "" {
		return ""
	}
	return r + suffix
}

// FormatBatchID is id in BatchIDWidth zero-padded decimal digits.
func FormatBatchID(id uint64) string {
	var buf [BatchIDWidth]byte
	for i := range buf {
		buf[i] = '0'
	}
	s := strconv.AppendUint(nil, id, 10)
	copy(buf[BatchIDWidth-len(s):], s)
	return string(buf[:])
}

// BatchRecordPrefix is "/oplog/<cluster>/batches/", the prefix of every
// batch record key ("" for an invalid cluster id).
func BatchRecordPrefix(clusterID string) string { return under(clusterID, "/batches/") }

// BuildBatchRecordKey is "/oplog/<cluster>/batches/<20-digit id>".
func BuildBatchRecordKey(clusterID string, batchID uint64) string {
	p := BatchRecordPrefix(clusterID)
	if p == "" {
		return ""
	}
	return p + FormatBatchID(batchID)
}

// BuildBatchRecordRange is the etcd range [begin, end) of every batch record
// after afterBatchID (exclusive), as upstream's BuildBatchRecordRange: end is
// the prefix's end (its last byte incremented), and after the largest id the
// range is empty (begin == end). Both are "" for an invalid cluster id.
func BuildBatchRecordRange(clusterID string, afterBatchID uint64) (begin, end string) {
	p := BatchRecordPrefix(clusterID)
	if p == "" {
		return "", ""
	}
	end = prefixEnd(p)
	if afterBatchID == ^uint64(0) {
		return end, end
	}
	return p + FormatBatchID(afterBatchID+1), end
}

// prefixEnd is the smallest key above every key starting with prefix: the
// prefix with its last byte below 0xff incremented and the rest dropped, or
// "\x00" when every byte is 0xff (upstream's PrefixEnd).
func prefixEnd(prefix string) string {
	b := []byte(prefix)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1])
		}
	}
	return "\x00"
}

// ParseBatchIDFromKey returns the batch id of a batch record key, mirroring
// upstream's TryParseBatchIdFromKey: what follows the last '/' must be exactly
// BatchIDWidth decimal digits that fit a uint64. The prefix is not checked;
// use ParseBatchRecordKey to check it too.
func ParseBatchIDFromKey(key string) (uint64, bool) {
	slash := strings.LastIndexByte(key, '/')
	if slash < 0 || len(key)-slash-1 != BatchIDWidth {
		return 0, false
	}
	suffix := key[slash+1:]
	for i := 0; i < len(suffix); i++ {
		if suffix[i] < '0' || suffix[i] > '9' {
			return 0, false
		}
	}
	id, err := strconv.ParseUint(suffix, 10, 64)
	return id, err == nil
}

// ParseBatchRecordKey is ParseBatchIDFromKey for a key that must also lie
// under clusterID's batch prefix.
func ParseBatchRecordKey(clusterID, key string) (uint64, bool) {
	p := BatchRecordPrefix(clusterID)
	if p == "" || !strings.HasPrefix(key, p) {
		return 0, false
	}
	return ParseBatchIDFromKey(key)
}

// BuildDurablePrefixKey is "/oplog/<cluster>/durable_prefix".
func BuildDurablePrefixKey(clusterID string) string { return under(clusterID, "/durable_prefix") }

// BuildProducerViewKey is "/oplog/<cluster>/producer_view".
func BuildProducerViewKey(clusterID string) string { return under(clusterID, "/producer_view") }
