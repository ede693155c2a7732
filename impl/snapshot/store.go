package snapshot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/oplogha/oplogha/impl/contract/batchsnap"
	"github.com/oplogha/oplogha/impl/objstore"
)

// Written is a snapshot whose objects are all stored and verified. None of
// it is authoritative until a pointer names it.
type Written struct {
	Pointer    batchsnap.Pointer
	Descriptor batchsnap.Descriptor
	Proofs     map[string]objstore.Proof // object name → how it was verified
}

// WriteOptions tune Write.
type WriteOptions struct {
	Parallel int // chunk uploads at once (default 2)
	// AfterObject, when set, is called after each object is written and
	// verified, with its name (segments.bin, objects/<n>.bin, manifest.json,
	// descriptor.json): a crash window per object write.
	AfterObject func(name string)
	// Cleanup, when set, is told of the objects a failed write deleted
	// again, and of a delete that failed (they are then GC's).
	Cleanup func(deleted []string, err error)
}

// Write uploads a prepared snapshot as upstream's writer does
// (writer.cpp:53-210): it refuses a candidate prefix that already holds an
// object (ErrPrefixTaken; nothing is written or deleted), then writes
// segments.bin, the chunks, manifest.json and descriptor.json in that order,
// each create-only with its CRC32C and each verified (objstore.VerifiedPut:
// the store's full-object CRC32C on HEAD where trust says the store
// validates checksums, a complete readback otherwise). When any of it
// fails, the objects this write stored are deleted again (upstream deletes
// everything under the prefix; this deletes only its own, so a writer racing
// into the same prefix loses nothing); what a crash leaves is an orphan for GC.
func Write(ctx context.Context, st objstore.Store, trust objstore.Trust, p *Prepared, opts WriteOptions) (w *Written, err error) {
	prefix := p.Keys.Prefix()
	if prefix == "" {
		return nil, fmt.Errorf("%w: no artifact prefix", ErrWriterArguments)
	}
	existing, err := st.List(ctx, prefix)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", prefix, err)
	}
	if len(existing) > 0 {
		return nil, fmt.Errorf("%w: %s (%d objects, %s the first)", ErrPrefixTaken, prefix, len(existing), existing[0].Key)
	}
	w = &Written{Descriptor: p.Descriptor, Proofs: map[string]objstore.Proof{}}
	var mu sync.Mutex
	var stored []string
	defer func() {
		if err == nil {
			return
		}
		dctx := context.WithoutCancel(ctx)
		derr := st.Delete(dctx, stored)
		if opts.Cleanup != nil {
			opts.Cleanup(stored, derr)
		}
		w = nil
	}()
	put := func(name, key string, src io.ReaderAt, size int64, crc uint32) error {
		var res objstore.PutResult
		var err error
		// A 409 (a concurrent write to the key in flight) retries the whole
		// upload; anything else fails the candidate.
		for attempt := 0; attempt < 3; attempt++ {
			res, err = objstore.VerifiedPut(ctx, st, trust, key, src, size, crc)
			if !errors.Is(err, objstore.ErrConflict) {
				break
			}
		}
		if err != nil && !errors.Is(err, objstore.ErrExists) {
			// Whatever reached the store is this write's to delete; an
			// object already at the key (ErrExists) is not.
			mu.Lock()
			stored = append(stored, key)
			mu.Unlock()
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		mu.Lock()
		stored = append(stored, key)
		w.Proofs[name] = res.Proof
		mu.Unlock()
		if opts.AfterObject != nil {
			opts.AfterObject(name)
		}
		return nil
	}
	seg := p.Layout.Segments
	if err := put(seg.Name, seg.Key, io.NewSectionReader(p.File, seg.Offset, seg.Size), seg.Size, seg.CRC32C); err != nil {
		return nil, err
	}
	par := opts.Parallel
	if par <= 0 {
		par = 2
	}
	sem := make(chan struct{}, par)
	errs := make([]error, len(p.Layout.Chunks))
	var wg sync.WaitGroup
	for i, c := range p.Layout.Chunks {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			errs[i] = put(c.Name, c.Key, io.NewSectionReader(p.File, c.Offset, c.Size), c.Size, c.CRC32C)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for _, obj := range []struct {
		name, key string
		data      []byte
	}{
		{batchsnap.ManifestObject, p.Keys.Manifest(), p.ManifestRaw},
		{batchsnap.DescriptorObject, p.Keys.Descriptor(), p.DescriptorRaw},
	} {
		if err := put(obj.name, obj.key, bytes.NewReader(obj.data), int64(len(obj.data)), batchsnap.CRC32C(obj.data)); err != nil {
			return nil, err
		}
	}
	w.Pointer = p.Pointer()
	return w, nil
}
