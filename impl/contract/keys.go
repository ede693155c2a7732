package contract

import (
	"strconv"
	"strings"
)

// BatchIDWidth is the zero-padded decimal width of a batch id in its key
// (upstream kOpLogBatchIdWidth), so that key order is numeric order. 20
// digits hold every uint64.
const BatchIDWidth = 20

// MaxClusterIDLen is the longest cluster id upstream accepts.
const MaxClusterIDLen = 128

// NormalizeClusterID applies upstream's cluster id rule
// (NormalizeAndValidateClusterId + IsValidClusterIdComponent): trailing '/'
// are dropped, and what is left must be 1..128 bytes of [0-9A-Za-z_.-]. It
// returns the normalized id and whether it is valid.
//
// The first byte need not be a letter or digit ("-a", "_", "." and ".." are
// valid), and trailing slashes are accepted ("c-1.x/" is "c-1.x").
func NormalizeClusterID(clusterID string) (string, bool) {
	id := strings.TrimRight(clusterID, "/")
	if id == "" || len(id) > MaxClusterIDLen {
		return "", false
	}
	for i := 0; i < len(id); i++ {
		if !clusterIDByte(id[i]) {
			return "", false
		}
	}
	return id, true
}

// clusterIDByte reports whether c may appear in a cluster id.
func clusterIDByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' ||
		c == '_' || c == '-' || c == '.'
}

// root is "/oplog/<normalized id>", or "" when the id is invalid.
func root(clusterID string) string {
	id, ok := NormalizeClusterID(clusterID)
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

// The keys below are the project's RFC keys, built under the same cluster
// id rule. Upstream has snapshot
// control keys under the same "/oplog/<cluster>/snapshot/" prefix (latest,
// fallback, compaction_floor), but names its maintenance lease key
// "snapshot/maintenance" where the RFC has "snapshot/writer", and has no
// leader or legacy_import key there.

// BuildLeaderKey is the election prefix "/oplog/<cluster>/leader".
func BuildLeaderKey(clusterID string) string { return under(clusterID, "/leader") }

// BuildSnapshotKeyPrefix is "/oplog/<cluster>/snapshot/", the prefix of
// every snapshot control key below.
func BuildSnapshotKeyPrefix(clusterID string) string { return under(clusterID, "/snapshot/") }

// BuildSnapshotWriterKey is the maintenance-lease owner key "/oplog/<cluster>/snapshot/writer".
func BuildSnapshotWriterKey(clusterID string) string { return under(clusterID, "/snapshot/writer") }

// BuildSnapshotLatestKey is the latest snapshot pointer "/oplog/<cluster>/snapshot/latest".
func BuildSnapshotLatestKey(clusterID string) string { return under(clusterID, "/snapshot/latest") }

// BuildSnapshotFallbackKey is the fallback snapshot pointer "/oplog/<cluster>/snapshot/fallback".
func BuildSnapshotFallbackKey(clusterID string) string {
	return under(clusterID, "/snapshot/fallback")
}

// BuildCompactionFloorKey is the compaction floor record "/oplog/<cluster>/snapshot/compaction_floor".
func BuildCompactionFloorKey(clusterID string) string {
	return under(clusterID, "/snapshot/compaction_floor")
}

// BuildLegacyImportKey is the record of an explicit legacy snapshot import
// "/oplog/<cluster>/snapshot/legacy_import".
func BuildLegacyImportKey(clusterID string) string {
	return under(clusterID, "/snapshot/legacy_import")
}
