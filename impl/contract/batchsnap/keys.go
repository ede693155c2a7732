package batchsnap

import (
	"strconv"
	"strings"

	"github.com/oplogha/oplogha/impl/contract"
)

// The snapshot's etcd control keys (metadata.cpp BuildControlKey):
// "/oplog/<cluster>/snapshot/<name>" under upstream's cluster id rule
// (contract.NormalizeClusterID), "" for an invalid id. Upstream names the
// four keys and defines no value for any of them; the values this project
// writes (pointer.go, floor.go, the maintenance key's owner token) are the
// project's.
const (
	maintenanceName = "maintenance"
	latestName      = "latest"
	fallbackName    = "fallback"
	floorName       = "compaction_floor"
)

func controlKey(clusterID, name string) string {
	id, ok := contract.NormalizeClusterID(clusterID)
	if !ok {
		return ""
	}
	return "/oplog/" + id + "/snapshot/" + name
}

// ControlPrefix is "/oplog/<cluster>/snapshot/", the prefix of the four
// control keys (and of the project's legacy import record).
func ControlPrefix(clusterID string) string { return controlKey(clusterID, "") }

// MaintenanceKey is the maintenance lease's key: whoever holds it (a key
// attached to its etcd lease) may publish, repair pointers, collect garbage
// and move the floor; its lease id goes into the ids of the snapshots it makes.
func MaintenanceKey(clusterID string) string { return controlKey(clusterID, maintenanceName) }

// LatestKey is the latest snapshot pointer's key.
func LatestKey(clusterID string) string { return controlKey(clusterID, latestName) }

// FallbackKey is the fallback snapshot pointer's key.
func FallbackKey(clusterID string) string { return controlKey(clusterID, fallbackName) }

// CompactionFloorKey is the compaction floor's key.
func CompactionFloorKey(clusterID string) string { return controlKey(clusterID, floorName) }

// Object names inside a snapshot's artifact prefix (metadata.cpp:257-271).
const (
	DescriptorObject = "descriptor.json"
	ManifestObject   = "manifest.json"
	SegmentsObject   = "segments.bin"
	objectsDir       = "objects/"
)

// ArtifactRoot is "<root>/batch-oplog/", under which every snapshot of
// root has its artifact prefix (trailing '/' of root removed; "" for an
// empty root): what a garbage collector lists.
func ArtifactRoot(root string) string {
	root = strings.TrimRight(root, "/")
	if root == "" {
		return ""
	}
	return root + "/batch-oplog/"
}

// ArtifactPrefix is "<root>/batch-oplog/<id>/" with every trailing '/' of
// root removed (nothing else of root is normalized), or "" when id does not
// parse or root is empty after that (metadata.cpp BuildArtifactPrefix).
// Every key below is a full object-store key, and the manifest and
// descriptor store them whole.
func ArtifactPrefix(root, id string) string {
	if _, err := ParseID(id); err != nil {
		return ""
	}
	root = strings.TrimRight(root, "/")
	if root == "" {
		return ""
	}
	return root + "/batch-oplog/" + id + "/"
}

// ArtifactKeyspace is the set of objects of one snapshot. The zero value
// names nothing.
type ArtifactKeyspace struct {
	prefix string
}

// Artifacts is the keyspace of snapshot id under root; its keys are all ""
// when ArtifactPrefix is.
func Artifacts(root, id string) ArtifactKeyspace {
	return ArtifactKeyspace{prefix: ArtifactPrefix(root, id)}
}

// Prefix is the artifact prefix (ends with '/').
func (a ArtifactKeyspace) Prefix() string { return a.prefix }

func (a ArtifactKeyspace) key(name string) string {
	if a.prefix == "" {
		return ""
	}
	return a.prefix + name
}

// Descriptor is the descriptor's key, the object a pointer leads to.
func (a ArtifactKeyspace) Descriptor() string { return a.key(DescriptorObject) }

// Manifest is the manifest's key.
func (a ArtifactKeyspace) Manifest() string { return a.key(ManifestObject) }

// Segments is the segment registry's key.
func (a ArtifactKeyspace) Segments() string { return a.key(SegmentsObject) }

// ObjectChunk is object chunk index's key: "objects/<index>.bin", the index
// in decimal without padding.
func (a ArtifactKeyspace) ObjectChunk(index uint64) string {
	return a.key(objectsDir + strconv.FormatUint(index, 10) + ".bin")
}

// ParseArtifactKey splits the key of any object of a snapshot into its
// root, snapshot id and name below the artifact prefix (descriptor.json,
// manifest.json, segments.bin, objects/<n>.bin, or anything else written
// there): the inverse of Artifacts(root, id) for a prefix. A record of
// object-store requests is tied to the attempt that made it this way.
func ParseArtifactKey(key string) (root string, id ID, name string, ok bool) {
	at := strings.LastIndex(key, "/batch-oplog/")
	if at < 0 {
		return "", ID{}, "", false
	}
	root, rest := key[:at], key[at+len("/batch-oplog/"):]
	idText, name, found := strings.Cut(rest, "/")
	if !found || name == "" {
		return "", ID{}, "", false
	}
	id, err := ParseID(idText)
	if err != nil || Artifacts(root, idText).Prefix()+name != key {
		return "", ID{}, "", false
	}
	return root, id, name, true
}

// ParseDescriptorKey splits a descriptor key into its root and snapshot id:
// the inverse of Artifacts(root, id).Descriptor(). A reader uses it to know
// which keys the snapshot's other objects must have.
func ParseDescriptorKey(key string) (root string, id ID, ok bool) {
	rest, found := strings.CutSuffix(key, "/"+DescriptorObject)
	if !found {
		return "", ID{}, false
	}
	slash := strings.LastIndex(rest, "/batch-oplog/")
	if slash < 0 {
		return "", ID{}, false
	}
	root, idText := rest[:slash], rest[slash+len("/batch-oplog/"):]
	id, err := ParseID(idText)
	if err != nil || Artifacts(root, idText).Descriptor() != key {
		return "", ID{}, false
	}
	return root, id, true
}
