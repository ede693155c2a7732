package toxi

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/harness/bin"
	"github.com/oplogha/oplogha/harness/ports"
	"github.com/oplogha/oplogha/harness/proc"
)

// TestAddMovesOnWhenItsPortWasTaken: the port drawn for a proxy is bound
// by someone else before toxiproxy binds it (here a listener of the test's
// own); Add creates the proxy on the next port drawn, and that proxy
// forwards. A port taken on every attempt is an error naming the proxy.
func TestAddMovesOnWhenItsPortWasTaken(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cache, err := bin.NewCache("../..", nil)
	require.NoError(t, err)
	tb, err := cache.Path(ctx, "toxiproxy")
	require.NoError(t, err)
	g := proc.NewGroup()
	defer g.Close(5 * time.Second)
	s, err := Start(ctx, g, tb.Path, t.TempDir(), 1)
	require.NoError(t, err)

	taken, err := net.Listen("tcp", ports.Addr(0))
	require.NoError(t, err)
	defer taken.Close()
	takenPort := taken.Addr().(*net.TCPAddr).Port
	upstream, err := net.Listen("tcp", ports.Addr(0))
	require.NoError(t, err)
	defer upstream.Close()
	go func() {
		for {
			c, err := upstream.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("hello"))
			c.Close()
		}
	}()

	fresh, err := ports.Free(1)
	require.NoError(t, err)
	draws := []int{takenPort, fresh[0]}
	s.freePort = func() (int, error) {
		p := draws[0]
		draws = draws[1:]
		return p, nil
	}
	l, err := s.Add("moved", upstream.Addr().String())
	require.NoError(t, err)
	require.Equal(t, ports.Addr(fresh[0]), l.Listen)
	c, err := net.Dial("tcp", l.Listen)
	require.NoError(t, err)
	defer c.Close()
	buf := make([]byte, 5)
	_, err = c.Read(buf)
	require.NoError(t, err)
	require.Equal(t, "hello", string(buf))

	s.freePort = func() (int, error) { return takenPort, nil }
	_, err = s.Add("stuck", upstream.Addr().String())
	require.ErrorContains(t, err, "create proxy stuck")
	require.ErrorContains(t, err, "address already in use")
}
