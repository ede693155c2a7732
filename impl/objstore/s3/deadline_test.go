package s3_test

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/impl/objstore"
	"github.com/oplogha/oplogha/impl/objstore/s3"
)

// blackhole accepts connections and never answers nor closes them, as a
// stuck server or a dead load balancer does.
func blackhole(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var mu sync.Mutex
	var held []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	})
	return ln.Addr().String()
}

// Reads through ReadDeadline give up at the deadline on a store that never
// answers, where the S3 client's own retries would wait far longer.
func TestReadDeadlineBoundsABlackholedStore(t *testing.T) {
	st, err := s3.New(s3.Config{Endpoint: "http://" + blackhole(t), Bucket: bucket, AccessKey: "a", SecretKey: "b"})
	require.NoError(t, err)
	bounded := objstore.ReadDeadline(st, 300*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, _, err = bounded.Get(ctx, "descriptor.json")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	_, err = bounded.Head(ctx, "descriptor.json")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NoError(t, ctx.Err(), "the reads ended at their own deadline, not the test's")
}
