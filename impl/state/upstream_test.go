package state

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"os"
	"testing"

	"github.com/oplogha/oplogha/impl/contract/batchlog"

	"github.com/stretchr/testify/require"
)

const vectorDir = "../contract/testdata/upstream/"

// upstreamFields is the JSON view payloads.jsonl gives of each payload
// (enums as integers, null for an empty compatible field).
type upstreamFields struct {
	ClientID   [2]uint64 `json:"client_id"`
	Size       uint64    `json:"size"`
	GroupID    *string   `json:"group_id"`
	DataType   *uint32   `json:"data_type"`
	HardPinned *bool     `json:"hard_pinned"`
	Replicas   []struct {
		ID      uint64 `json:"id"`
		Status  int    `json:"status"`
		Variant struct {
			Index  int `json:"index"`
			Buffer struct {
				Size     uint64 `json:"size_"`
				Address  uint64 `json:"buffer_address_"`
				Protocol string `json:"protocol_"`
				Endpoint string `json:"transport_endpoint_"`
			} `json:"buffer_descriptor"`
			FilePath    string    `json:"file_path"`
			ObjectSize  uint64    `json:"object_size"`
			ClientID    [2]uint64 `json:"client_id"`
			Endpoint    string    `json:"transport_endpoint"`
			Offset      uint64    `json:"offset"`
			AlignedSize uint64    `json:"aligned_size"`
			ShardIdx    int32     `json:"shard_idx"`
		} `json:"descriptor_variant"`
	} `json:"replicas"`
	SegmentName     string `json:"segment_name"`
	Endpoint        string `json:"transport_endpoint"`
	Capacity        uint64 `json:"capacity"`
	IsMemorySegment bool   `json:"is_memory_segment"`
	FilePath        string `json:"file_path"`
}

// object is what upstream's standby stores for the payload: the fields as
// ToStandbyMetadata leaves them (metadata_store.h:110-119), in this model.
func (f *upstreamFields) object() Object {
	o := Object{ClientID: UUID{f.ClientID[0], f.ClientID[1]}, Size: f.Size}
	if f.GroupID != nil {
		o.GroupID = *f.GroupID
	}
	if f.DataType != nil {
		o.DataType = *f.DataType
	}
	if f.HardPinned != nil {
		o.HardPinned = *f.HardPinned
	}
	statuses := []ReplicaStatus{ReplicaUndefined, ReplicaInitialized, ReplicaProcessing, ReplicaComplete, ReplicaRemoved, ReplicaFailed}
	for _, r := range f.Replicas {
		v := r.Variant
		rep := Replica{ID: r.ID, Status: statuses[r.Status]}
		switch v.Index {
		case 0, 1:
			rep.Kind = ReplicaMemory
			if v.Index == 1 {
				rep.Kind = ReplicaNoF
			}
			rep.Segment, rep.Offset, rep.Length, rep.Protocol = v.Buffer.Endpoint, v.Buffer.Address, v.Buffer.Size, v.Buffer.Protocol
		case 2:
			rep.Kind, rep.FilePath, rep.Length = ReplicaDisk, v.FilePath, v.ObjectSize
		case 3:
			rep.Kind, rep.ClientID, rep.Length, rep.Segment = ReplicaLocalDisk, UUID{v.ClientID[0], v.ClientID[1]}, v.ObjectSize, v.Endpoint
		case 4:
			rep.Kind, rep.FilePath, rep.Offset, rep.Length, rep.AlignedSize, rep.ShardIdx = ReplicaDFS, v.FilePath, v.Offset, v.ObjectSize, v.AlignedSize, v.ShardIdx
		}
		o.Replicas = append(o.Replicas, rep)
	}
	return o
}

func (f *upstreamFields) segment() Segment {
	s := Segment{Endpoint: f.Endpoint, Name: f.SegmentName, Capacity: f.Capacity, Kind: ReplicaDisk, FilePath: f.FilePath}
	if f.IsMemorySegment {
		s.Kind = ReplicaMemory
	}
	return s
}

func readJSONL(t *testing.T, name string, each func(line []byte)) {
	t.Helper()
	f, err := os.Open(vectorDir + name)
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		each(sc.Bytes())
	}
	require.NoError(t, sc.Err())
}

