// Package objstore is the snapshot object store: a small Store interface
// (create-only put with a precomputed full-object CRC32C, the checksum
// upstream's snapshot format records for every object; head, get, list,
// delete) with one backend per subpackage (s3, localdir), and VerifiedPut,
// which turns a put into a publication-grade proof: the backend's own
// full-object checksum read back by HEAD when the server has been shown
// (Probe) to validate checksums, a complete readback otherwise, and no proof
// — no publication — when neither works.
package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/oplogha/oplogha/impl/contract/batchsnap"
)

// Errors callers branch on.
var (
	ErrExists     = errors.New("object already exists")     // create-only put hit a key: the candidate fails
	ErrNotFound   = errors.New("object not found")          // exact-key read of a missing object
	ErrCorrupt    = errors.New("object checksum mismatch")  // the store rejected or returned other bytes
	ErrConflict   = errors.New("concurrent write conflict") // 409: retry the whole upload
	ErrUnverified = errors.New("object could not be verified")
)

// Info is what a store says of one object. CRC32C is nil when the backend
// keeps no full-object checksum (a local directory, a checksum-less server,
// or a multipart object whose checksum is a composite of its parts).
type Info struct {
	Key       string
	Size      int64
	CRC32C    *uint32
	FullObj   bool // the checksum covers the whole object (not a composite of parts)
	VersionID string
	ModTime   time.Time
}

// Store is one backend.
type Store interface {
	// PutIfAbsent writes key from src (size bytes, whose CRC32C is crc)
	// only if key does not exist (ErrExists otherwise). The backend sends crc
	// for the server to validate where it can. An object already at key that
	// the backend proves by its stored full-object checksum to be these very
	// bytes counts as written: a retried request may meet its own first
	// attempt there.
	PutIfAbsent(ctx context.Context, key string, src io.ReaderAt, size int64, crc uint32) error
	// Head reads an object's metadata, with its checksum when the backend has one.
	Head(ctx context.Context, key string) (Info, error)
	// Get opens an object for reading.
	Get(ctx context.Context, key string) (io.ReadCloser, Info, error)
	// List lists objects under prefix (possibly eventually consistent: GC only).
	List(ctx context.Context, prefix string) ([]Info, error)
	// Delete removes keys; a missing key is not an error.
	Delete(ctx context.Context, keys []string) error
	// Name describes the backend for logs and bundles.
	Name() string
}

// Upload is a multipart upload that was begun and neither completed nor
// aborted: a writer still at work, or the parts a dead writer left behind,
// which the server keeps (and bills) until the upload is aborted.
type Upload struct {
	Key      string
	UploadID string
	// Initiated is the time the server reports for the upload. Servers
	// differ in what it means (versitygw: the last time a part arrived), so
	// it says only that the upload is no older than this.
	Initiated time.Time
}

// Uploads is the part of a store GC needs to clear unfinished multipart
// uploads. It is optional: find it with a type assertion on the Store. A
// backend without multipart uploads lists none.
type Uploads interface {
	// ListUploads lists the unfinished uploads whose keys start with prefix.
	ListUploads(ctx context.Context, prefix string) ([]Upload, error)
	// AbortUpload aborts one upload and frees its parts; an upload that is
	// already gone (completed or aborted) is not an error.
	AbortUpload(ctx context.Context, key, uploadID string) error
}

// Proof says how a put was verified.
type Proof string

// Proofs.
const (
	ProofChecksum Proof = "checksum" // HEAD returned the same full-object CRC32C and size
	ProofReadback Proof = "readback" // the whole object was read back and hashed
)

// PutResult is a verified put.
type PutResult struct {
	Info  Info
	Proof Proof
}

// Trust is what a store has been shown to do. A server that stores and
// echoes a client-sent checksum without validating the bytes against it (as
// gofakes3 does) returns the right value on HEAD for the wrong bytes, so a
// HEAD checksum proves nothing until Probe has shown the server refuses a
// wrong one.
type Trust struct {
	ServerValidatesChecksums bool
	// ServerValidatesMultipart: a multipart upload whose full-object
	// checksum was wrong was refused too. A server may validate a single
	// PUT and still store a multipart upload's full-object checksum as the
	// client claimed it; without this, a multipart object's HEAD checksum
	// proves nothing and VerifiedPut reads it back.
	ServerValidatesMultipart bool
}

// ErrProbe: the probe could not tell whether the server validates checksums.
var ErrProbe = errors.New("checksum validation probe inconclusive")

// Multipart is a backend that writes large objects in parts.
type Multipart interface {
	// InParts says whether a put of size bytes goes up in parts.
	InParts(size int64) bool
	// PutInParts puts data create-only at key as a multipart upload of at
	// least two parts whatever its size, with full-object checksum crc:
	// the probe of the multipart path.
	PutInParts(ctx context.Context, key string, data []byte, crc uint32) error
}

// MultipartProbeSize is the multipart probe's size: a 5 MiB part (the
// least S3 allows but for the last) and a small last one.
const MultipartProbeSize = 5<<20 + 1024

