package cororpc

import (
	"fmt"

	"github.com/oplogha/oplogha/impl/contract"
	"github.com/oplogha/oplogha/impl/contract/metadata"
	"github.com/oplogha/oplogha/impl/contract/structpack"
)

// The parts of the C++ types the handlers use, composed as C++ composes
// them: a struct (or a std::tuple of arguments) is its fields in order, its
// literal theirs between the struct marks.

// field is one field of a struct S: a part and where it lives in S.
type field[S any] struct {
	lit     []byte
	measure func(s *S, z *structpack.Size) error
	write   func(s *S, w *structpack.Writer)
	read    func(s *S, r *structpack.Reader)
}

func fieldOf[S, F any](p part[F], get func(*S) *F) field[S] {
	return field[S]{
		lit:     p.lit,
		measure: func(s *S, z *structpack.Size) error { return p.measure(get(s), z) },
		write:   func(s *S, w *structpack.Writer) { p.write(get(s), w) },
		read:    func(s *S, r *structpack.Reader) { p.read(get(s), r) },
	}
}

// structOf is the part of a struct, or of a std::tuple, of fields.
func structOf[S any](fields ...field[S]) part[S] {
	lits := make([][]byte, len(fields))
	for i, f := range fields {
		lits[i] = f.lit
	}
	return part[S]{
		lit: structpack.LitStruct(lits...),
		measure: func(s *S, z *structpack.Size) error {
			for _, f := range fields {
				if err := f.measure(s, z); err != nil {
					return err
				}
			}
			return nil
		},
		write: func(s *S, w *structpack.Writer) {
			for _, f := range fields {
				f.write(s, w)
			}
		},
		read: func(s *S, r *structpack.Reader) {
			for _, f := range fields {
				f.read(s, r)
			}
		},
	}
}

// itself is the part of an argument list of one argument: coro_rpc packs
// a single argument as itself, not as a one-element tuple.
func itself[S, F any](p part[F], get func(*S) *F) part[S] {
	f := fieldOf(p, get)
	return part[S]{lit: f.lit, measure: f.measure, write: f.write, read: f.read}
}

// vectorOf is the part of a std::vector of elem; minElem is the fewest
// bytes one element takes, which bounds the length a reader believes.
func vectorOf[T any](elem part[T], minElem uint64) part[[]T] {
	return part[[]T]{
		lit: structpack.LitVector(elem.lit),
		measure: func(v *[]T, z *structpack.Size) error {
			z.Container(len(*v))
			for i := range *v {
				if err := elem.measure(&(*v)[i], z); err != nil {
					return fmt.Errorf("element %d: %w", i, err)
				}
			}
			return nil
		},
		write: func(v *[]T, w *structpack.Writer) {
			w.Length(len(*v))
			for i := range *v {
				elem.write(&(*v)[i], w)
			}
		},
		read: func(v *[]T, r *structpack.Reader) {
			n := r.Length(minElem)
			if n == 0 || r.Err() != nil {
				*v = nil
				return
			}
			*v = make([]T, n)
			for i := range *v {
				elem.read(&(*v)[i], r)
				if r.Err() != nil {
					return
				}
			}
		},
	}
}

// optionalOf is the part of a std::optional of elem: a has-value byte,
// then the value. nil is std::nullopt.
func optionalOf[T any](elem part[T]) part[*T] {
	return part[*T]{
		lit: structpack.LitOptional(elem.lit),
		measure: func(v **T, z *structpack.Size) error {
			z.Fixed(1)
			if *v == nil {
				return nil
			}
			return elem.measure(*v, z)
		},
		write: func(v **T, w *structpack.Writer) {
			w.Bool(*v != nil)
			if *v != nil {
				elem.write(*v, w)
			}
		},
		read: func(v **T, r *structpack.Reader) {
			*v = nil
			if r.Bool() {
				*v = new(T)
				elem.read(*v, r)
			}
		},
	}
}

// fixed is the part of a fixed-size scalar of size bytes.
func fixed[T any](lit []byte, size int, write func(v T, w *structpack.Writer), read func(r *structpack.Reader) T) part[T] {
	return part[T]{
		lit:     lit,
		measure: func(_ *T, z *structpack.Size) error { z.Fixed(size); return nil },
		write:   func(v *T, w *structpack.Writer) { write(*v, w) },
		read:    func(v *T, r *structpack.Reader) { *v = read(r) },
	}
}

