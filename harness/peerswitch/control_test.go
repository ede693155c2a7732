package peerswitch

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The control API does what the switch does, with the switch's errors:
// a member added answers at the address it returns, cuts are listed, an
// unknown member is ErrUnknownMember on the harness's side too.
func TestRemoteDrivesTheSwitchThroughItsControlAPI(t *testing.T) {
	sw := New()
	t.Cleanup(func() { _ = sw.Close() })
	srv := httptest.NewServer(sw.ControlHandler())
	t.Cleanup(srv.Close)
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("member")) }))
	t.Cleanup(backend.Close)
	r := &Remote{API: strings.TrimPrefix(srv.URL, "http://"), host: "127.0.0.1", cli: &http.Client{Timeout: CallTimeout}}
	ctx := context.Background()
	a, err := r.Add(ctx, "etcd-0", strings.TrimPrefix(backend.URL, "http://"))
	require.NoError(t, err)
	_, err = r.Add(ctx, "etcd-1", strings.TrimPrefix(backend.URL, "http://"))
	require.NoError(t, err)
	resp, err := (&http.Client{Timeout: 2 * time.Second}).Get("http://" + a + "/version")
	require.NoError(t, err, "an unattributed request passes to the member")
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	require.NoError(t, r.Cut(ctx, "etcd-0", "etcd-1"))
	cuts, err := r.Cuts(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"etcd-0→etcd-1"}, cuts)
	require.ErrorIs(t, r.Cut(ctx, "etcd-0", "etcd-7"), ErrUnknownMember)
	require.NoError(t, r.Restore(ctx, "etcd-0", "etcd-1"))
	cuts, err = r.Cuts(ctx)
	require.NoError(t, err)
	require.Empty(t, cuts)
}

// A cut request from a member the switch knows is refused at the proxy:
// the connection closes with nothing passed.
func TestACutSenderIsRefusedAtTheProxy(t *testing.T) {
	sw := New()
	t.Cleanup(func() { _ = sw.Close() })
	hits := 0
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits++ }))
	t.Cleanup(backend.Close)
	p, err := sw.Add("etcd-0", "127.0.0.1:0", strings.TrimPrefix(backend.URL, "http://"))
	require.NoError(t, err)
	from, err := sw.Add("etcd-1", "127.0.0.1:0", strings.TrimPrefix(backend.URL, "http://"))
	require.NoError(t, err)
	post := func() error {
		req, _ := http.NewRequest(http.MethodPost, "http://"+p+"/raft", strings.NewReader("msg"))
		req.Header.Set("X-PeerURLs", "http://"+from)
		resp, err := (&http.Client{Timeout: 2 * time.Second}).Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	require.NoError(t, post())
	require.Equal(t, 1, hits)
	require.NoError(t, sw.Cut("etcd-1", "etcd-0"))
	require.Error(t, post(), "etcd-1's pipeline POST to etcd-0 carries etcd-1→etcd-0")
	require.Equal(t, 1, hits)
	require.NoError(t, sw.Restore("etcd-1", "etcd-0"))
	require.NoError(t, sw.Cut("etcd-0", "etcd-1"))
	require.NoError(t, post(), "the other direction's cut leaves the POST through")
	require.Equal(t, 2, hits)
}
