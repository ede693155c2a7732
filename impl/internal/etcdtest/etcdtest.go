// Package etcdtest starts an in-process, single-member etcd (the real server,
// through go.etcd.io/etcd/server/v3/embed) for fast package tests. Multi-member
// clusters of separate processes belong to the harness.
package etcdtest

import (
	"net/url"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/oplogha/oplogha/etcdclient"
)

// Server is a running embedded etcd with a client connected to it.
type Server struct {
	Etcd     *embed.Etcd
	Client   *clientv3.Client
	Endpoint string
}

// Start runs an embedded etcd in t.TempDir() on loopback ports chosen by the
// kernel and stops it when the test ends. fsync is off: these tests exercise
// protocol logic, not disk durability.
func Start(t testing.TB) *Server {
	t.Helper()
	cfg := embed.NewConfig()
	cfg.Name = "test"
	cfg.Dir = t.TempDir()
	cfg.UnsafeNoFsync = true
	cfg.Logger = "zap"
	cfg.LogLevel = "error"
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	cu, _ := url.Parse("http://127.0.0.1:0")
	pu, _ := url.Parse("http://127.0.0.1:0")
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*cu}, []url.URL{*cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*pu}, []url.URL{*pu}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatalf("start embedded etcd: %v", err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(30 * time.Second):
		e.Close()
		t.Fatalf("embedded etcd not ready after 30s")
	}
	ep := "http://" + e.Clients[0].Addr().String()
	cli, err := etcdclient.New(etcdclient.Options{Endpoints: []string{ep}})
	if err != nil {
		e.Close()
		t.Fatalf("etcd client: %v", err)
	}
	t.Cleanup(func() {
		cli.Close()
		e.Close()
	})
	return &Server{Etcd: e, Client: cli, Endpoint: ep}
}