// Probe puts a small object under key with a deliberately wrong checksum. A
// server that refuses it (ErrCorrupt) validates checksums; one that accepts it
// does not (the probe object is deleted again). A backend that writes in
// parts has its multipart path probed the same way under key+".multipart"
// (a two-part upload); an inconclusive multipart probe leaves multipart
// objects unproved by HEAD (read back), the safe side.
func Probe(ctx context.Context, s Store, key string) (Trust, error) {
	data := []byte("oplogha checksum validation probe")
	wrong := batchsnap.CRC32C(data) ^ 0x5a5a
	validates, err := probeOnce(ctx, s, key, func() error {
		return s.PutIfAbsent(ctx, key, bytes.NewReader(data), int64(len(data)), wrong)
	})
	if err != nil {
		return Trust{}, err
	}
	t := Trust{ServerValidatesChecksums: validates}
	mp, ok := s.(Multipart)
	if !ok || !validates {
		return t, nil
	}
	big := make([]byte, MultipartProbeSize)
	copy(big, data)
	mkey := key + ".multipart"
	t.ServerValidatesMultipart, _ = probeOnce(ctx, s, mkey, func() error {
		return mp.PutInParts(ctx, mkey, big, batchsnap.CRC32C(big)^0x5a5a)
	})
	return t, nil
}

// probeOnce runs a put with a wrong checksum: refused (ErrCorrupt) is a
// server that validates; accepted is one that does not (the object is
// deleted again); anything else is ErrProbe.
func probeOnce(ctx context.Context, s Store, key string, put func() error) (bool, error) {
	err := put()
	switch {
	case errors.Is(err, ErrCorrupt):
		return true, nil
	case err == nil:
		if derr := s.Delete(ctx, []string{key}); derr != nil {
			return false, fmt.Errorf("%w: delete probe %s: %v", ErrProbe, key, derr)
		}
		return false, nil
	}
	return false, fmt.Errorf("%w: %v", ErrProbe, err)
}

// VerifiedPut puts src create-only and proves the stored object is exactly
// those bytes: by the server's full-object checksum on HEAD when trust says
// the server validates checksums, else by complete readback. Without a proof
// it returns ErrUnverified (or ErrCorrupt): the caller must not publish.
func VerifiedPut(ctx context.Context, s Store, trust Trust, key string, src io.ReaderAt, size int64, crc uint32) (PutResult, error) {
	if err := s.PutIfAbsent(ctx, key, src, size, crc); err != nil {
		return PutResult{}, err
	}
	info, err := s.Head(ctx, key)
	if err != nil {
		return PutResult{}, fmt.Errorf("%w: head %s: %v", ErrUnverified, key, err)
	}
	if info.Size != size {
		return PutResult{}, fmt.Errorf("%w: %s is %d bytes, wrote %d", ErrCorrupt, key, info.Size, size)
	}
	if info.CRC32C != nil && info.FullObj && *info.CRC32C != crc {
		return PutResult{}, fmt.Errorf("%w: %s: store says crc32c %08x, wrote %08x", ErrCorrupt, key, *info.CRC32C, crc)
	}
	proved := trust.ServerValidatesChecksums && info.CRC32C != nil && info.FullObj
	if mp, ok := s.(Multipart); ok && mp.InParts(size) {
		proved = proved && trust.ServerValidatesMultipart
	}
	if proved {
		return PutResult{Info: info, Proof: ProofChecksum}, nil
	}
	got, n, err := ReadbackCRC(ctx, s, key)
	if err != nil {
		return PutResult{}, fmt.Errorf("%w: readback %s: %v", ErrUnverified, key, err)
	}
	if n != size || got != crc {
		return PutResult{}, fmt.Errorf("%w: %s read back as %d bytes crc32c %08x, wrote %d bytes %08x", ErrCorrupt, key, n, got, size, crc)
	}
	return PutResult{Info: info, Proof: ProofReadback}, nil
}

// ReadbackCRC reads a whole object and returns its CRC32C and length.
func ReadbackCRC(ctx context.Context, s Store, key string) (uint32, int64, error) {
	rc, _, err := s.Get(ctx, key)
	if err != nil {
		return 0, 0, err
	}
	defer rc.Close()
	h := batchsnap.NewCRC32C()
	n, err := io.Copy(h, rc)
	if err != nil {
		return 0, n, err
	}
	return h.Sum32(), n, nil
}

// ReadDeadline is st with every read bounded: a Head, and a Get from its
// request to its reader's Close, each get d at most, whatever the
// backend's own retries would take. Recovery reads through it, so a store
// that accepts connections and never answers costs a stated time, not
// minutes of retries.
func ReadDeadline(st Store, d time.Duration) Store { return deadlineStore{Store: st, d: d} }

type deadlineStore struct {
	Store
	d time.Duration
}

func (s deadlineStore) Head(ctx context.Context, key string) (Info, error) {
	ctx, cancel := context.WithTimeout(ctx, s.d)
	defer cancel()
	return s.Store.Head(ctx, key)
}

func (s deadlineStore) Get(ctx context.Context, key string) (io.ReadCloser, Info, error) {
	ctx, cancel := context.WithTimeout(ctx, s.d)
	rc, info, err := s.Store.Get(ctx, key)
	if err != nil {
		cancel()
		return nil, info, err
	}
	return cancelOnClose{ReadCloser: rc, cancel: cancel}, info, nil
}

type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c cancelOnClose) Close() error {
	defer c.cancel()
	return c.ReadCloser.Close()
}