func b64(t *testing.T, s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	require.NoError(t, err)
	return b
}

// Every payload of payloads.jsonl, both wire variants, decodes to the
// object or segment its fields describe; what this package writes for that
// object or segment is upstream's NDEBUG bytes.
func TestUpstreamPayloads(t *testing.T) {
	n := 0
	readJSONL(t, "payloads.jsonl", func(line []byte) {
		var v struct {
			Name    string         `json:"name"`
			Op      OpType         `json:"op_type"`
			Type    string         `json:"type"`
			Fields  upstreamFields `json:"fields"`
			Bytes   string         `json:"bytes_b64"`
			Literal string         `json:"bytes_b64_type_literal"`
		}
		require.NoError(t, json.Unmarshal(line, &v))
		n++
		t.Run(v.Name, func(t *testing.T) {
			for _, raw := range []string{v.Bytes, v.Literal} {
				p := b64(t, raw)
				switch v.Op {
				case OpPutEnd:
					got, err := DecodeObject(p)
					if v.Fields.GroupID != nil && len(*v.Fields.GroupID) > MaxKeyBytes {
						require.ErrorIs(t, err, ErrMalformed, "this model bounds strings")
						return
					}
					require.NoError(t, err)
					require.Equal(t, v.Fields.object(), got)
				case OpSegmentMount, OpSegmentUpdate:
					got, err := DecodeSegment(v.Op, p)
					if len(v.Fields.SegmentName) > MaxKeyBytes {
						require.ErrorIs(t, err, ErrMalformed)
						return
					}
					require.NoError(t, err)
					require.Equal(t, v.Fields.segment(), got)
				case OpSegmentUnmount:
					got, err := DecodeUnmount(p)
					require.NoError(t, err)
					require.Equal(t, v.Fields.Endpoint, got)
				}
			}
			// The writer: upstream's writers always set every compatible
			// field, so only those payloads are ours to reproduce.
			want := b64(t, v.Bytes)
			switch v.Op {
			case OpPutEnd:
				if v.Fields.GroupID != nil && v.Fields.DataType != nil && v.Fields.HardPinned != nil && len(*v.Fields.GroupID) <= MaxKeyBytes {
					require.Equal(t, want, PutEnd("t", "k", v.Fields.object()).Payload)
				}
			case OpSegmentMount:
				require.Equal(t, want, MountSegment(v.Fields.segment()).Payload)
			case OpSegmentUpdate:
				require.Equal(t, want, UpdateSegment(v.Fields.segment()).Payload)
			case OpSegmentUnmount:
				require.Equal(t, want, UnmountSegment(v.Fields.Endpoint).Payload)
			}
		})
	})
	require.Equal(t, 25, n)
}

// upstreamStandby is upstream's OpLogApplier over its stores, as plain maps
// (apply.go lists the rules with their upstream lines): the state a test
// expects, built without this package's apply code.
type upstreamStandby struct {
	objects  map[ObjectKey]Object
	segments map[string]Segment
}