var (
	u64Part  = fixed(structpack.LitUint64, 8, func(v uint64, w *structpack.Writer) { w.U64(v) }, (*structpack.Reader).U64)
	i64Part  = fixed(structpack.LitInt64, 8, func(v int64, w *structpack.Writer) { w.I64(v) }, (*structpack.Reader).I64)
	u8Part   = fixed(structpack.LitUint8, 1, func(v uint8, w *structpack.Writer) { w.U8(v) }, (*structpack.Reader).U8)
	boolPart = fixed(structpack.LitBool, 1, func(v bool, w *structpack.Writer) { w.Bool(v) }, (*structpack.Reader).Bool)
	// UUID: std::pair<uint64_t, uint64_t> is trivially copyable, its 16
	// raw bytes (and its literal carries its alignment).
	uuidPart = fixed(structpack.LitPair64, 16,
		func(v UUID, w *structpack.Writer) { w.U64(v.First); w.U64(v.Second) },
		func(r *structpack.Reader) UUID { return UUID{First: r.U64(), Second: r.U64()} })
	// Enums are packed at their underlying type's width, and their
	// literal is that type's.
	clientStatusPart = fixed(structpack.LitInt32, 4, func(v ClientStatus, w *structpack.Writer) { w.I32(int32(v)) },
		func(r *structpack.Reader) ClientStatus { return ClientStatus(r.I32()) })
	replicaTypePart = fixed(structpack.LitInt32, 4, func(v ReplicaType, w *structpack.Writer) { w.I32(int32(v)) },
		func(r *structpack.Reader) ReplicaType { return ReplicaType(r.I32()) })
	softPinActionPart = fixed(structpack.LitUint8, 1, func(v SoftPinAction, w *structpack.Writer) { w.U8(uint8(v)) },
		func(r *structpack.Reader) SoftPinAction { return SoftPinAction(r.U8()) })
	dataTypePart = fixed(structpack.LitUint8, 1, func(v ObjectDataType, w *structpack.Writer) { w.U8(uint8(v)) },
		func(r *structpack.Reader) ObjectDataType { return ObjectDataType(r.U8()) })

	voidPart = part[Void]{
		lit:     structpack.LitVoid,
		measure: func(*Void, *structpack.Size) error { return nil },
		write:   func(*Void, *structpack.Writer) {},
		read:    func(*Void, *structpack.Reader) {},
	}
	stringPart = part[string]{
		lit:     structpack.LitString,
		measure: func(v *string, z *structpack.Size) error { z.Str(*v); return nil },
		write:   func(v *string, w *structpack.Writer) { w.Str(*v) },
		read:    func(v *string, r *structpack.Reader) { *v = r.Str() },
	}
	stringsPart = vectorOf(stringPart, 1)

	segmentPart = structOf(
		fieldOf(uuidPart, func(s *Segment) *UUID { return &s.ID }),
		fieldOf(stringPart, func(s *Segment) *string { return &s.Name }),
		fieldOf(u64Part, func(s *Segment) *uint64 { return &s.Base }),
		fieldOf(u64Part, func(s *Segment) *uint64 { return &s.Size }),
		fieldOf(stringPart, func(s *Segment) *string { return &s.TEEndpoint }),
		fieldOf(stringPart, func(s *Segment) *string { return &s.Protocol }),
		fieldOf(stringPart, func(s *Segment) *string { return &s.HostID }),
	)
	// minSegmentBytes: id, base, size and four empty strings of one-byte
	// lengths.
	minSegmentBytes uint64 = 16 + 8 + 8 + 4

	replicateConfigPart = structOf(
		fieldOf(u64Part, func(c *ReplicateConfig) *uint64 { return &c.ReplicaNum }),
		fieldOf(u64Part, func(c *ReplicateConfig) *uint64 { return &c.NoFReplicaNum }),
		fieldOf(u64Part, func(c *ReplicateConfig) *uint64 { return &c.DFSReplicaNum }),
		fieldOf(softPinActionPart, func(c *ReplicateConfig) *SoftPinAction { return &c.SoftPinAction }),
		fieldOf(optionalOf(u64Part), func(c *ReplicateConfig) **uint64 { return &c.SoftPinTTLMs }),
		fieldOf(boolPart, func(c *ReplicateConfig) *bool { return &c.WithHardPin }),
		fieldOf(stringsPart, func(c *ReplicateConfig) *[]string { return &c.PreferredSegments }),
		fieldOf(stringPart, func(c *ReplicateConfig) *string { return &c.PreferredSegment }),
		fieldOf(stringsPart, func(c *ReplicateConfig) *[]string { return &c.PreferredNoFSegments }),
		fieldOf(boolPart, func(c *ReplicateConfig) *bool { return &c.PreferAllocInSameNode }),
		fieldOf(dataTypePart, func(c *ReplicateConfig) *ObjectDataType { return &c.DataType }),
		fieldOf(stringPart, func(c *ReplicateConfig) *string { return &c.HostID }),
		fieldOf(optionalOf(stringsPart), func(c *ReplicateConfig) **[]string { return &c.GroupIDs }),
	)

	objectMetaPart = structOf(
		fieldOf(stringPart, func(m *ObjectMeta) *string { return &m.Key }),
		fieldOf(optionalOf(u64Part), func(m *ObjectMeta) **uint64 { return &m.ObjectChecksum }),
	)

	pingResponsePart = structOf(
		fieldOf(i64Part, func(p *PingResponse) *int64 { return &p.ViewVersionID }),
		fieldOf(clientStatusPart, func(p *PingResponse) *ClientStatus { return &p.ClientStatus }),
	)

	// The replica descriptor is impl/contract/metadata's, whose
	// ReplicaFields reads and writes it in place.
	replicaPart = part[ReplicaDescriptor]{
		lit: metadata.LitReplicaDescriptor,
		measure: func(v *ReplicaDescriptor, z *structpack.Size) error {
			f := metadata.FieldsOf(*v)
			if !f.Valid() {
				return contract.NewError(contract.ErrMalformed, fmt.Sprintf("replica %d has no descriptor variant", v.ID))
			}
			f.Measure(z)
			return nil
		},
		write: func(v *ReplicaDescriptor, w *structpack.Writer) {
			f := metadata.FieldsOf(*v)
			f.Write(w)
		},
		read: func(v *ReplicaDescriptor, r *structpack.Reader) {
			var f metadata.ReplicaFields
			f.Read(r)
			*v = ReplicaDescriptor{ID: f.ID, Variant: f.Variant(), Status: f.Status}
		},
	}
	replicasPart = vectorOf(replicaPart, metadata.MinReplicaBytes)

	getReplicaListResponsePart = structOf(
		fieldOf(replicasPart, func(g *GetReplicaListResponse) *[]ReplicaDescriptor { return &g.Replicas }),
		fieldOf(u64Part, func(g *GetReplicaListResponse) *uint64 { return &g.LeaseTTLMs }),
		fieldOf(optionalOf(u64Part), func(g *GetReplicaListResponse) **uint64 { return &g.ObjectChecksum }),
	)
)
