package reset

import (
	"cmp"
	"fmt"
	"net/url"
	"os"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/oplogha/oplogha/impl/connect"
)

// Bounds of the reads.
const (
	resetPageKeys      = 1000  // keys per page of a keys-only listing
	resetPageValues    = 100   // keys per page of a listing with values
	resetMaxAttempts   = 3     // whole scans retried when etcd compacted the read revision away
	resetMaxUploadPage = 10000 // pages of incomplete multipart uploads
	resetDeleteBatch   = 1000  // objects per multi-object delete
)

// Options are the namespace to reset (connect.Target: etcd, cluster id,
// snapshot store) and how much of its residue to print.
type Options struct {
	connect.Target
	MaxListed int // residue lines printed per kind (keys, leases, objects); the counts are always complete
}

// Validate checks every setting that needs no connection and no file (the
// target's and the listing bound); every failure is a *connect.OptionError.
func (o Options) Validate() error {
	if o.MaxListed < 0 {
		return connect.Errorf("--max-listed %d: want >= 0", o.MaxListed)
	}
	return o.Target.Validate()
}

// validateConnect is Validate for the commands that talk to etcd.
func (o Options) validateConnect() error {
	if err := o.Validate(); err != nil {
		return err
	}
	return o.Target.ValidateConnect()
}

// objects opens the snapshot store the flags name (nil: none named).
func (o Options) objects() (resetStore, error) {
	if err := o.ValidateStore(); err != nil {
		return nil, err
	}
	switch {
	case o.LocalStoreDir != "":
		return localObjects{dir: o.LocalStoreDir}, nil
	case o.S3Endpoint == "":
		return nil, nil
	}
	u, _ := url.Parse(o.S3Endpoint) // ValidateStore parsed it
	access, secret := os.Getenv(connect.EnvS3AccessKey), os.Getenv(connect.EnvS3SecretKey)
	if access == "" || secret == "" {
		return nil, fmt.Errorf("S3 credentials: set %s and %s", connect.EnvS3AccessKey, connect.EnvS3SecretKey)
	}
	c, err := minio.NewCore(u.Host, &minio.Options{Creds: credentials.NewStaticV4(access, secret, ""),
		Secure: u.Scheme == "https", Region: cmp.Or(o.S3Region, "us-east-1"), BucketLookup: minio.BucketLookupPath})
	if err != nil {
		return nil, fmt.Errorf("s3 client: %w", err)
	}
	return s3Objects{core: c, bucket: o.S3Bucket}, nil
}
