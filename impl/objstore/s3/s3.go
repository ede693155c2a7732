// Package s3 is the object store backed by an S3-compatible server through
// minio-go. Checksums are CRC32C (what upstream's snapshot format records
// for every object), computed locally and sent precomputed (single part: the
// x-amz-checksum-crc32c header; multipart: per part, and FULL_OBJECT on
// Complete), every write is create-only (If-None-Match: *, completed through
// minio.Core so the condition reaches CompleteMultipartUpload), and Head asks
// for the stored checksum.
package s3

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/oplogha/oplogha/impl/contract/batchsnap"
	"github.com/oplogha/oplogha/impl/objstore"
)

// Config reaches one bucket.
type Config struct {
	Endpoint  string // http(s)://host:port
	Bucket    string
	Region    string
	AccessKey string
	SecretKey string
	PartSize  int64 // multipart part size and threshold (default 16 MiB, minimum 5 MiB)
	// PartUploads is how many parts of one object upload at once (default 4).
	PartUploads int
	Transport   http.RoundTripper
}

var (
	_ objstore.Store   = (*Store)(nil)
	_ objstore.Uploads = (*Store)(nil)
)

// Store is an S3 bucket.
type Store struct {
	core        minio.Core
	bucket      string
	partSize    int64
	partUploads int
	endpoint    string
	uploadPage  int // uploads per ListMultipartUploads request (0: 1000, the S3 maximum)
}

// New connects (lazily) to the bucket.
func New(cfg Config) (*Store, error) {
	u, err := url.Parse(cfg.Endpoint)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("s3 endpoint %q: want http(s)://host:port", cfg.Endpoint)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	if cfg.PartSize == 0 {
		cfg.PartSize = 16 << 20
	}
	if cfg.PartSize < 5<<20 {
		return nil, fmt.Errorf("s3 part size %d below the S3 minimum of 5 MiB", cfg.PartSize)
	}
	c, err := minio.NewCore(u.Host, &minio.Options{
		Creds:        credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""),
		Secure:       u.Scheme == "https",
		Region:       cfg.Region,
		BucketLookup: minio.BucketLookupPath,
		Transport:    cfg.Transport,
	})
	if err != nil {
		return nil, fmt.Errorf("s3 client: %w", err)
	}
	if cfg.PartUploads <= 0 {
		cfg.PartUploads = 4
	}
	return &Store{core: *c, bucket: cfg.Bucket, partSize: cfg.PartSize, partUploads: cfg.PartUploads, endpoint: cfg.Endpoint}, nil
}

// Name describes the store (no credentials).
func (s *Store) Name() string { return "s3:" + s.endpoint + "/" + s.bucket }

// EnsureBucket creates the bucket if it does not exist (tests, harness).
func (s *Store) EnsureBucket(ctx context.Context) error {
	ok, err := s.core.BucketExists(ctx, s.bucket)
	if err != nil {
		return fmt.Errorf("bucket %s: %w", s.bucket, err)
	}
	if ok {
		return nil
	}
	if err := s.core.MakeBucket(ctx, s.bucket, minio.MakeBucketOptions{}); err != nil {
		return fmt.Errorf("make bucket %s: %w", s.bucket, err)
	}
	return nil
}

const (
	hdrCRC  = "x-amz-checksum-crc32c"
	hdrAlg  = "x-amz-checksum-algorithm"
	hdrType = "x-amz-checksum-type"
)

// PutIfAbsent uploads src create-only with its precomputed checksum.
//
// minio-go resends a request whose reply was lost; when the lost attempt had
// already stored the object, the resent one is refused because the key
// exists. So a refusal is checked against the object at the key: one with
// our size and our full-object CRC32C holds our bytes (as far as a CRC32C
// can tell two objects of one size apart) and the put succeeds. Anything
// else there, or an object without a full-object CRC32C to compare, stays
// ErrExists.
func (s *Store) PutIfAbsent(ctx context.Context, key string, src io.ReaderAt, size int64, crc uint32) error {
	var err error
	if size <= s.partSize {
		opts := minio.PutObjectOptions{DisableContentSha256: true, DisableMultipart: true,
			UserMetadata: map[string]string{hdrCRC: s3Base64(crc)}}
		opts.SetMatchETagExcept("*")
		_, err = s.core.PutObject(ctx, s.bucket, key, io.NewSectionReader(src, 0, size), size, "", "", opts)
		err = mapErr(key, err)
	} else {
		err = s.putMultipart(ctx, key, src, size, crc, s.partSize)
	}
	if errors.Is(err, objstore.ErrExists) {
		return s.settleExists(ctx, key, size, crc, err)
	}
	return err
}

// settleExists turns a create-only refusal into success when the object at
// key holds our bytes, and returns refused otherwise.
func (s *Store) settleExists(ctx context.Context, key string, size int64, crc uint32, refused error) error {
	in, err := s.Head(ctx, key)
	if err != nil {
		// Still a collision for the caller; the head error is context only.
		return fmt.Errorf("%w (head to compare: %v)", refused, err)
	}
	if holds(in, size, crc) {
		return nil
	}
	return refused
}

