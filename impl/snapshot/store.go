package snapshot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
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
	// Stored are the keys of every object written, in the order written:
	// what a candidate whose publication was refused deletes.
	Stored []string
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
	u, err := newUploader(ctx, st, trust, p.Keys, opts)
	if err != nil {
		return nil, err
	}
	defer func() { err = u.finish(err) }()
	for _, part := range p.Layout.Parts() {
		u.part(p.File, part)
	}
	return u.seal(p)
}

// PrepareAndWrite is Prepare and Write as one pipeline: every part is
// uploaded as soon as it has passed its decode-check, while the encoder
// goes on with the next, so encoding and uploading overlap; the manifest and
// descriptor follow only once every part is encoded, checked and stored.
// The writer's rules are Write's: the prefix is checked first (before
// anything is uploaded; beforeUpload, when set, is called just before that
// check), objects go up in upstream's order (segments.bin before any chunk,
// the chunks before the manifest, the manifest before the descriptor), and
// on any failure, the encoder's or the decode-check's included, the
// objects this write stored are deleted again. Nothing that has not passed
// its decode-check is ever uploaded. The Prepared is returned (with its
// timings) whenever it was made; its Close removes the work file.
func PrepareAndWrite(ctx context.Context, st objstore.Store, trust objstore.Trust, c Source, spec PrepareSpec, opts WriteOptions,
	beforeUpload func()) (p *Prepared, w *Written, err error) {
	type checked struct {
		f    *os.File
		part Part
	}
	queue := make(chan checked, 1<<10) // parts are descriptors; their bytes wait in the work file
	var u *uploader
	var upErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		for x := range queue {
			if upErr != nil {
				continue
			}
			if u == nil {
				if beforeUpload != nil {
					beforeUpload()
				}
				if u, upErr = newUploader(ctx, st, trust, batchsnap.Artifacts(spec.Root, spec.ID.String()), opts); upErr != nil {
					continue
				}
			}
			u.part(x.f, x.part)
			upErr = u.failed()
		}
	}()
	spec.checked = func(f *os.File, part Part) { queue <- checked{f, part} }
	p, err = Prepare(c, spec)
	close(queue)
	<-done
	if err != nil {
		err = &StageError{Stage: "encode", Err: err}
	}
	if u == nil {
		if err == nil && upErr != nil {
			err = &StageError{Stage: "upload", Err: upErr}
		}
		return p, nil, err
	}
	defer func() {
		if ferr := u.finish(err); err == nil && ferr != nil {
			err = &StageError{Stage: "upload", Err: ferr}
		}
	}()
	if err != nil {
		return p, nil, err
	}
	if w, err = u.seal(p); err != nil {
		return p, nil, &StageError{Stage: "upload", Err: err}
	}
	return p, w, nil
}

// uploader stores a candidate's objects, verified, under its prefix, and
// deletes what it stored when the candidate fails.
type uploader struct {
	ctx    context.Context
	st     objstore.Store
	trust  objstore.Trust
	opts   WriteOptions
	w      *Written
	mu     sync.Mutex
	stored []string
	err    error
	// Chunks go up opts.Parallel at once, and only after segments.bin.
	sem  chan struct{}
	wg   sync.WaitGroup
	segs bool
}

// newUploader refuses a taken prefix (ErrPrefixTaken: nothing written or
// deleted).
func newUploader(ctx context.Context, st objstore.Store, trust objstore.Trust, keys batchsnap.ArtifactKeyspace, opts WriteOptions) (*uploader, error) {
	prefix := keys.Prefix()
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
	par := opts.Parallel
	if par <= 0 {
		par = 2
	}
	return &uploader{ctx: ctx, st: st, trust: trust, opts: opts, w: &Written{Proofs: map[string]objstore.Proof{}},
		sem: make(chan struct{}, par)}, nil
}

func (u *uploader) failed() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.err
}

// part uploads one part of the work file: segments.bin at once (it goes
// first), a chunk in the background (after segments.bin, opts.Parallel at
// once).
func (u *uploader) part(f *os.File, part Part) {
	src := io.NewSectionReader(f, part.Offset, part.Size)
	if part.Name == batchsnap.SegmentsObject {
		u.put(part.Name, part.Key, src, part.Size, part.CRC32C)
		u.segs = true
		return
	}
	if !u.segs {
		u.fail(fmt.Errorf("%s before %s: upstream's writer stores the segments first", part.Name, batchsnap.SegmentsObject))
		return
	}
	u.wg.Add(1)
	u.sem <- struct{}{}
	go func() {
		defer u.wg.Done()
		defer func() { <-u.sem }()
		if u.failed() == nil {
			u.put(part.Name, part.Key, src, part.Size, part.CRC32C)
		}
	}()
}

func (u *uploader) fail(err error) {
	u.mu.Lock()
	if u.err == nil {
		u.err = err
	}
	u.mu.Unlock()
}

// put stores one object, verified; a 409 (a concurrent write to the key in
// flight) retries the whole upload; anything else fails the candidate.
func (u *uploader) put(name, key string, src io.ReaderAt, size int64, crc uint32) {
	var res objstore.PutResult
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		res, err = objstore.VerifiedPut(u.ctx, u.st, u.trust, key, src, size, crc)
		if !errors.Is(err, objstore.ErrConflict) {
			break
		}
	}
	u.mu.Lock()
	if err == nil || !errors.Is(err, objstore.ErrExists) {
		// Whatever reached the store is this write's to delete; an object
		// already at the key (ErrExists) is not.
		u.stored = append(u.stored, key)
	}
	if err != nil {
		if u.err == nil {
			u.err = fmt.Errorf("%s: %w", name, err)
		}
		u.mu.Unlock()
		return
	}
	u.w.Proofs[name] = res.Proof
	u.mu.Unlock()
	if u.opts.AfterObject != nil {
		u.opts.AfterObject(name)
	}
}

// seal waits for the chunks, then stores the manifest and the descriptor.
func (u *uploader) seal(p *Prepared) (*Written, error) {
	u.wg.Wait()
	if err := u.failed(); err != nil {
		return nil, err
	}
	for _, obj := range []struct {
		name, key string
		data      []byte
	}{
		{batchsnap.ManifestObject, p.Keys.Manifest(), p.ManifestRaw},
		{batchsnap.DescriptorObject, p.Keys.Descriptor(), p.DescriptorRaw},
	} {
		u.put(obj.name, obj.key, bytes.NewReader(obj.data), int64(len(obj.data)), batchsnap.CRC32C(obj.data))
		if err := u.failed(); err != nil {
			return nil, err
		}
	}
	u.w.Descriptor = p.Descriptor
	u.w.Pointer = p.Pointer()
	u.mu.Lock()
	u.w.Stored = append([]string(nil), u.stored...)
	u.mu.Unlock()
	return u.w, nil
}

// finish waits for uploads in flight; when the candidate failed (err, or an
// upload's error), it deletes what this write stored and returns the error.
func (u *uploader) finish(err error) error {
	u.wg.Wait()
	if err == nil {
		err = u.failed()
	}
	if err == nil {
		return nil
	}
	derr := u.st.Delete(context.WithoutCancel(u.ctx), u.stored)
	if u.opts.Cleanup != nil {
		u.opts.Cleanup(u.stored, derr)
	}
	return err
}
