package snapshot

import (
	"bufio"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"

	"github.com/minio/crc64nvme"

	"github.com/oplogha/oplogha/impl/state"
)

// Visitor receives a payload's content in order; nil fields skip.
type Visitor struct {
	Segment func(state.Segment) error
	Object  func(state.ObjectKey, state.Object) error
}

// Stats is what a decode counted.
type Stats struct {
	Segments, Objects uint64
	Chunks            uint32
	Bytes             int64 // whole stream
}

type hashReader struct {
	r io.Reader
	h hash.Hash64
	n int64
}

func (h *hashReader) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	h.h.Write(p[:n])
	h.n += int64(n)
	return n, err
}

// Decode streams a payload, validating every record, count, order, size and
// checksum, and hands each segment and object to v. Nothing is kept: memory
// stays flat whatever the payload's size. Any fault is a typed error.
func Decode(r io.Reader, v Visitor) (Header, Stats, error) {
	var hb [HeaderSize]byte
	if _, err := io.ReadFull(r, hb[:]); err != nil {
		return Header{}, Stats{}, fmt.Errorf("envelope header: %w", truncated(err))
	}
	h, err := ParseHeader(hb[:])
	if err != nil {
		return Header{}, Stats{}, err
	}
	b, err := decodeBody(r, v, &h)
	st := b.Stats
	st.Bytes += HeaderSize
	if err != nil {
		return h, st, err
	}
	return h, st, b.agree(h)
}

// body is what decoding the records after the header found.
type body struct {
	Stats
	uncompressed uint64
	checksum     uint64
}

// agree checks a decoded body against the envelope header.
func (b body) agree(h Header) error {
	switch {
	case b.Chunks != h.ChunkCount:
		return fmt.Errorf("%w: %d chunk records, envelope says %d", ErrCount, b.Chunks, h.ChunkCount)
	case b.Objects != h.ObjectCount:
		return fmt.Errorf("%w: %d objects read, envelope says %d", ErrCount, b.Objects, h.ObjectCount)
	case uint64(b.Bytes) != h.EncodedSize:
		return fmt.Errorf("%w: %d bytes after the header, envelope says %d", ErrTruncated, b.Bytes, h.EncodedSize)
	case b.uncompressed != h.UncompressedSize:
		return malformed("record bodies of %d bytes, envelope says %d", b.uncompressed, h.UncompressedSize)
	case b.checksum != h.Checksum:
		return fmt.Errorf("%w: payload crc64nvme %016x, envelope says %016x", ErrChecksum, b.checksum, h.Checksum)
	}
	return nil
}

// decodeBody validates the records after the header: the segments record,
// then chunk records in order. With h, the header bounds the counts as they
// are read; without it (a decode running behind the encoder, before the
// header exists) chunk records are read to the end of the stream and the
// caller checks the header afterwards with body.agree.
func decodeBody(r io.Reader, v Visitor, h *Header) (b body, _ error) {
	hr := &hashReader{r: r, h: crc64nvme.New()}
	br := bufio.NewReaderSize(hr, 1<<20)
	st := &b.Stats
	done := func() {
		st.Bytes = hr.n - int64(br.Buffered())
		b.checksum = hr.h.Sum64()
	}
	defer done()

	kind, index, count, _, err := readRecordHead(br)
	if err != nil {
		return b, fmt.Errorf("segments record: %w", err)
	}
	if kind != kindSegments || index != 0 {
		return b, malformed("first record is %s #%d, want segments #0", kinds[kind], index)
	}
	scratch := newDecodeScratch(v.Object != nil)
	rr := newRecordReader(br, scratch)
	var last string
	for i := uint64(0); i < count; i++ {
		s := rr.segment()
		if rr.err != nil {
			return b, fmt.Errorf("segment %d: %w", i, rr.err)
		}
		if i > 0 && s.Endpoint <= last {
			return b, malformed("segment %q after %q: not ascending", s.Endpoint, last)
		}
		last = s.Endpoint
		if v.Segment != nil {
			if err := v.Segment(s); err != nil {
				return b, err
			}
		}
	}
	if err := rr.finish(); err != nil {
		return b, fmt.Errorf("segments record: %w", err)
	}
	b.uncompressed += rr.n
	st.Segments = count

	// The last key, owned here: the reader reuses its key buffer when the
	// visitor keeps nothing.
	var lastTenant string
	var lastKey []byte
	haveLast := false
	for c := uint32(0); ; c++ {
		if h != nil && c == h.ChunkCount {
			break
		}
		if h == nil {
			if _, err := br.Peek(1); errors.Is(err, io.EOF) {
				break
			}
		}
		if c == math.MaxUint32 {
			return b, fmt.Errorf("%w: more than %d chunk records", ErrCount, c)
		}
		kind, index, count, _, err := readRecordHead(br)
		if err != nil {
			return b, fmt.Errorf("chunk %d: %w", c, err)
		}
		if kind != kindObjects || index != uint64(c) {
			return b, malformed("record %s #%d where chunk #%d belongs", kinds[kind], index, c)
		}
		if count == 0 || (h != nil && st.Objects+count > h.ObjectCount) {
			limit := "the envelope's count"
			if h != nil {
				limit = fmt.Sprint(h.ObjectCount)
			}
			return b, fmt.Errorf("%w: chunk %d holds %d objects, %d of %s already read", ErrCount, c, count, st.Objects, limit)
		}
		rr := newRecordReader(br, scratch)
		for i := uint64(0); i < count; i++ {
			k, o := rr.object()
			if rr.err != nil {
				return b, fmt.Errorf("chunk %d object %d: %w", c, i, rr.err)
			}
			if haveLast && !(lastTenant < k.Tenant || (lastTenant == k.Tenant && string(lastKey) < k.Key)) {
				// By position: a tenant key is never in an error (errors are logged).
				return b, malformed("chunk %d object %d: its key does not ascend from the previous object's", c, i)
			}
			lastTenant, lastKey, haveLast = k.Tenant, append(lastKey[:0], k.Key...), true
			if v.Object != nil {
				if err := v.Object(k, o); err != nil {
					return b, err
				}
			}
		}
		if err := rr.finish(); err != nil {
			return b, fmt.Errorf("chunk %d: %w", c, err)
		}
		b.uncompressed += rr.n
		st.Objects += count
		st.Chunks++
	}
	if h != nil && st.Objects != h.ObjectCount {
		return b, fmt.Errorf("%w: %d objects read, envelope says %d", ErrCount, st.Objects, h.ObjectCount)
	}
	if _, err := br.ReadByte(); err == nil {
		return b, ErrTrailing
	} else if !errors.Is(err, io.EOF) {
		return b, err
	}
	return b, nil
}
