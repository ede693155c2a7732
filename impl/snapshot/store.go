package snapshot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sync"
	"time"

	"github.com/minio/crc64nvme"

	"github.com/oplogha/oplogha/impl/contract"
	"github.com/oplogha/oplogha/impl/objstore"
)

// Written is a snapshot whose objects are all stored and verified. None of
// it is authoritative until a pointer names it.
type Written struct {
	Descriptor Descriptor
	Manifest   Manifest
	Proofs     map[string]objstore.Proof // key → how it was verified
}

// WriteOptions tune Write.
type WriteOptions struct {
	Parallel int // chunk uploads at once (default 2)
	// AfterObject, when set, is called after each object is written and
	// verified, with its name (chunk, segments, manifest, descriptor): a
	// crash window per object write.
	AfterObject func(name string)
}

// Write uploads an encoded payload and its manifest and descriptor under
// prefix, in the RFC's order: chunks, then segments, then manifest, then
// descriptor, each create-only and each verified (objstore.VerifiedPut). A key
// collision or a failed verification fails the candidate; what was already
// written stays as an orphan for GC.
func Write(ctx context.Context, st objstore.Store, trust objstore.Trust, prefix string, f *os.File, l *Layout, m Manifest, d Descriptor,
	opts WriteOptions) (*Written, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	if err := Agree(d, m); err != nil {
		return nil, err
	}
	if d.ObjectPrefix != prefix {
		return nil, fmt.Errorf("%w: descriptor prefix %q, writing under %q", ErrIdentity, d.ObjectPrefix, prefix)
	}
	w := &Written{Descriptor: d, Manifest: m, Proofs: map[string]objstore.Proof{}}
	var mu sync.Mutex
	put := func(p Part) error {
		var res objstore.PutResult
		var err error
		// A 409 (a concurrent write to the key in flight) retries the whole
		// upload; anything else fails the candidate.
		for attempt := 0; attempt < 3; attempt++ {
			res, err = objstore.VerifiedPut(ctx, st, trust, path.Join(prefix, p.Name), io.NewSectionReader(f, p.Offset, p.Size), p.Size, p.CRC)
			if !errors.Is(err, objstore.ErrConflict) {
				break
			}
		}
		if err != nil {
			return err
		}
		mu.Lock()
		w.Proofs[p.Name] = res.Proof
		mu.Unlock()
		if opts.AfterObject != nil {
			opts.AfterObject(p.Name)
		}
		return nil
	}
	par := opts.Parallel
	if par <= 0 {
		par = 2
	}
	sem := make(chan struct{}, par)
	errs := make(chan error, len(l.Parts))
	var wg sync.WaitGroup
	for _, p := range l.Parts[1:] {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			errs <- put(p)
		}()
	}
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	if err := errors.Join(all...); err != nil {
		return nil, err
	}
	if err := put(l.Parts[0]); err != nil {
		return nil, err
	}
	for _, obj := range []struct {
		name string
		enc  func() ([]byte, error)
	}{{ManifestObject, m.Encode}, {DescriptorName, d.Encode}} {
		data, err := obj.enc()
		if err != nil {
			return nil, err
		}
		res, err := objstore.VerifiedPut(ctx, st, trust, path.Join(prefix, obj.name), bytes.NewReader(data), int64(len(data)), crc64nvme.Checksum(data))
		if err != nil {
			return nil, err
		}
		w.Proofs[obj.name] = res.Proof
		if opts.AfterObject != nil {
			opts.AfterObject(obj.name)
		}
	}
	return w, nil
}

// ReadSmall reads a small object whole (descriptor, manifest), bounded
// (contract.ReadSmallObject).
func ReadSmall(ctx context.Context, st objstore.Store, key string) ([]byte, error) {
	return contract.ReadSmallObject(ctx, objstore.Getter(st), key)
}

// Open reads a snapshot by exact keys — never by listing: the descriptor at
// prefix, its manifest, then every payload object in stream order, each
// checked against the manifest's size and checksum as it streams into the
// decoder. It returns the decoded header after all of it validated.
func Open(ctx context.Context, st objstore.Store, prefix string, v Visitor) (Descriptor, Manifest, Header, error) {
	return open(ctx, st, prefix, v, nil)
}

// Timings split a read of a snapshot: Download is the time until the last
// payload byte came out of the store, Decode until the decoder finished.
// They run side by side (the decoder reads as the objects stream), so
// Decode includes most of Download.
type Timings struct {
	Download, Decode time.Duration
}

func open(ctx context.Context, st objstore.Store, prefix string, v Visitor, t *Timings) (Descriptor, Manifest, Header, error) {
	start := time.Now()
	if t != nil {
		defer func() { t.Decode = time.Since(start) }()
	}
	g := objstore.Getter(st)
	d, m, err := contract.ReadSnapshotHead(ctx, g, prefix)
	if err != nil {
		return d, m, Header{}, err
	}
	pr, pw := io.Pipe()
	streamErr := make(chan error, 1)
	go func() {
		err := contract.StreamSnapshotObjects(ctx, g, prefix, m, pw)
		if t != nil {
			t.Download = time.Since(start)
		}
		pw.CloseWithError(err)
		streamErr <- err
	}()
	h, _, err := Decode(pr, v)
	pr.CloseWithError(err)
	if serr := <-streamErr; serr != nil && !errors.Is(serr, io.ErrClosedPipe) && !errors.Is(serr, err) {
		// The object-level verdict names the bad object: report it first.
		return d, m, h, errors.Join(serr, err)
	}
	if err != nil {
		return d, m, h, err
	}
	if err := AgreeHeader(h, m); err != nil {
		return d, m, h, err
	}
	return d, m, h, nil
}
