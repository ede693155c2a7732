package snapshot

import (
	"bufio"
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
	DecodeTime time.Duration
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
	start := time.Now()
	if p.Layout, err = Encode(c, f, spec.ChunkObjects); err != nil {
		return p, err
	}
	p.EncodeTime = time.Since(start)
	start = time.Now()
	if _, err = f.Seek(0, io.SeekStart); err != nil {
		return p, err
	}
	if _, _, err = Decode(bufio.NewReaderSize(f, 1<<20), Visitor{}); err != nil {
		return p, err
	}
	p.DecodeTime = time.Since(start)
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
