package contract

import (
	"context"
	"fmt"
	"hash"
	"path"

	"github.com/minio/crc64nvme"
)

// OpenedSnapshot is what OpenSnapshot read and verified.
type OpenedSnapshot struct {
	Descriptor Descriptor
	Manifest   Manifest
	Header     EnvelopeHeader
}

// OpenSnapshot checks the snapshot pointer p names, read-only and by exact
// keys, as a recovering node reads it (RFC "Recovery Order", steps 2-3):
// the descriptor at p's object prefix (agreeing with p), the manifest it
// names (agreeing with the descriptor), then every payload object the
// manifest lists, streamed and checked for its size and CRC64NVME; then
// the envelope header at the start of the payload against the manifest
// (cursor, counts, size, checksum) and the CRC64NVME of every payload byte
// after the header against the header's. The chunk records themselves are
// not decoded here (that codec is impl/snapshot's), but every byte of them
// is covered by the checksums above. Errors name the object at fault and
// wrap the ErrSnapshot… sentinel of the reason (or the store's error).
func OpenSnapshot(ctx context.Context, g ObjectGetter, p Pointer) (OpenedSnapshot, error) {
	var o OpenedSnapshot
	if err := p.Validate(); err != nil {
		return o, err
	}
	d, m, err := ReadSnapshotHead(ctx, g, p.ObjectPrefix)
	o.Descriptor, o.Manifest = d, m
	if err != nil {
		return o, err
	}
	if err := d.Agree(p); err != nil {
		return o, fmt.Errorf("descriptor %s: %w", path.Join(p.ObjectPrefix, DescriptorName), err)
	}
	c := &payloadCheck{crc: crc64nvme.New()}
	if err := StreamSnapshotObjects(ctx, g, p.ObjectPrefix, m, c); err != nil {
		return o, err
	}
	seg := path.Join(p.ObjectPrefix, SegmentsObject)
	h, err := ParseEnvelopeHeader(c.head[:c.nhead])
	if err != nil {
		return o, fmt.Errorf("%s: envelope header: %w", seg, err)
	}
	o.Header = h
	if err := AgreeHeader(h, m); err != nil {
		return o, fmt.Errorf("%s: envelope header: %w", seg, err)
	}
	if c.n != h.EncodedSize {
		return o, fmt.Errorf("%s: %w", seg, snapshotError(ErrSnapshotTruncated, "%d payload bytes after the header, envelope says %d", c.n, h.EncodedSize))
	}
	if got := c.crc.Sum64(); got != h.Checksum {
		return o, fmt.Errorf("%s: %w", seg, snapshotError(ErrSnapshotChecksum, "payload crc64nvme %016x over the objects "+
			"after the header, envelope says %016x", got, h.Checksum))
	}
	return o, nil
}

// payloadCheck takes the payload stream: it keeps the envelope header and
// hashes and counts every byte after it.
type payloadCheck struct {
	head  [EnvelopeHeaderSize]byte
	nhead int
	crc   hash.Hash64
	n     uint64
}

func (c *payloadCheck) Write(p []byte) (int, error) {
	size := len(p)
	if c.nhead < EnvelopeHeaderSize {
		k := copy(c.head[c.nhead:], p)
		c.nhead += k
		p = p[k:]
	}
	c.crc.Write(p)
	c.n += uint64(len(p))
	return size, nil
}
