// Package s3servertest starts an S3 server of the tool cache for one test:
// the binary built from go.mod, its process stopped when the test ends.
package s3servertest

import (
	"context"
	"testing"
	"time"

	"github.com/oplogha/oplogha/harness/bin"
	"github.com/oplogha/oplogha/harness/proc"
	"github.com/oplogha/oplogha/harness/s3server"
)

// Start runs an S3 server of kind (s3server.Versity, s3server.FakeS3) with
// its data in a directory of the test's, and stops it at the test's end.
func Start(t testing.TB, kind string) *s3server.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c, err := bin.NewCache(".", nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Path(ctx, kind)
	if err != nil {
		t.Fatal(err)
	}
	group := proc.NewGroup()
	t.Cleanup(func() {
		if err := group.Close(5 * time.Second); err != nil {
			t.Error(err)
		}
	})
	srv, err := s3server.Start(ctx, group, kind, b.Path, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return srv
}