// holds reports whether in proves an object of size bytes whose full-object
// CRC32C is crc. Without a stored full-object CRC32C nothing is proven.
func holds(in objstore.Info, size int64, crc uint32) bool {
	return in.Size == size && in.CRC32C != nil && in.FullObj && *in.CRC32C == crc
}

// s3Base64 is a CRC32C as S3's x-amz-checksum-crc32c carries it: the
// standard base64 of its four big-endian bytes.
func s3Base64(crc uint32) string {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], crc)
	return base64.StdEncoding.EncodeToString(b[:])
}

// parseS3CRC32C is the inverse of s3Base64; a composite checksum
// ("<base64>-<parts>") is not one.
func parseS3CRC32C(v string) (uint32, bool) {
	b, err := base64.StdEncoding.Strict().DecodeString(v)
	if err != nil || len(b) != 4 {
		return 0, false
	}
	return binary.BigEndian.Uint32(b), true
}

// InParts says whether a put of size bytes is a multipart upload.
func (s *Store) InParts(size int64) bool { return size > s.partSize }

// PutInParts puts data create-only as a multipart upload of parts of the
// least size S3 allows (5 MiB): two parts or more for the probe's size.
func (s *Store) PutInParts(ctx context.Context, key string, data []byte, crc uint32) error {
	return s.putMultipart(ctx, key, bytes.NewReader(data), int64(len(data)), crc, 5<<20)
}

var _ objstore.Multipart = (*Store)(nil)

func (s *Store) putMultipart(ctx context.Context, key string, src io.ReaderAt, size int64, crc uint32, partSize int64) error {
	init := minio.PutObjectOptions{UserMetadata: map[string]string{hdrAlg: "CRC32C", hdrType: "FULL_OBJECT"}}
	init.SetMatchETagExcept("*")
	id, err := s.core.NewMultipartUpload(ctx, s.bucket, key, init)
	if err != nil {
		return mapErr(key, err)
	}
	done := false
	defer func() {
		if !done {
			_ = s.core.AbortMultipartUpload(context.WithoutCancel(ctx), s.bucket, key, id)
		}
	}()
	// Parts go up PartUploads at a time (minio-go's own PutObject default),
	// each with its CRC32C computed just before it is sent.
	count := int((size + partSize - 1) / partSize)
	parts := make([]minio.CompletePart, count)
	errs := make([]error, count)
	sem := make(chan struct{}, s.partUploads)
	var wg sync.WaitGroup
	for i := range count {
		n, off := i+1, int64(i)*partSize
		length := min(partSize, size-off)
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			h := batchsnap.NewCRC32C()
			if _, err := io.Copy(h, io.NewSectionReader(src, off, length)); err != nil {
				errs[i] = err
				return
			}
			partCRC := s3Base64(h.Sum32())
			p, err := s.core.PutObjectPart(ctx, s.bucket, key, id, n, io.NewSectionReader(src, off, length), length,
				minio.PutObjectPartOptions{DisableContentSha256: true, CustomHeader: http.Header{hdrCRC: []string{partCRC}}})
			if err != nil {
				errs[i] = mapErr(key, err)
				return
			}
			parts[i] = minio.CompletePart{PartNumber: n, ETag: p.ETag, ChecksumCRC32C: partCRC}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	complete := minio.PutObjectOptions{UserMetadata: map[string]string{hdrCRC: s3Base64(crc), hdrType: "FULL_OBJECT"}}
	complete.SetMatchETagExcept("*")
	if _, err := s.core.CompleteMultipartUpload(ctx, s.bucket, key, id, parts, complete); err != nil {
		return mapErr(key, err)
	}
	done = true
	return nil
}

// Head reads metadata with checksum mode on.
func (s *Store) Head(ctx context.Context, key string) (objstore.Info, error) {
	oi, err := s.core.StatObject(ctx, s.bucket, key, minio.StatObjectOptions{Checksum: true})
	if err != nil {
		return objstore.Info{}, mapErr(key, err)
	}
	return info(key, oi)
}

func info(key string, oi minio.ObjectInfo) (objstore.Info, error) {
	in := objstore.Info{Key: key, Size: oi.Size, VersionID: oi.VersionID, ModTime: oi.LastModified}
	if oi.ChecksumCRC32C != "" {
		// A multipart object's CRC32C is a composite of its parts
		// ("<base64>-<parts>", checksum type COMPOSITE) unless the upload
		// asked for FULL_OBJECT: only a full-object one proves the bytes.
		v, ok := parseS3CRC32C(oi.ChecksumCRC32C)
		composite := strings.EqualFold(oi.ChecksumMode, "COMPOSITE") || strings.Contains(oi.ChecksumCRC32C, "-")
		switch {
		case ok:
			in.CRC32C = &v
			in.FullObj = !composite
		case !composite:
			return in, fmt.Errorf("%s: %w: server checksum %q", key, objstore.ErrCorrupt, oi.ChecksumCRC32C)
		}
	}
	return in, nil
}

// Get opens an object.
func (s *Store) Get(ctx context.Context, key string) (io.ReadCloser, objstore.Info, error) {
	rc, oi, _, err := s.core.GetObject(ctx, s.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, objstore.Info{}, mapErr(key, err)
	}
	in, _ := info(key, oi)
	return rc, in, nil
}

// List lists objects under prefix.
func (s *Store) List(ctx context.Context, prefix string) ([]objstore.Info, error) {
	var out []objstore.Info
	for oi := range s.core.Client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if oi.Err != nil {
			return out, mapErr(prefix, oi.Err)
		}
		out = append(out, objstore.Info{Key: oi.Key, Size: oi.Size, ModTime: oi.LastModified, VersionID: oi.VersionID})
	}
	return out, nil
}

