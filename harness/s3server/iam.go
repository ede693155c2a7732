package s3server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/signer"
)

// Identity is an S3 user the harness made.
type Identity struct {
	AccessKey string
	SecretKey string
}

// CreateWriter makes a versitygw user of role "user" (no bucket of its own,
// no admin rights) and gives it, through a bucket policy on bucket, object
// reads and writes under prefix/ and the listing of the bucket, nothing
// else. versitygw enforces the policy per request: an object outside the
// prefix, another bucket, bucket creation or the admin API is AccessDenied.
// Its secret travels in the body of a signed admin request, never on a
// command line.
func (s *Server) CreateWriter(ctx context.Context, bucket, prefix string) (Identity, error) {
	id := Identity{AccessKey: "writer" + secret(4), SecretKey: secret(16)}
	body, err := xml.Marshal(struct {
		XMLName xml.Name `xml:"Account"`
		Access  string   `xml:"Access"`
		Secret  string   `xml:"Secret"`
		Role    string   `xml:"Role"`
	}{Access: id.AccessKey, Secret: id.SecretKey, Role: "user"})
	if err != nil {
		return Identity{}, err
	}
	if err := s.admin(ctx, "/create-user", body); err != nil {
		return Identity{}, fmt.Errorf("create snapshot writer: %w", err)
	}
	policy, err := json.Marshal(map[string]any{
		"Version": "2012-10-17",
		"Statement": []map[string]any{{
			"Effect":    "Allow",
			"Principal": map[string]any{"AWS": []string{id.AccessKey}},
			"Action":    []string{"s3:PutObject", "s3:GetObject", "s3:DeleteObject", "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts"},
			"Resource":  []string{"arn:aws:s3:::" + bucket + "/" + prefix + "/*"},
		}, {
			"Effect":    "Allow",
			"Principal": map[string]any{"AWS": []string{id.AccessKey}},
			"Action":    []string{"s3:ListBucket", "s3:ListBucketMultipartUploads", "s3:GetBucketLocation"},
			"Resource":  []string{"arn:aws:s3:::" + bucket},
		}},
	})
	if err != nil {
		return Identity{}, err
	}
	cli, err := s.rootClient()
	if err != nil {
		return Identity{}, err
	}
	if err := cli.SetBucketPolicy(ctx, bucket, string(policy)); err != nil {
		return Identity{}, fmt.Errorf("snapshot writer policy on %s: %w", bucket, err)
	}
	return id, nil
}

// rootClient is a minio-go client with the root credentials.
func (s *Server) rootClient() (*minio.Client, error) {
	tr, err := s.Transport()
	if err != nil {
		return nil, err
	}
	return s.client(tr, s.AccessKey, s.SecretKey)
}

// Client is a minio-go client of this server with the given identity.
func (s *Server) Client(id Identity) (*minio.Client, error) {
	tr, err := s.Transport()
	if err != nil {
		return nil, err
	}
	return s.client(tr, id.AccessKey, id.SecretKey)
}

func (s *Server) client(tr http.RoundTripper, access, secretKey string) (*minio.Client, error) {
	host, secure := s.Endpoint[len("http://"):], false
	if s.CAFile != "" {
		host, secure = s.Endpoint[len("https://"):], true
	}
	return minio.New(host, &minio.Options{Creds: credentials.NewStaticV4(access, secretKey, ""), Secure: secure,
		Region: "us-east-1", BucketLookup: minio.BucketLookupPath, Transport: tr})
}

// admin sends one versitygw admin API request (PATCH, SigV4 with the root
// credentials).
func (s *Server) admin(ctx context.Context, path string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPatch, s.Endpoint+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	sum := sha256.Sum256(body)
	req.Header.Set("X-Amz-Content-Sha256", hex.EncodeToString(sum[:]))
	req = signer.SignV4(*req, s.AccessKey, s.SecretKey, "", "us-east-1")
	tr, err := s.Transport()
	if err != nil {
		return err
	}
	hc := &http.Client{Transport: tr}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode >= 300 {
		return fmt.Errorf("%s: %s: %s", path, resp.Status, bytes.TrimSpace(msg))
	}
	return nil
}
