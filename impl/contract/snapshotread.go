package contract

import (
	"context"
	"fmt"
	"hash"
	"io"
	"path"
	"strings"

	"github.com/minio/crc64nvme"
)

// ObjectGetter is how the snapshot readers below reach an object store:
// one GET by exact key, returning the object's bytes and its stored size.
// This package does no I/O of its own; the caller's store does it
// (impl/objstore's Getter adapts a Store).
type ObjectGetter interface {
	GetObject(ctx context.Context, key string) (rc io.ReadCloser, size int64, err error)
}

// MaxSmallObjectSize bounds the descriptor and manifest a reader takes.
const MaxSmallObjectSize = 16 << 20

// ReadSmallObject reads a small object (descriptor, manifest) whole; one
// above MaxSmallObjectSize is ErrSnapshotOverflow. The store's errors are
// returned as they are.
func ReadSmallObject(ctx context.Context, g ObjectGetter, key string) ([]byte, error) {
	rc, size, err := g.GetObject(ctx, key)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	if size > MaxSmallObjectSize {
		return nil, snapshotError(ErrSnapshotOverflow, "%s is %d bytes", key, size)
	}
	data, err := io.ReadAll(io.LimitReader(rc, MaxSmallObjectSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxSmallObjectSize {
		return nil, snapshotError(ErrSnapshotOverflow, "%s is more than %d bytes", key, MaxSmallObjectSize)
	}
	return data, nil
}

// ReadSnapshotHead reads the descriptor at prefix (a schema-v1 one whose
// object_prefix is prefix) and the manifest it names, each decoded and
// validated, and checks that they agree (AgreeManifest). What was read is
// returned with an error too. Errors name the object at fault.
func ReadSnapshotHead(ctx context.Context, g ObjectGetter, prefix string) (Descriptor, Manifest, error) {
	key := path.Join(prefix, DescriptorName)
	raw, err := ReadSmallObject(ctx, g, key)
	if err != nil {
		return Descriptor{}, Manifest{}, fmt.Errorf("descriptor: %w", named(key, err))
	}
	d, err := DecodeDescriptor(raw)
	if err != nil {
		return Descriptor{}, Manifest{}, fmt.Errorf("descriptor %s: %w", key, err)
	}
	if d.Legacy() {
		return d, Manifest{}, fmt.Errorf("descriptor %s: %w", key, snapshotError(ErrSnapshotIdentity, "a legacy descriptor, which names no manifest"))
	}
	if d.ObjectPrefix != prefix {
		return d, Manifest{}, fmt.Errorf("descriptor %s: %w", key, snapshotError(ErrSnapshotIdentity, "names object prefix %q", d.ObjectPrefix))
	}
	raw, err = ReadSmallObject(ctx, g, d.ManifestKey)
	if err != nil {
		return d, Manifest{}, fmt.Errorf("manifest: %w", named(d.ManifestKey, err))
	}
	m, err := DecodeManifest(raw)
	if err != nil {
		return d, Manifest{}, fmt.Errorf("manifest %s: %w", d.ManifestKey, err)
	}
	if err := AgreeManifest(d, m); err != nil {
		return d, m, fmt.Errorf("manifest %s: %w", d.ManifestKey, err)
	}
	return d, m, nil
}

// StreamSnapshotObjects copies the payload objects m lists (under prefix)
// into w in stream order, each checked against its manifest entry as it
// streams: the stored size, the bytes read and the full-object CRC64NVME.
// An object is hashed to its end even when w fails first, so a corrupt
// object is named as such rather than by the symptom w saw; w's error is
// returned after the object's own verdict.
func StreamSnapshotObjects(ctx context.Context, g ObjectGetter, prefix string, m Manifest, w io.Writer) error {
	for _, e := range m.Entries() {
		if err := copyVerified(ctx, g, path.Join(prefix, e.Key), e, w); err != nil {
			return err
		}
	}
	return nil
}

func copyVerified(ctx context.Context, g ObjectGetter, key string, e ManifestEntry, w io.Writer) error {
	rc, size, err := g.GetObject(ctx, key)
	if err != nil {
		return named(key, err)
	}
	defer rc.Close()
	if size != e.Size {
		return snapshotError(ErrSnapshotIdentity, "%s is %d bytes, manifest says %d", key, size, e.Size)
	}
	want, err := checksumOf(e.Checksum)
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	h := crc64nvme.New()
	sink := &forwardOnce{w: w}
	n, err := io.Copy(io.MultiWriter(hashWriter{h}, sink), io.LimitReader(rc, e.Size+1))
	if err != nil {
		return named(key, err)
	}
	if n != e.Size {
		return snapshotError(ErrSnapshotTruncated, "%s gave %d bytes, manifest says %d", key, n, e.Size)
	}
	if got := h.Sum64(); got != want {
		return snapshotError(ErrSnapshotChecksum, "%s crc64nvme %s, manifest says %s", key, CRC64NVME(got), e.Checksum)
	}
	return sink.err
}

// named makes sure a store's error names the key.
func named(key string, err error) error {
	if strings.Contains(err.Error(), key) {
		return err
	}
	return fmt.Errorf("%s: %w", key, err)
}

type hashWriter struct{ h hash.Hash64 }

func (w hashWriter) Write(p []byte) (int, error) { return w.h.Write(p) }

// forwardOnce forwards writes until the first error, then swallows the rest
// (remembering the error) so the caller can finish hashing.
type forwardOnce struct {
	w   io.Writer
	err error
}

func (f *forwardOnce) Write(p []byte) (int, error) {
	if f.err == nil {
		if _, err := f.w.Write(p); err != nil {
			f.err = err
		}
	}
	return len(p), nil
}
