package model

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"strconv"

	"github.com/oplogha/oplogha/impl/contract/metadata"
)

// DigestVersion is the tag the state digest starts with.
const DigestVersion = "oplogha-state-v2"

// Digest is the contract's state digest, the "digest" of a master's
// GET /v1/state (impl/master/CONTRACT.md: over sorted content, independent
// of the cursor and of how batches were grouped), written here from its
// definition so that a node's digest can be checked against the model's:
//
//	"sha256:" + hex(SHA-256(str(DigestVersion)
//	    + for each segment, by endpoint (bytewise):
//	        str("S") str(endpoint) str(name) num(capacity) str(kind) str(file_path)
//	    + for each object, by tenant then key (bytewise, tenant "" as "default"):
//	        str("O") str(tenant) str(key) num(client_id.first) num(client_id.second)
//	        num(size) str(group_id) num(data_type) num(hard_pinned: true 1, false 0, unset 2)
//	        num(#replicas)
//	        + for each replica, in order:
//	            num(id) str(kind) str(segment) num(offset) num(length) str(status)
//	            str(protocol) str(file_path) num(client_id.first) num(client_id.second)
//	            num(aligned_size) num(uint32(shard_idx))))
//
// where num(v) is v as an unsigned varint (encoding/binary's Uvarint) and
// str(s) is num(len(s)) followed by the bytes of s. A segment's kind is
// "memory" or "disk"; a replica's kind is ReplicaKind.String, its status
// the name of upstream's ReplicaStatus (undefined, initialized,
// processing, complete, removed, failed) and its fields the flattened ones
// of Replica. hard_pinned hashes its three states apart (unset is 2, so a
// state where nothing is unset digests as a two-state digest would). A
// status outside 0..5 has no name in the contract; the model hashes its
// decimal value, which no node can match.
func (s *State) Digest() string {
	w := digestWriter{h: sha256.New()}
	w.str(DigestVersion)
	for _, ep := range s.Endpoints() {
		seg := s.segments[ep]
		w.str("S")
		w.str(seg.Endpoint)
		w.str(seg.Name)
		w.num(seg.Capacity)
		w.str(seg.Kind())
		w.str(seg.FilePath)
	}
	for _, k := range s.Keys() {
		o := s.objects[k]
		w.str("O")
		w.str(k.Tenant)
		w.str(k.Key)
		w.num(o.ClientID.First)
		w.num(o.ClientID.Second)
		w.num(o.Size)
		w.str(o.GroupID)
		w.num(uint64(o.DataType))
		switch o.HardPinned {
		case PinTrue:
			w.num(1)
		case PinUnset:
			w.num(2)
		default:
			w.num(0)
		}
		w.num(uint64(len(o.Replicas)))
		for _, r := range o.Replicas {
			w.num(r.ID)
			w.str(r.Kind.String())
			w.str(r.Endpoint)
			w.num(r.Offset)
			w.num(r.Length)
			w.str(StatusName(r.Status))
			w.str(r.Protocol)
			w.str(r.FilePath)
			w.num(r.ClientID.First)
			w.num(r.ClientID.Second)
			w.num(r.AlignedSize)
			w.num(uint64(uint32(r.ShardIdx)))
		}
	}
	return "sha256:" + hex.EncodeToString(w.h.Sum(nil))
}

var statusNames = [...]string{"undefined", "initialized", "processing", "complete", "removed", "failed"}

// StatusName is a replica status as the master's contract names it
// (upstream's ReplicaStatus, replica.h, values 0..5); another value is its
// decimal number.
func StatusName(st metadata.ReplicaStatus) string {
	if st >= 0 && int(st) < len(statusNames) {
		return statusNames[st]
	}
	return strconv.Itoa(int(st))
}

type digestWriter struct {
	h   hash.Hash
	buf [binary.MaxVarintLen64]byte
}

func (w *digestWriter) num(v uint64) {
	n := binary.PutUvarint(w.buf[:], v)
	w.h.Write(w.buf[:n])
}

func (w *digestWriter) str(s string) {
	w.num(uint64(len(s)))
	w.h.Write([]byte(s))
}
