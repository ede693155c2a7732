// Package objects reads a run's snapshot store from the harness's side: it
// lists and gets objects with a client of its own (minio-go directly for an
// S3 server, the files themselves for a local store), never through the
// implementation's impl/objstore. What the audits judge in the store is
// then read by code the system under test does not share: a bug in the
// master's store client (a lost page of a listing, a wrong key mapping)
// cannot hide itself by also fooling the judge.
package objects

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Object is one listed object.
type Object struct {
	Key  string
	Size int64
}

// Reader lists and reads a store. GetObject is contract.ObjectGetter's
// method, so a Reader opens snapshots through the contract.
type Reader interface {
	// Name says which store (no credentials).
	Name() string
	// List is every object whose key starts with prefix, in key order.
	List(ctx context.Context, prefix string) ([]Object, error)
	GetObject(ctx context.Context, key string) (io.ReadCloser, int64, error)
}

// Putter is a store the harness can also write an object into through the
// store's own API (the S3 server, the directory): a fault that places an
// object where a master will meet it.
type Putter interface {
	PutObject(ctx context.Context, key string, data []byte) error
}

// ErrNotFound: no object under that key.
var ErrNotFound = errors.New("object not found")

// S3 reads bucket on the S3 server at endpoint (http(s)://host:port) with
// the given credentials; tr carries the server's CA for https (nil: the
// default transport).
func S3(endpoint, bucket, accessKey, secretKey string, tr http.RoundTripper) (Reader, error) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("s3 endpoint %q: want http(s)://host:port", endpoint)
	}
	c, err := minio.New(u.Host, &minio.Options{
		Creds:        credentials.NewStaticV4(accessKey, secretKey, ""),
		Secure:       u.Scheme == "https",
		Region:       "us-east-1",
		BucketLookup: minio.BucketLookupPath,
		Transport:    tr,
	})
	if err != nil {
		return nil, fmt.Errorf("s3 client: %w", err)
	}
	return &s3Reader{c: c, bucket: bucket, endpoint: endpoint}, nil
}

type s3Reader struct {
	c        *minio.Client
	bucket   string
	endpoint string
}

func (s *s3Reader) Name() string { return "s3:" + s.endpoint + "/" + s.bucket }

func (s *s3Reader) List(ctx context.Context, prefix string) ([]Object, error) {
	var out []Object
	for oi := range s.c.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if oi.Err != nil {
			return out, fmt.Errorf("list %s: %w", prefix, oi.Err)
		}
		out = append(out, Object{Key: oi.Key, Size: oi.Size})
	}
	return out, nil
}

func (s *s3Reader) PutObject(ctx context.Context, key string, data []byte) error {
	if _, err := s.c.PutObject(ctx, s.bucket, key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	return nil
}

func (s *s3Reader) GetObject(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	o, err := s.c.GetObject(ctx, s.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, 0, fmt.Errorf("get %s: %w", key, err)
	}
	st, err := o.Stat()
	if err != nil {
		o.Close()
		if minio.ToErrorResponse(err).Code == "NoSuchKey" {
			return nil, 0, fmt.Errorf("%s: %w", key, ErrNotFound)
		}
		return nil, 0, fmt.Errorf("get %s: %w", key, err)
	}
	return o, st.Size, nil
}

// Dir reads a local store: each key is a file under root.
func Dir(root string) Reader { return dirReader{root: root} }

type dirReader struct{ root string }

func (d dirReader) Name() string { return "localdir:" + d.root }

func (d dirReader) List(_ context.Context, prefix string) ([]Object, error) {
	var out []Object
	err := filepath.WalkDir(d.root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		// A .put-* file is an upload in flight (renamed into place when
		// complete): a listing shows it no more than S3 shows an unfinished
		// multipart upload.
		if e.IsDir() || strings.HasPrefix(e.Name(), ".put-") {
			return nil
		}
		rel, err := filepath.Rel(d.root, p)
		if err != nil {
			return err
		}
		key := filepath.ToSlash(rel)
		if !strings.HasPrefix(key, prefix) {
			return nil
		}
		fi, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil // deleted while the walk ran
		}
		if err != nil {
			return err
		}
		out = append(out, Object{Key: key, Size: fi.Size()})
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, err
}

func (d dirReader) PutObject(_ context.Context, key string, data []byte) error {
	if key == "" || strings.Contains(key, "..") || strings.HasPrefix(key, "/") {
		return fmt.Errorf("put %q: not a key of this store", key)
	}
	p := filepath.Join(d.root, filepath.FromSlash(key))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, data, 0o644)
}

func (d dirReader) GetObject(_ context.Context, key string) (io.ReadCloser, int64, error) {
	if key == "" || strings.Contains(key, "..") || strings.HasPrefix(key, "/") {
		return nil, 0, fmt.Errorf("get %q: not a key of this store", key)
	}
	f, err := os.Open(filepath.Join(d.root, filepath.FromSlash(key)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, fmt.Errorf("%s: %w", key, ErrNotFound)
	}
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, fi.Size(), nil
}