// TestUpstreamBatches feeds every batch upstream wrote (batches.jsonl),
// decoded by impl/contract, to a standby and checks that it builds what
// upstream's applier builds; where a vector's note says what upstream does,
// that is asserted by name.
func TestUpstreamBatches(t *testing.T) {
	objects := map[string]Object{}
	segments := map[string]Segment{}
	unmounts := map[string]string{}
	readJSONL(t, "payloads.jsonl", func(line []byte) {
		var v struct {
			Op      OpType         `json:"op_type"`
			Fields  upstreamFields `json:"fields"`
			Bytes   string         `json:"bytes_b64"`
			Literal string         `json:"bytes_b64_type_literal"`
		}
		require.NoError(t, json.Unmarshal(line, &v))
		for _, raw := range []string{v.Bytes, v.Literal} {
			switch v.Op {
			case OpPutEnd:
				objects[raw] = v.Fields.object()
			case OpSegmentMount, OpSegmentUpdate:
				segments[raw] = v.Fields.segment()
			case OpSegmentUnmount:
				unmounts[raw] = v.Fields.Endpoint
			}
		}
	})
	n := 0
	readJSONL(t, "batches.jsonl", func(line []byte) {
		var v struct {
			Name  string `json:"name"`
			Value string `json:"value_b64"`
		}
		require.NoError(t, json.Unmarshal(line, &v))
		n++
		t.Run(v.Name, func(t *testing.T) {
			cb, err := batchlog.DecodeBatch(b64(t, v.Value))
			require.NoError(t, err)
			b := Batch{ID: cb.ID, FirstSeq: cb.FirstSeq, LastSeq: cb.LastSeq}
			want := upstreamStandby{objects: map[ObjectKey]Object{}, segments: map[string]Segment{}}
			rejected := false
			for _, ce := range cb.Entries {
				e := Entry{Op: OpType(ce.Op), Tenant: ce.Tenant, Key: ce.Key, Payload: ce.Payload}
				b.Entries = append(b.Entries, e)
				raw := base64.StdEncoding.EncodeToString(e.Payload)
				k := ObjectKey{Tenant: e.Tenant, Key: e.Key}
				if k.Tenant == "" {
					k.Tenant = "default"
				}
				switch e.Op {
				case OpPutEnd:
					o, ok := objects[raw]
					if !ok { // empty or not a MetadataPayload: empty metadata, hard_pinned unset
						o = Object{HardPinnedUnset: true}
					}
					want.objects[k] = o
				case OpPutRevoke, OpRemove:
					delete(want.objects, k)
				case OpSegmentMount, OpSegmentUpdate:
					if s, ok := segments[raw]; ok {
						want.segments[s.Endpoint] = s
					}
				case OpSegmentUnmount:
					if ep, ok := unmounts[raw]; ok {
						delete(want.segments, ep)
					}
				default:
					rejected = true
				}
			}
			st, err := NewBuilder().Finish(Cursor{BatchID: b.ID - 1, Seq: b.FirstSeq - 1})
			require.NoError(t, err)
			err = st.Apply(b)
			if rejected {
				require.ErrorIs(t, err, ErrUnknownOp)
				nObj, nSeg := st.Len()
				require.Zero(t, nObj+nSeg, "a rejected batch applies nothing")
				return
			}
			require.NoError(t, err)
			got := upstreamStandby{objects: map[ObjectKey]Object{}, segments: map[string]Segment{}}
			st.Objects(func(k ObjectKey, o Object) bool { got.objects[k] = o; return true })
			st.Segments(func(s Segment) bool { got.segments[s.Endpoint] = s; return true })
			require.Equal(t, want, got)
			require.Equal(t, b.Cursor(), st.Cursor())

			switch v.Name {
			case "put_end_single", "put_end_single__type_literal_payload":
				o, ok := st.Object("default", "obj-1")
				require.True(t, ok)
				require.Equal(t, UUID{1234605616436508552, 11072869122414935808}, o.ClientID)
				require.Len(t, o.Replicas, 1)
			case "put_end_empty_payload":
				o, ok := st.Object("default", "legacy")
				require.True(t, ok, "OpLogApplier stores empty metadata")
				require.Equal(t, Object{HardPinnedUnset: true}, o, "hard_pinned unset (oplog_applier.cpp:128-141)")
			case "remove", "put_revoke", "key_empty":
				n, _ := st.Len()
				require.Zero(t, n, "removing a missing key is a no-op")
			case "segment_mount", "segment_mount__type_literal_payload":
				_, ok := st.Segment("10.0.0.1:12345")
				require.True(t, ok)
			case "segment_remount_keyed_by_name":
				_, ok := st.Segment("10.0.0.1:12345")
				require.True(t, ok, "the payload's endpoint names the segment")
				_, ok = st.Segment("seg-a")
				require.False(t, ok)
			case "segment_update", "segment_update__type_literal_payload":
				_, ok := st.Segment("10.0.0.1:12345")
				require.True(t, ok, "an update of an unknown segment registers it")
			case "tenant_empty_string":
				_, ok := st.Object("default", "k")
				require.True(t, ok, `tenant "" is "default"`)
			}
		})
	})
	require.Equal(t, 43, n)
}
