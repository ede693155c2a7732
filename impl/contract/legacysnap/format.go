package legacysnap

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// SnapshotRootBase is the directory upstream's catalog keeps every cluster's
// snapshots under, inside its object store root
// (snapshot_catalog_store.h: kSnapshotRootBase).
const SnapshotRootBase = "mooncake_master_snapshot"

// Object names inside a cluster's snapshot directory.
const (
	LatestObject      = "latest.txt"
	DescriptorObject  = "descriptor.txt"
	ManifestObject    = "manifest.txt"
	MetadataObject    = "metadata"
	SegmentsObject    = "segments"
	TaskManagerObject = "task_manager"
)

// The manifest's serializer type and version: "messagepack|1.0.0|<id>".
const (
	SerializerType    = "messagepack"
	SerializerVersion = "1.0.0"
)

// NumShards is the number of metadata shards of upstream's master
// (kNumShards): a shard index in the metadata file is below it.
const NumShards = 1024

// CheckID validates a legacy snapshot id, YYYYMMDD_HHMMSS_mmm, including
// that it names a real calendar time (CheckLegacySnapshotID: the
// import record names one). Failures are ErrID.
func CheckID(id string) error { return CheckLegacySnapshotID(id) }

// IDAt renders the id of a snapshot taken at t (fixtures).
func IDAt(t time.Time) string {
	t = t.UTC()
	return fmt.Sprintf("%s_%03d", t.Format("20060102_150405"), t.Nanosecond()/int(time.Millisecond))
}

// ManifestFor is the manifest text of snapshot id.
func ManifestFor(id string) string {
	return SerializerType + "|" + SerializerVersion + "|" + id
}

// UUID is upstream's 128-bit id (a segment, a client, a task): two 64-bit
// halves, written "<hi>-<lo>" in decimal (types.cpp UuidToString).
type UUID struct{ Hi, Lo uint64 }

func (u UUID) String() string {
	return strconv.FormatUint(u.Hi, 10) + "-" + strconv.FormatUint(u.Lo, 10)
}

// ParseUUID reads the "<hi>-<lo>" form. It takes only what upstream's
// writer produces — two canonical decimals — where upstream's reader
// (stoull) would also take signs, spaces and trailing text.
func ParseUUID(s string) (UUID, error) {
	hi, lo, ok := strings.Cut(s, "-")
	a, errA := canonicalUint(hi)
	b, errB := canonicalUint(lo)
	if !ok || errA != nil || errB != nil {
		return UUID{}, fmt.Errorf("uuid %q: want <hi>-<lo>, two decimals", clipString(s))
	}
	return UUID{a, b}, nil
}

func clipString(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
