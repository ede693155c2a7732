package snapshot

import (
	"bufio"
	"errors"
	"fmt"
	"hash"
	"io"

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
	hr := &hashReader{r: r, h: crc64nvme.New()}
	br := bufio.NewReaderSize(hr, 1<<20)
	st := Stats{}
	var uncompressed uint64

	kind, index, count, _, err := readRecordHead(br)
	if err != nil {
		return h, st, fmt.Errorf("segments record: %w", err)
	}
	if kind != kindSegments || index != 0 {
		return h, st, malformed("first record is %s #%d, want segments #0", kinds[kind], index)
	}
	scratch := newDecodeScratch(v.Object != nil)
	rr := newRecordReader(br, scratch)
	var last string
	for i := uint64(0); i < count; i++ {
		s := rr.segment()
		if rr.err != nil {
			return h, st, fmt.Errorf("segment %d: %w", i, rr.err)
		}
		if i > 0 && s.Endpoint <= last {
			return h, st, malformed("segment %q after %q: not ascending", s.Endpoint, last)
		}
		last = s.Endpoint
		if v.Segment != nil {
			if err := v.Segment(s); err != nil {
				return h, st, err
			}
		}
	}
	if err := rr.finish(); err != nil {
		return h, st, fmt.Errorf("segments record: %w", err)
	}
	uncompressed += rr.n
	st.Segments = count

	// The last key, owned here: the reader reuses its key buffer when the
	// visitor keeps nothing.
	var lastTenant string
	var lastKey []byte
	haveLast := false
	for c := uint32(0); c < h.ChunkCount; c++ {
		kind, index, count, _, err := readRecordHead(br)
		if err != nil {
			return h, st, fmt.Errorf("chunk %d: %w", c, err)
		}
		if kind != kindObjects || index != uint64(c) {
			return h, st, malformed("record %s #%d where chunk #%d belongs", kinds[kind], index, c)
		}
		if count == 0 || st.Objects+count > h.ObjectCount {
			return h, st, fmt.Errorf("%w: chunk %d holds %d objects, %d of %d already read", ErrCount, c, count, st.Objects, h.ObjectCount)
		}
		rr := newRecordReader(br, scratch)
		for i := uint64(0); i < count; i++ {
			k, o := rr.object()
			if rr.err != nil {
				return h, st, fmt.Errorf("chunk %d object %d: %w", c, i, rr.err)
			}
			if haveLast && !(lastTenant < k.Tenant || (lastTenant == k.Tenant && string(lastKey) < k.Key)) {
				return h, st, malformed("object %s after %s: not ascending", k, state.ObjectKey{Tenant: lastTenant, Key: string(lastKey)})
			}
			lastTenant, lastKey, haveLast = k.Tenant, append(lastKey[:0], k.Key...), true
			if v.Object != nil {
				if err := v.Object(k, o); err != nil {
					return h, st, err
				}
			}
		}
		if err := rr.finish(); err != nil {
			return h, st, fmt.Errorf("chunk %d: %w", c, err)
		}
		uncompressed += rr.n
		st.Objects += count
		st.Chunks++
	}
	if st.Objects != h.ObjectCount {
		return h, st, fmt.Errorf("%w: %d objects read, envelope says %d", ErrCount, st.Objects, h.ObjectCount)
	}
	if _, err := br.ReadByte(); err == nil {
		return h, st, ErrTrailing
	} else if !errors.Is(err, io.EOF) {
		return h, st, err
	}
	st.Bytes = HeaderSize + hr.n
	if uint64(hr.n) != h.EncodedSize {
		return h, st, fmt.Errorf("%w: %d bytes after the header, envelope says %d", ErrTruncated, hr.n, h.EncodedSize)
	}
	if uncompressed != h.UncompressedSize {
		return h, st, malformed("record bodies of %d bytes, envelope says %d", uncompressed, h.UncompressedSize)
	}
	if got := hr.h.Sum64(); got != h.Checksum {
		return h, st, fmt.Errorf("%w: payload crc64nvme %016x, envelope says %016x", ErrChecksum, got, h.Checksum)
	}
	return h, st, nil
}
