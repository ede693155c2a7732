package s3_test

import (
	"context"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/harness/s3server"
	"github.com/oplogha/oplogha/harness/s3server/s3servertest"
	"github.com/oplogha/oplogha/impl/objstore/s3"
	"github.com/oplogha/oplogha/tests/s3store"
)

const bucket = "snapshots"

// startVersity runs a versitygw from the tool cache for the test.
func startVersity(t *testing.T) *s3server.Server {
	t.Helper()
	return s3servertest.Start(t, s3server.Versity)
}

// newStore connects a store to the test bucket on srv through tr (nil: a
// plain transport), creating the bucket.
func newStore(t *testing.T, srv *s3server.Server, tr http.RoundTripper, partSize int64) *s3.Store {
	t.Helper()
	cfg, err := s3store.Config(srv, bucket)
	require.NoError(t, err)
	cfg.Transport, cfg.PartSize = tr, partSize
	st, err := s3.New(cfg)
	require.NoError(t, err)
	require.NoError(t, st.EnsureBucket(ctx(t)))
	return st
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

func payload(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// lossyLink is an http.RoundTripper in front of a real transport that loses
// the reply of the first request matching drop: the request reaches the
// server and is carried out, then the reply is read and thrown away and the
// client sees a connection reset, as over a link that fails after the
// server has answered. minio-go treats any transport error but an unknown
// certificate authority or an http/https mismatch as retryable and sends the
// same request again.
type lossyLink struct {
	next http.RoundTripper
	drop func(*http.Request) bool

	mu      sync.Mutex
	dropped bool
	seen    []exchange // every request matching drop, in order
}

// exchange is one matching request: the server's status and whether the
// client was told of it.
type exchange struct {
	Status  int
	Dropped bool
}

func newLossyLink(drop func(*http.Request) bool) *lossyLink {
	return &lossyLink{next: http.DefaultTransport.(*http.Transport).Clone(), drop: drop}
}

// newRecorder records the requests matching match and loses no reply.
func newRecorder(match func(*http.Request) bool) *lossyLink {
	l := newLossyLink(match)
	l.dropped = true
	return l
}

func (l *lossyLink) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.next.RoundTrip(req)
	if err != nil || !l.drop(req) {
		return resp, err
	}
	l.mu.Lock()
	lose := !l.dropped
	l.dropped = true
	l.seen = append(l.seen, exchange{Status: resp.StatusCode, Dropped: lose})
	l.mu.Unlock()
	if !lose {
		return resp, nil
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return nil, &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
}

func (l *lossyLink) exchanges() []exchange {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]exchange(nil), l.seen...)
}

// putOf matches the single-request PUT of key.
func putOf(key string) func(*http.Request) bool {
	return func(r *http.Request) bool {
		return r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/"+bucket+"/"+key) && !r.URL.Query().Has("uploadId")
	}
}

// completeOf matches CompleteMultipartUpload of key.
func completeOf(key string) func(*http.Request) bool {
	return func(r *http.Request) bool {
		return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/"+bucket+"/"+key) && r.URL.Query().Has("uploadId")
	}
}