// Delete removes keys one by one (a missing key is not an error).
func (s *Store) Delete(ctx context.Context, keys []string) error {
	var errs []error
	for _, k := range keys {
		if err := s.core.RemoveObject(ctx, s.bucket, k, minio.RemoveObjectOptions{}); err != nil {
			if e := mapErr(k, err); !errors.Is(e, objstore.ErrNotFound) {
				errs = append(errs, e)
			}
		}
	}
	return errors.Join(errs...)
}

// mapErr turns S3 errors into the store's typed errors.
func mapErr(key string, err error) error {
	if err == nil {
		return nil
	}
	r := minio.ToErrorResponse(err)
	switch {
	case r.StatusCode == http.StatusPreconditionFailed || r.Code == "PreconditionFailed":
		return fmt.Errorf("%s: %w", key, objstore.ErrExists)
	case r.StatusCode == http.StatusConflict:
		return fmt.Errorf("%s: %w: %s", key, objstore.ErrConflict, r.Code)
	case r.Code == "BadDigest" || r.Code == "XAmzContentChecksumMismatch" || r.Code == "InvalidDigest":
		return fmt.Errorf("%s: %w: %s", key, objstore.ErrCorrupt, r.Message)
	case r.StatusCode == http.StatusNotFound || r.Code == "NoSuchKey":
		if r.Code != "" && r.Code != "NoSuchKey" {
			return fmt.Errorf("%s: %w (%s: %s)", key, objstore.ErrNotFound, r.Code, r.Message)
		}
		return fmt.Errorf("%s: %w", key, objstore.ErrNotFound)
	}
	return fmt.Errorf("%s: %w", key, err)
}

// ListUploads lists the multipart uploads under prefix that were begun and
// neither completed nor aborted, page by page.
//
// Two servers answer outside S3 here. versitygw (v1.8) refuses the key and
// upload-id markers it returned itself when a page ends inside one key's
// uploads ("Invalid uploadId marker"); the listing then goes on from the
// next key, so further uploads of that key are missed this time and listed
// once the ones before them are aborted. gofakes3 answers NoSuchUpload for a
// bucket that has never had an upload: no uploads. versitygw's Initiated is
// the last time a part arrived, in whole seconds.
func (s *Store) ListUploads(ctx context.Context, prefix string) ([]objstore.Upload, error) {
	page := s.uploadPage
	if page <= 0 {
		page = 1000
	}
	var out []objstore.Upload
	seen := map[[2]string]bool{}
	keyMarker, idMarker := "", ""
	for {
		r, err := s.core.ListMultipartUploads(ctx, s.bucket, prefix, keyMarker, idMarker, "", page)
		if err != nil {
			switch code := minio.ToErrorResponse(err).Code; {
			case code == "NoSuchUpload" && keyMarker == "":
				return out, nil
			case code == "InvalidArgument" && idMarker != "":
				idMarker = ""
				continue
			}
			return out, fmt.Errorf("list uploads under %q: %w", prefix, err)
		}
		for _, u := range r.Uploads {
			if id := [2]string{u.Key, u.UploadID}; !seen[id] {
				seen[id] = true
				out = append(out, objstore.Upload{Key: u.Key, UploadID: u.UploadID, Initiated: u.Initiated})
			}
		}
		if !r.IsTruncated {
			return out, nil
		}
		if r.NextKeyMarker == keyMarker && r.NextUploadIDMarker == idMarker {
			return out, fmt.Errorf("list uploads under %q: the server repeats the page after %q %q", prefix, keyMarker, idMarker)
		}
		keyMarker, idMarker = r.NextKeyMarker, r.NextUploadIDMarker
	}
}

// AbortUpload aborts one multipart upload; NoSuchUpload (already completed
// or aborted) is success.
func (s *Store) AbortUpload(ctx context.Context, key, uploadID string) error {
	err := s.core.AbortMultipartUpload(ctx, s.bucket, key, uploadID)
	if err == nil || minio.ToErrorResponse(err).Code == "NoSuchUpload" {
		return nil
	}
	return fmt.Errorf("abort upload %s: %w", uploadID, mapErr(key, err))
}
