package model

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"os"
	"testing"

	"github.com/oplogha/oplogha/impl/contract/metadata"

	"github.com/oplogha/oplogha/impl/contract/batchlog"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/impl/contract"
)

// The upstream vectors (impl/contract/testdata/upstream/README.md): values
// upstream's own compiled code wrote, with the fields each payload holds as
// upstream's struct_pack read them back.
const vectorDir = "../../impl/contract/testdata/upstream/"

// upstreamFields is payloads.jsonl's JSON view of a payload (enums as
// integers, null for an empty compatible field).
type upstreamFields struct {
	ClientID   [2]uint64 `json:"client_id"`
	Size       uint64    `json:"size"`
	GroupID    *string   `json:"group_id"`
	DataType   *uint8    `json:"data_type"`
	HardPinned *bool     `json:"hard_pinned"`
	Replicas   []struct {
		ID      uint64 `json:"id"`
		Status  int32  `json:"status"`
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

// standby is what upstream's standby stores for the payload:
// ToStandbyMetadata of the fields upstream decoded (metadata_store.h:110-119),
// written out here field by field.
func (f *upstreamFields) standby() Object {
	o := Object{ClientID: metadata.UUID{First: f.ClientID[0], Second: f.ClientID[1]}, Size: f.Size, HardPinned: PinFalse}
	if f.GroupID != nil {
		o.GroupID = *f.GroupID
	}
	if f.DataType != nil {
		o.DataType = *f.DataType
	}
	if f.HardPinned != nil && *f.HardPinned {
		o.HardPinned = PinTrue
	}
	for _, r := range f.Replicas {
		v := r.Variant
		rep := Replica{ID: r.ID, Status: metadata.ReplicaStatus(r.Status), Kind: ReplicaKind(v.Index)}
		switch v.Index {
		case 0, 1:
			rep.Endpoint, rep.Offset, rep.Length, rep.Protocol = v.Buffer.Endpoint, v.Buffer.Address, v.Buffer.Size, v.Buffer.Protocol
		case 2:
			rep.FilePath, rep.Length = v.FilePath, v.ObjectSize
		case 3:
			rep.ClientID, rep.Length, rep.Endpoint = metadata.UUID{First: v.ClientID[0], Second: v.ClientID[1]}, v.ObjectSize, v.Endpoint
		case 4:
			rep.FilePath, rep.Offset, rep.Length, rep.AlignedSize, rep.ShardIdx = v.FilePath, v.Offset, v.ObjectSize, v.AlignedSize, v.ShardIdx
		}
		o.Replicas = append(o.Replicas, rep)
	}
	return o
}

func (f *upstreamFields) segment() Segment {
	return Segment{Name: f.SegmentName, Endpoint: f.Endpoint, Capacity: f.Capacity, Memory: f.IsMemorySegment, FilePath: f.FilePath}
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

// payloadVector is one line of payloads.jsonl.
type payloadVector struct {
	Name    string          `json:"name"`
	Op      batchlog.OpType `json:"op_type"`
	Fields  upstreamFields  `json:"fields"`
	Bytes   string          `json:"bytes_b64"`
	Literal string          `json:"bytes_b64_type_literal"`
}

// one is a batch of one entry right after cursor c.
func one(c contract.Cursor, e batchlog.Entry) batchlog.Batch {
	return batchlog.Batch{ID: c.BatchID + 1, FirstSeq: c.Seq + 1, LastSeq: c.Seq + 1, Entries: []batchlog.Entry{e}}
}

// Every payload upstream wrote, in both wire variants, applied in an entry
// of its op: the object or segment upstream's standby holds for it.
func TestUpstreamPayloads(t *testing.T) {
	n := 0
	readJSONL(t, "payloads.jsonl", func(line []byte) {
		var v payloadVector
		require.NoError(t, json.Unmarshal(line, &v))
		n++
		t.Run(v.Name, func(t *testing.T) {
			for _, raw := range []string{v.Bytes, v.Literal} {
				s := New()
				switch v.Op {
				case batchlog.OpPutEnd:
					require.NoError(t, s.Apply(one(s.Cursor(), batchlog.Entry{Op: v.Op, Tenant: "t", Key: "k", Payload: b64(t, raw)})))
					got, ok := s.Object("t", "k")
					require.True(t, ok)
					require.Equal(t, v.Fields.standby(), got)
				case batchlog.OpSegmentMount, batchlog.OpSegmentUpdate:
					require.NoError(t, s.Apply(one(s.Cursor(), batchlog.Entry{Op: v.Op, Tenant: "default", Key: "ignored", Payload: b64(t, raw)})))
					got, ok := s.Segment(v.Fields.Endpoint)
					require.True(t, ok)
					require.Equal(t, v.Fields.segment(), got)
				case batchlog.OpSegmentUnmount:
					mount := metadata.EncodeSegmentMountOp(metadata.SegmentMountOp{SegmentName: "s", TransportEndpoint: v.Fields.Endpoint, Capacity: 1})
					require.NoError(t, s.Apply(one(s.Cursor(), batchlog.Entry{Op: batchlog.OpSegmentMount, Key: "x", Payload: mount})))
					_, ok := s.Segment(v.Fields.Endpoint)
					require.True(t, ok)
					require.NoError(t, s.Apply(one(s.Cursor(), batchlog.Entry{Op: v.Op, Key: "y", Payload: b64(t, raw)})))
					_, ok = s.Segment(v.Fields.Endpoint)
					require.False(t, ok, "the payload's endpoint is unmounted")
				default:
					t.Fatalf("op %d", v.Op)
				}
			}
		})
	})
	require.Equal(t, 25, n)
}

// Every batch upstream wrote (batches.jsonl), decoded by impl/contract and
// applied right after its predecessor's cursor: the standby ends with what
// upstream's applier builds for it, entry by entry, and where a vector's
// note says what upstream does, that is asserted by name.
func TestUpstreamBatches(t *testing.T) {
	objects := map[string]Object{}
	segments := map[string]Segment{}
	unmounts := map[string]string{}
	readJSONL(t, "payloads.jsonl", func(line []byte) {
		var v payloadVector
		require.NoError(t, json.Unmarshal(line, &v))
		for _, raw := range []string{v.Bytes, v.Literal} {
			switch v.Op {
			case batchlog.OpPutEnd:
				objects[raw] = v.Fields.standby()
			case batchlog.OpSegmentMount, batchlog.OpSegmentUpdate:
				segments[raw] = v.Fields.segment()
			case batchlog.OpSegmentUnmount:
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
			b, err := batchlog.DecodeBatch(b64(t, v.Value))
			require.NoError(t, err)
			// upstream's standby, as plain maps: the rules of apply.go
			// written out once more, per entry.
			wantObjects := map[ObjectKey]Object{}
			wantSegments := map[string]Segment{}
			rejected := -1
			for i, e := range b.Entries {
				raw := base64.StdEncoding.EncodeToString(e.Payload)
				tenant := e.Tenant
				if tenant == "" {
					tenant = "default"
				}
				k := ObjectKey{Tenant: tenant, Key: e.Key}
				switch e.Op {
				case batchlog.OpPutEnd:
					o, ok := objects[raw]
					if !ok {
						o = Object{HardPinned: PinUnset} // empty, or not a MetadataPayload: a default StandbyObjectMetadata
					}
					wantObjects[k] = o
				case batchlog.OpPutRevoke, batchlog.OpRemove:
					delete(wantObjects, k)
				case batchlog.OpSegmentMount, batchlog.OpSegmentUpdate:
					if s, ok := segments[raw]; ok {
						wantSegments[s.Endpoint] = s
					}
				case batchlog.OpSegmentUnmount:
					if ep, ok := unmounts[raw]; ok {
						delete(wantSegments, ep)
					}
				default:
					if rejected < 0 {
						rejected = i
					}
				}
			}
			start := contract.Cursor{BatchID: b.ID - 1, Seq: b.FirstSeq - 1}
			st, err := FromSnapshot(start, nil, nil)
			require.NoError(t, err)
			err = st.Apply(b)
			if rejected >= 0 {
				var re *RejectedError
				require.ErrorAs(t, err, &re)
				require.ErrorIs(t, err, ErrRejected)
				require.Equal(t, rejected, re.Index)
				require.Equal(t, batchlog.OpLeaseRenew, re.Op)
				nObj, nSeg := st.Len()
				require.Zero(t, nObj+nSeg, "the model applies nothing of a refused batch")
				require.Equal(t, start, st.Cursor())
				return
			}
			require.NoError(t, err)
			gotObjects := map[ObjectKey]Object{}
			for _, k := range st.Keys() {
				gotObjects[k], _ = st.Object(k.Tenant, k.Key)
			}
			gotSegments := map[string]Segment{}
			for _, ep := range st.Endpoints() {
				gotSegments[ep], _ = st.Segment(ep)
			}
			require.Equal(t, wantObjects, gotObjects)
			require.Equal(t, wantSegments, gotSegments)
			require.Equal(t, contract.Cursor{BatchID: b.ID, Seq: b.LastSeq}, st.Cursor())

			switch v.Name {
			case "put_end_single", "put_end_single__type_literal_payload":
				o, ok := st.Object("default", "obj-1")
				require.True(t, ok)
				require.Equal(t, metadata.UUID{First: 1234605616436508552, Second: 11072869122414935808}, o.ClientID)
				require.Len(t, o.Replicas, 1)
				require.Equal(t, PinFalse, o.HardPinned, "a decoded payload sets hard_pinned")
			case "put_end_empty_payload":
				o, ok := st.Object("default", "legacy")
				require.True(t, ok, "OpLogApplier stores empty metadata")
				require.Equal(t, Object{}, o)
				require.Equal(t, PinUnset, o.HardPinned, "a default StandbyObjectMetadata leaves hard_pinned unset")
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
				_, ok = st.Object("", "k")
				require.True(t, ok, `and is found as ""`)
			case "payload_all_byte_values":
				o, ok := st.Object("default", "bin")
				require.True(t, ok)
				require.Equal(t, PinUnset, o.HardPinned, "a payload that is not a MetadataPayload stores empty metadata")
			}
		})
	})
	require.Equal(t, 43, n)
}
