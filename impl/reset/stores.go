package reset

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"

	"github.com/minio/minio-go/v7"

	"github.com/oplogha/oplogha/impl/objstore/localdir"
)

// resetStore is the snapshot store as reset sees it: list and remove
// everything under a prefix.
type resetStore interface {
	list(ctx context.Context, prefix string) ([]objectResidue, error)
	remove(ctx context.Context, objs []objectResidue) error
	describe(prefix string) string
}

// s3Objects is an S3 bucket (minio-go, as the master's store).
type s3Objects struct {
	core   *minio.Core
	bucket string
}

func (s s3Objects) describe(prefix string) string { return "s3://" + s.bucket + "/" + prefix }

// list lists the objects under prefix and the multipart uploads started
// there and never completed (a killed writer's; one could still be
// completed by a stale process).
func (s s3Objects) list(ctx context.Context, prefix string) ([]objectResidue, error) {
	var out []objectResidue
	for oi := range s.core.Client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if oi.Err != nil {
			return nil, fmt.Errorf("list objects: %w", oi.Err)
		}
		out = append(out, objectResidue{Key: oi.Key, Size: oi.Size})
	}
	keyMarker, idMarker := "", ""
	for page := 0; ; page++ {
		if page == resetMaxUploadPage {
			return nil, fmt.Errorf("more than %d pages of incomplete uploads under %s", resetMaxUploadPage, prefix)
		}
		r, err := s.core.ListMultipartUploads(ctx, s.bucket, prefix, keyMarker, idMarker, "", 1000)
		if err != nil {
			if minio.ToErrorResponse(err).Code == "NoSuchUpload" {
				break // gofakes3's answer for a bucket that never had an upload; S3 lists none
			}
			return nil, fmt.Errorf("list multipart uploads: %w", err)
		}
		for _, u := range r.Uploads {
			out = append(out, objectResidue{Key: u.Key, UploadID: u.UploadID})
		}
		if !r.IsTruncated || (r.NextKeyMarker == keyMarker && r.NextUploadIDMarker == idMarker) {
			break
		}
		keyMarker, idMarker = r.NextKeyMarker, r.NextUploadIDMarker
	}
	return out, nil
}

func (s s3Objects) remove(ctx context.Context, objs []objectResidue) error {
	var keys []string
	var errs []error
	for _, o := range objs {
		if o.UploadID != "" {
			if err := s.core.AbortMultipartUpload(ctx, s.bucket, o.Key, o.UploadID); err != nil {
				if minio.ToErrorResponse(err).Code != "NoSuchUpload" {
					errs = append(errs, fmt.Errorf("abort upload %s %s: %w", o.Key, o.UploadID, err))
				}
			}
			continue
		}
		keys = append(keys, o.Key)
	}
	for len(keys) > 0 {
		n := min(len(keys), resetDeleteBatch)
		ch := make(chan minio.ObjectInfo, n)
		for _, k := range keys[:n] {
			ch <- minio.ObjectInfo{Key: k}
		}
		close(ch)
		for e := range s.core.Client.RemoveObjects(ctx, s.bucket, ch, minio.RemoveObjectsOptions{}) {
			if e.Err != nil && minio.ToErrorResponse(e.Err).Code != "NoSuchKey" {
				errs = append(errs, fmt.Errorf("delete %s: %w", e.ObjectName, e.Err))
			}
		}
		keys = keys[n:]
	}
	return errors.Join(errs...)
}

// localObjects is a directory used as the store (impl/objstore/localdir).
type localObjects struct{ dir string }

func (l localObjects) describe(prefix string) string {
	return "local:" + path.Join(l.dir, prefix) + "/"
}

func (l localObjects) list(ctx context.Context, prefix string) ([]objectResidue, error) {
	if _, err := os.Stat(l.dir); errors.Is(err, fs.ErrNotExist) {
		return nil, nil // no directory: no objects (and none is created)
	}
	infos, err := (&localdir.Store{Root: l.dir}).List(ctx, prefix)
	if err != nil {
		return nil, err
	}
	out := make([]objectResidue, 0, len(infos))
	for _, in := range infos {
		out = append(out, objectResidue{Key: in.Key, Size: in.Size})
	}
	return out, nil
}

func (l localObjects) remove(ctx context.Context, objs []objectResidue) error {
	keys := make([]string, 0, len(objs))
	for _, o := range objs {
		keys = append(keys, o.Key)
	}
	return (&localdir.Store{Root: l.dir}).Delete(ctx, keys)
}
