package s3_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/minio/minio-go/v7/pkg/signer"
	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/impl/contract/batchsnap"
	"github.com/oplogha/oplogha/impl/objstore"
)

// laxMultipartLink sits in front of a real versitygw and makes it, as the
// client sees it, a server that validates the checksum of a single PUT but
// not a multipart upload's: the upload's checksums never reach versitygw
// (the requests are signed again without them), and the full-object
// checksum the client claimed on Complete is echoed back on HEAD, as a
// server that stores the claim without checking it would. The first part of
// the object named damage is damaged on the way.
type laxMultipartLink struct {
	next           http.RoundTripper
	access, secret string
	damage         string

	mu      sync.Mutex
	claimed map[string]string // key → the full-object CRC32C Complete claimed
	damaged int
}

var partCRCs = regexp.MustCompile(`<ChecksumCRC32C>[^<]*</ChecksumCRC32C>`)

func (l *laxMultipartLink) RoundTrip(req *http.Request) (*http.Response, error) {
	q := req.URL.Query()
	key := req.URL.Path[strings.LastIndex(req.URL.Path, "/")+1:]
	switch {
	case req.Method == http.MethodPost && q.Has("uploads"): // CreateMultipartUpload
		return l.resend(req, nil, "X-Amz-Checksum-Algorithm", "X-Amz-Checksum-Type")
	case req.Method == http.MethodPut && q.Has("uploadId"): // UploadPart
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		if key == l.damage && q.Get("partNumber") == "1" {
			body[len(body)/2] ^= 0xff
			l.mu.Lock()
			l.damaged++
			l.mu.Unlock()
		}
		return l.resend(req, body, "X-Amz-Checksum-Crc32c")
	case req.Method == http.MethodPost && q.Has("uploadId"): // CompleteMultipartUpload
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		l.claimed[key] = req.Header.Get("X-Amz-Checksum-Crc32c")
		l.mu.Unlock()
		return l.resend(req, partCRCs.ReplaceAll(body, nil), "X-Amz-Checksum-Crc32c", "X-Amz-Checksum-Type")
	case req.Method == http.MethodHead:
		resp, err := l.next.RoundTrip(req)
		l.mu.Lock()
		claim, ok := l.claimed[key]
		l.mu.Unlock()
		if err == nil && ok && resp.StatusCode == http.StatusOK {
			resp.Header.Set("X-Amz-Checksum-Crc32c", claim)
			resp.Header.Set("X-Amz-Checksum-Type", "FULL_OBJECT")
		}
		return resp, err
	}
	return l.next.RoundTrip(req)
}

// resend sends req again without the headers named, with body when given,
// signed again as the client would have signed it.
func (l *laxMultipartLink) resend(req *http.Request, body []byte, drop ...string) (*http.Response, error) {
	r := req.Clone(req.Context())
	for _, h := range append(drop, "Authorization", "X-Amz-Date", "Content-Md5") {
		r.Header.Del(h)
	}
	if body != nil {
		req.Body.Close()
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		r.Header.Set("Content-Length", strconv.Itoa(len(body)))
		if r.Header.Get("X-Amz-Content-Sha256") != "UNSIGNED-PAYLOAD" {
			sum := sha256.Sum256(body)
			r.Header.Set("X-Amz-Content-Sha256", hex.EncodeToString(sum[:]))
		}
	}
	return l.next.RoundTrip(signer.SignV4(*r, l.access, l.secret, "", "us-east-1"))
}

// A multipart object whose bytes were damaged on the way, on a server that
// validates single PUTs but takes a multipart upload's full-object checksum
// at the client's word, is not proved by that checksum on HEAD: the probe
// of the multipart path shows the server does not validate it, so the
// object is read back and the damage found.
func TestDamagedMultipartOnALaxServerIsReadBack(t *testing.T) {
	srv := startVersity(t)
	link := &laxMultipartLink{next: http.DefaultTransport.(*http.Transport).Clone(), access: srv.AccessKey, secret: srv.SecretKey,
		damage: "damaged", claimed: map[string]string{}}
	st := newStore(t, srv, link, 5<<20)
	trust, err := objstore.Probe(ctx(t), st, "probe")
	require.NoError(t, err)
	require.True(t, trust.ServerValidatesChecksums, "single PUTs are validated: versitygw sees their checksums")
	require.False(t, trust.ServerValidatesMultipart, "the multipart probe's wrong checksum was accepted")
	data := payload(5<<20+4096, 8)
	res, err := objstore.VerifiedPut(ctx(t), st, trust, "damaged", bytes.NewReader(data), int64(len(data)), batchsnap.CRC32C(data))
	require.Equal(t, 1, link.damaged, "the first part went through damaged")
	require.ErrorIs(t, err, objstore.ErrCorrupt, "proved by %q", res.Proof)

	clean := payload(5<<20+4096, 9)
	res, err = objstore.VerifiedPut(ctx(t), st, trust, "clean", bytes.NewReader(clean), int64(len(clean)), batchsnap.CRC32C(clean))
	require.NoError(t, err)
	require.Equal(t, objstore.ProofReadback, res.Proof)
}

// versitygw itself refuses a multipart upload whose full-object checksum is
// wrong: the probe trusts its HEAD for multipart objects too.
func TestVersityValidatesMultipart(t *testing.T) {
	srv := startVersity(t)
	st := newStore(t, srv, nil, 5<<20)
	trust, err := objstore.Probe(ctx(t), st, "probe")
	require.NoError(t, err)
	require.Equal(t, objstore.Trust{ServerValidatesChecksums: true, ServerValidatesMultipart: true}, trust)
	data := payload(5<<20+4096, 10)
	res, err := objstore.VerifiedPut(ctx(t), st, trust, "big", bytes.NewReader(data), int64(len(data)), batchsnap.CRC32C(data))
	require.NoError(t, err)
	require.Equal(t, objstore.ProofChecksum, res.Proof)
}
