package state

// Footprint is what the state's content costs, kept as objects and
// segments come and go (no walk of the state to learn it): the snapshot
// admission's resource estimate (RFC "Encoding and Resource Bounds") is
// made from it. Objects differ in size by orders of magnitude (a key, a
// group id and every replica's strings may each hold up to MaxKeyBytes,
// and an object may hold many replicas), so an estimate per object count
// is not an estimate.
type Footprint struct {
	Objects  int
	Segments int
	Replicas int
	// EncodedBytes bounds from above the bytes of the objects' and
	// segments' snapshot encoding (struct_pack, every string's and
	// container's length prefix counted at its widest, 8 bytes), without
	// the per-object headers of segments.bin and the chunks.
	EncodedBytes int64
	// StringBytes is the bytes of every string the objects and segments
	// hold: what a decoded copy allocates beside its fixed-size records.
	StringBytes int64
}

// Upper bounds of the fixed parts of one encoded record (struct_pack
// wire sizes, batchsnap and metadata): an object entry's tenant, key and
// group lengths, client id, size, replica count, data type and
// hard_pinned (3×8 + 24 + 8 + 3 = 59); one replica's id, variant index,
// status and its alternative's numbers and string lengths (8 + 1 + 4 +
// at most 40 + 3×8 = 77); a segment's (SegmentInfo: endpoint, name and
// path lengths, capacity, kind: 3×8 + 8 + 8 = 40). Their sum over a state
// is tested against the encoder (TestFootprintBoundsTheEncoding).
const (
	objectRecordBound  = 64
	replicaRecordBound = 80
	segmentRecordBound = 48
)

// Footprint is the content's cost as it stands.
func (t *tables) Footprint() Footprint { return t.fp }

func (fp *Footprint) addObject(k ObjectKey, o *Object, sign int) {
	strs := int64(len(k.Tenant) + len(k.Key) + len(o.GroupID))
	for i := range o.Replicas {
		r := &o.Replicas[i]
		strs += int64(len(r.Segment) + len(r.Protocol) + len(r.FilePath))
	}
	s := int64(sign)
	fp.Objects += sign
	fp.Replicas += sign * len(o.Replicas)
	fp.StringBytes += s * strs
	fp.EncodedBytes += s * (objectRecordBound + replicaRecordBound*int64(len(o.Replicas)) + strs)
}

func (fp *Footprint) addSegment(g *Segment, sign int) {
	strs := int64(len(g.Endpoint) + len(g.Name) + len(g.FilePath))
	s := int64(sign)
	fp.Segments += sign
	fp.StringBytes += s * strs
	fp.EncodedBytes += s * (segmentRecordBound + strs)
}
