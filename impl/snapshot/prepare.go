package snapshot

import (
	"fmt"
	"io"
	"os"
	"path"
	"time"
)

// PrepareSpec names what a prepared snapshot will be.
type PrepareSpec struct {
	ID           ID
	Prefix       string // the object prefix it will be written under
	View         uint64 // producer view of the captured prefix
	Previous     string // previous_snapshot_id ("" for none)
	WorkDir      string
	ChunkObjects int       // default DefaultChunkObjects
	CreatedAt    time.Time // default now
}

// Prepared is a capture encoded into a temporary work file (checksummed in
// the same pass) and decode-checked, with the manifest and descriptor that
// describe it: everything Write needs. Close removes the file.
type Prepared struct {
	File       *os.File
	Layout     *Layout
	Manifest   Manifest
	Descriptor Descriptor
	EncodeTime time.Duration
	DecodeTime time.Duration // the decode-check, which runs alongside the encoder: from the start to its end
}

// Prepare encodes c into a new file in spec.WorkDir and structurally
// validates the file by decoding it (RFC "Encoding and Resource Bounds",
// steps 3–5), then builds the manifest and descriptor. On error nothing is
// left behind.
func Prepare(c Source, spec PrepareSpec) (p *Prepared, err error) {
	if spec.ChunkObjects <= 0 {
		spec.ChunkObjects = DefaultChunkObjects
	}
	if spec.CreatedAt.IsZero() {
		spec.CreatedAt = time.Now()
	}
	f, err := os.CreateTemp(spec.WorkDir, "oplogha-snapshot-*.payload")
	if err != nil {
		return nil, err
	}
	p = &Prepared{File: f}
	defer func() {
		if err != nil {
			p.Close()
			p = nil
		}
	}()
	// The decode-check reads the file behind the encoder, on another core:
	// every byte it checks is read back from the file, and all of it is
	// checked before Prepare returns (so before any upload), but it no
	// longer adds its own pass to the critical path.
	start := time.Now()
	fol := newFollower(f, HeaderSize)
	type checked struct {
		b   body
		err error
		at  time.Time
	}
	done := make(chan checked, 1)
	go func() {
		b, err := decodeBody(fol, Visitor{}, nil)
		if err != nil {
			// Let the encoder finish (it never waits for the check), then
			// report: the encoder's own error, if any, comes first.
			io.Copy(io.Discard, fol)
		}
		done <- checked{b, err, time.Now()}
	}()
	p.Layout, err = encode(c, f, spec.ChunkObjects, fol.wrote)
	fol.end(err)
	p.EncodeTime = time.Since(start)
	res := <-done
	p.DecodeTime = res.at.Sub(start)
	if err != nil {
		return p, err
	}
	if res.err != nil {
		return p, fmt.Errorf("decode-check: %w", res.err)
	}
	// The header is the only part written after the body: read it back
	// from the file and hold the body to it.
	var hb [HeaderSize]byte
	if _, err = f.ReadAt(hb[:], 0); err != nil {
		return p, err
	}
	h, err := ParseHeader(hb[:])
	if err != nil {
		return p, fmt.Errorf("decode-check: %w", err)
	}
	if h != p.Layout.Header {
		return p, fmt.Errorf("decode-check: %w: the header in the file differs from the one encoded", ErrMalformed)
	}
	if err = res.b.agree(h); err != nil {
		return p, fmt.Errorf("decode-check: %w", err)
	}
	cur := c.Cursor()
	id := spec.ID.String()
	p.Manifest = NewManifest(id, spec.View, spec.ChunkObjects, p.Layout)
	p.Descriptor = Descriptor{SnapshotID: id, SchemaVersion: DescriptorSchemaVersion, LastIncludedSeq: cur.Seq, LastIncludedBatchID: cur.BatchID,
		ProducerViewVersion: spec.View, PayloadChecksum: p.Layout.Checksum(), PayloadSize: uint64(p.Layout.Size),
		ManifestKey: path.Join(spec.Prefix, ManifestObject), ObjectPrefix: spec.Prefix, PreviousSnapshotID: spec.Previous,
		CreatedAtMS: spec.CreatedAt.UnixMilli()}
	return p, nil
}

// Close closes and removes the work file.
func (p *Prepared) Close() {
	if p != nil && p.File != nil {
		p.File.Close()
		os.Remove(p.File.Name())
	}
}
