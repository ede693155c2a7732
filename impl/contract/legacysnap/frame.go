package legacysnap

import (
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
)

// Limits on what one legacy snapshot may claim, so that a damaged or hostile
// file fails with an error instead of exhausting memory.
const (
	MaxObjectBytes     = 4 << 30 // one stored file (metadata, segments, task_manager)
	MaxFrameBytes      = 1 << 30 // one decompressed zstd frame (upstream's task_manager limit)
	maxSmallObjectSize = 4096    // latest.txt, descriptor.txt, manifest.txt
)

// frames opens upstream's zstd frames: each is one frame from
// ZSTD_compress, whose header carries the content size. Upstream's
// decompressor sizes its buffer from that header and refuses a frame
// without it (zstd_util.h), so this reader does too, and it requires the
// frame to decompress to exactly that size.
type frames struct{ dec *zstd.Decoder }

func newFrames() (*frames, error) {
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(MaxFrameBytes),
		zstd.WithDecodeAllCapLimit(true))
	if err != nil {
		return nil, err
	}
	return &frames{dec: dec}, nil
}

func (f *frames) close() { f.dec.Close() }

// frameCapacity bounds what a zstd frame of n bytes can decompress to: each
// block takes at least 4 bytes (a 3-byte header and one byte of content) and
// yields at most 128 KiB. The decoder allocates the content size a header
// claims before it decodes, so a header is held to this first.
func frameCapacity(n int) uint64 { return (uint64(n)/4 + 1) << 17 }

// open decompresses one frame of file (where: which frame in it), refusing
// more than limit bytes.
func (f *frames) open(file, where string, frame []byte, limit uint64) ([]byte, error) {
	limit = min(limit, MaxFrameBytes)
	bad := func(kind error, format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s: zstd frame of %d bytes: %s", kind, file, where, len(frame), fmt.Sprintf(format, args...))
	}
	var h zstd.Header
	if err := h.Decode(frame); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, bad(ErrTruncated, "the frame header is cut short")
		}
		return nil, bad(ErrMalformed, "%v", err)
	}
	switch {
	case h.Skippable:
		return nil, bad(ErrMalformed, "a skippable frame, not compressed data")
	case !h.HasFCS:
		return nil, bad(ErrMalformed, "the header has no content size (upstream's decompressor requires it)")
	case h.DictionaryID != 0:
		return nil, bad(ErrMalformed, "compressed with dictionary %d (upstream uses none)", h.DictionaryID)
	case h.FrameContentSize > limit:
		return nil, bad(ErrMalformed, "the header claims %d bytes, more than the %d allowed here", h.FrameContentSize, limit)
	case h.FrameContentSize > frameCapacity(len(frame)):
		return nil, bad(ErrTruncated, "the header claims %d bytes, more than a frame this short can hold", h.FrameContentSize)
	}
	out, err := f.dec.DecodeAll(frame, make([]byte, 0, h.FrameContentSize))
	if err != nil {
		switch {
		case errors.Is(err, io.ErrUnexpectedEOF):
			return nil, bad(ErrTruncated, "the frame is cut short")
		case errors.Is(err, zstd.ErrDecoderSizeExceeded):
			return nil, bad(ErrMalformed, "more data than the %d bytes its header declares (another frame follows?)", h.FrameContentSize)
		}
		return nil, bad(ErrMalformed, "%v", err)
	}
	if uint64(len(out)) != h.FrameContentSize {
		return nil, bad(ErrMalformed, "decompresses to %d bytes, its header says %d", len(out), h.FrameContentSize)
	}
	return out, nil
}
