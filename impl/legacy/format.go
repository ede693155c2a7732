package legacy

import (
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
	"regexp"
	"time"
)

// Object names inside a snapshot directory, and the catalog marker.
const (
	LatestObject     = "latest.txt"
	DescriptorObject = "descriptor.txt"
	ManifestObject   = "manifest.txt"
	SegmentsObject   = "segments"
	MetadataObject   = "metadata"
)

// The manifest's serializer type and version: "messagepack|1.0.0|<id>".
const (
	SerializerType    = "messagepack"
	SerializerVersion = "1.0.0"
)

// Versions of the two msgpack documents this reader understands.
const (
	MetadataVersion = 1
	SegmentsVersion = 1
)

// Metadata is the msgpack document in {id}/metadata: a table of shards, each
// a zstd frame holding a msgpack array of Rows. Struct fields encode as a map
// keyed by the msgpack tags, in declaration order.
type Metadata struct {
	Version       int         `msgpack:"version"`
	ShardCount    int         `msgpack:"shard_count"`
	ObjectCount   uint64      `msgpack:"object_count"`
	ReplicaNextID uint64      `msgpack:"replica_next_id"`
	Shards        List[Shard] `msgpack:"shards"`
}

// Shard is one metadata shard: its index, its row count and the zstd frame
// of its rows.
type Shard struct {
	Index int    `msgpack:"index"`
	Rows  uint64 `msgpack:"rows"`
	Zstd  []byte `msgpack:"zstd"`
}

// Row is one object: the msgpack array [tenant, key, object].
type Row struct {
	_msgpack struct{} `msgpack:",as_array"` //nolint:unused // msgpack encoding directive
	Tenant   string
	Key      string
	Object   Object
}

// Object is an object's metadata as the old master persisted it.
type Object struct {
	ClientID   string        `msgpack:"client_id"`
	Size       uint64        `msgpack:"size"`
	Replicas   List[Replica] `msgpack:"replicas"`
	GroupID    string        `msgpack:"group_id"`
	DataType   uint32        `msgpack:"data_type"`
	HardPinned bool          `msgpack:"hard_pinned"`
}

// Replica is one replica descriptor with its persisted lifecycle status.
type Replica struct {
	ID      uint64 `msgpack:"id"`
	Kind    string `msgpack:"kind"`
	Segment string `msgpack:"segment"`
	Offset  uint64 `msgpack:"offset"`
	Length  uint64 `msgpack:"length"`
	Status  string `msgpack:"status"`
}

// Segments is the msgpack document in {id}/segments: the segment registry.
type Segments struct {
	Version  int           `msgpack:"version"`
	Segments List[Segment] `msgpack:"segments"`
}

// Segment is one registry entry.
type Segment struct {
	Endpoint string `msgpack:"endpoint"`
	Name     string `msgpack:"name"`
	Capacity uint64 `msgpack:"capacity"`
	Kind     string `msgpack:"kind"`
	FilePath string `msgpack:"file_path"`
}

// List is a msgpack array decoded one element at a time, so that memory
// grows with the elements actually present, not with the length a header
// claims: a 24-byte document announcing 2^32 elements fails at its end of
// data instead of allocating them (msgpack/v5 sizes typed slices from the
// header whatever its allocation limit says).
type List[T any] []T

// DecodeMsgpack implements msgpack.CustomDecoder.
func (l *List[T]) DecodeMsgpack(dec *msgpack.Decoder) error {
	n, err := dec.DecodeArrayLen()
	if err != nil {
		return err
	}
	if n < 0 {
		*l = nil
		return nil
	}
	out := make([]T, 0, min(n, 1024))
	for i := 0; i < n; i++ {
		var v T
		if err := dec.Decode(&v); err != nil {
			return err
		}
		out = append(out, v)
	}
	*l = out
	return nil
}

var idPattern = regexp.MustCompile(`^[0-9]{8}_[0-9]{6}_[0-9]{3}$`)

// CheckID validates a legacy snapshot id, YYYYMMDD_HHMMSS_mmm, including
// that it names a real calendar time.
func CheckID(id string) error {
	if !idPattern.MatchString(id) {
		return fmt.Errorf("%w: %q: want YYYYMMDD_HHMMSS_mmm", ErrID, id)
	}
	if _, err := time.Parse("20060102_150405", id[:15]); err != nil {
		return fmt.Errorf("%w: %q: %v", ErrID, id, err)
	}
	return nil
}

// IDAt renders the id of a snapshot taken at t (fixtures).
func IDAt(t time.Time) string {
	t = t.UTC()
	return fmt.Sprintf("%s_%03d", t.Format("20060102_150405"), t.Nanosecond()/int(time.Millisecond))
}

// ManifestFor is the manifest text of snapshot id.
func ManifestFor(id string) string {
	return SerializerType + "|" + SerializerVersion + "|" + id
}
