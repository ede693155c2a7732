// Package localdir is the object store backed by a directory: for tests,
// development, or an explicitly shared filesystem. It keeps no checksums, so
// every put is verified by complete readback.
package localdir

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/oplogha/oplogha/impl/objstore"
)

var (
	_ objstore.Store   = (*Store)(nil)
	_ objstore.Uploads = (*Store)(nil)
)

// Store is a directory of objects; keys are slash-separated relative paths.
type Store struct {
	Root string
}

// New returns a store rooted at dir (created if missing).
func New(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return &Store{Root: dir}, nil
}

// Name describes the store.
func (s *Store) Name() string { return "localdir:" + s.Root }

func (s *Store) path(key string) (string, error) {
	clean := filepath.Clean(filepath.FromSlash(key))
	if key == "" || filepath.IsAbs(clean) || clean == "." || strings.HasPrefix(clean, "..") {
		return "", fmt.Errorf("object key %q escapes the store", key)
	}
	return filepath.Join(s.Root, clean), nil
}

// PutIfAbsent writes a temporary file, syncs it and links it into place:
// link(2) fails if the key exists, so the put is create-only and atomic.
func (s *Store) PutIfAbsent(ctx context.Context, key string, src io.ReaderAt, size int64, _ uint32) error {
	p, err := s.path(key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".put-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, io.NewSectionReader(src, 0, size)); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Link(tmp.Name(), p); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s: %w", key, objstore.ErrExists)
		}
		return err
	}
	return nil
}

// Head stats an object (no checksum: callers read back).
func (s *Store) Head(ctx context.Context, key string) (objstore.Info, error) {
	p, err := s.path(key)
	if err != nil {
		return objstore.Info{}, err
	}
	fi, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return objstore.Info{}, fmt.Errorf("%s: %w", key, objstore.ErrNotFound)
	}
	if err != nil {
		return objstore.Info{}, err
	}
	return objstore.Info{Key: key, Size: fi.Size(), ModTime: fi.ModTime()}, nil
}

// Get opens an object.
func (s *Store) Get(ctx context.Context, key string) (io.ReadCloser, objstore.Info, error) {
	info, err := s.Head(ctx, key)
	if err != nil {
		return nil, info, err
	}
	p, _ := s.path(key)
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, info, fmt.Errorf("%s: %w", key, objstore.ErrNotFound)
	}
	return f, info, err
}

// List walks the objects under prefix, in key order.
func (s *Store) List(ctx context.Context, prefix string) ([]objstore.Info, error) {
	var out []objstore.Info
	err := filepath.WalkDir(s.Root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || strings.HasPrefix(d.Name(), ".put-") {
			return nil
		}
		rel, _ := filepath.Rel(s.Root, p)
		key := filepath.ToSlash(rel)
		if !strings.HasPrefix(key, prefix) {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out = append(out, objstore.Info{Key: key, Size: fi.Size(), ModTime: fi.ModTime()})
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, err
}

// Delete removes keys.
func (s *Store) Delete(ctx context.Context, keys []string) error {
	var errs []error
	for _, k := range keys {
		p, err := s.path(k)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// ListUploads lists nothing: a directory has no multipart uploads (an
// interrupted put leaves a temporary file, which List skips).
func (s *Store) ListUploads(context.Context, string) ([]objstore.Upload, error) { return nil, nil }

// AbortUpload has nothing to abort: every upload is already gone.
func (s *Store) AbortUpload(context.Context, string, string) error { return nil }
