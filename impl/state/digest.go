package state

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
)

// Digest is a stable hash over a state's sorted content (segments, then
// objects), excluding the cursor. Two states with the same content have the
// same digest whatever order of batches built them.
type Digest string

// Digest computes the content digest; it is O(n) in the state's size.
func (t *tables) Digest() Digest {
	h := digestWriter{h: sha256.New()}
	h.str("oplogha-state-v2")
	t.segments.Scan(func(it segmentItem) bool {
		s := it.s
		h.str("S")
		h.str(s.Endpoint)
		h.str(s.Name)
		h.num(s.Capacity)
		h.str(string(s.Kind))
		h.str(s.FilePath)
		return true
	})
	t.objects.Scan(func(it objectItem) bool {
		o := it.o
		h.str("O")
		h.str(it.k.Tenant)
		h.str(it.k.Key)
		h.num(o.ClientID.First)
		h.num(o.ClientID.Second)
		h.num(o.Size)
		h.str(o.GroupID)
		h.num(uint64(o.DataType))
		switch {
		case o.HardPinned:
			h.num(1)
		case o.HardPinnedUnset:
			h.num(2)
		default:
			h.num(0)
		}
		h.num(uint64(len(o.Replicas)))
		for _, r := range o.Replicas {
			h.num(r.ID)
			h.str(string(r.Kind))
			h.str(r.Segment)
			h.num(r.Offset)
			h.num(r.Length)
			h.str(string(r.Status))
			h.str(r.Protocol)
			h.str(r.FilePath)
			h.num(r.ClientID.First)
			h.num(r.ClientID.Second)
			h.num(r.AlignedSize)
			h.num(uint64(uint32(r.ShardIdx)))
		}
		return true
	})
	return Digest("sha256:" + hex.EncodeToString(h.h.Sum(nil)))
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
