package master

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"sync/atomic"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/oplogha/oplogha/etcdclient"
	"github.com/oplogha/oplogha/impl/objstore"
	"github.com/oplogha/oplogha/impl/objstore/localdir"
	"github.com/oplogha/oplogha/impl/objstore/s3"
)

// openStore builds the configured snapshot store (nil when none). It does
// not reach the store: an unreachable S3 at startup is a snapshot stall,
// not a reason to stop (probeStore learns the store's trust once it answers).
func (m *Master) openStore() (objstore.Store, error) {
	var st objstore.Store
	switch m.cfg.ObjectStore {
	case "":
		return nil, nil
	case "local":
		l, err := localdir.New(m.cfg.LocalStoreDir)
		if err != nil {
			return nil, err
		}
		st = l
	case "s3":
		sc, err := m.cfg.s3Config(m.cfg.S3Bucket)
		if err != nil {
			return nil, err
		}
		s, err := s3.New(sc)
		if err != nil {
			return nil, err
		}
		st = s
	}
	return storeWindows{Store: st, headTime: &m.headTime}, nil
}

// probeStore probes, until it answers, whether the store's server validates
// checksums: that decides between HEAD and complete readback for every
// later upload, so nothing is published before it is known. Meanwhile the
// master bootstraps and serves as it can; snapshot_store_ready says where
// the probe stands.
func (m *Master) probeStore(ctx context.Context) {
	wait := 500 * time.Millisecond
	for attempt := 1; ctx.Err() == nil; attempt++ {
		var b [8]byte
		_, _ = rand.Read(b[:])
		probe := path.Join(m.storePrefix(), "_probe", m.cfg.nodeID()+"-"+hex.EncodeToString(b[:]))
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		trust, err := objstore.Probe(pctx, m.store, probe)
		cancel()
		if err == nil {
			m.trust.Store(&trust)
			m.m.storeReady.Set(1)
			m.log.Info("snapshot store ready", "phase", "store", "store", m.store.Name(), "server_validates_checksums",
				trust.ServerValidatesChecksums, "server_validates_multipart", trust.ServerValidatesMultipart, "attempts", attempt)
			return
		}
		if ctx.Err() != nil {
			return
		}
		m.log.Warn("snapshot store unavailable", "phase", "store", "code", "store_unavailable", "store", m.store.Name(), "attempt", attempt, "err", err)
		sleep(ctx, wait)
		wait = min(2*wait, 10*time.Second)
	}
}

// storeTrust is what the store's probe showed, once it has answered.
func (m *Master) storeTrust() (objstore.Trust, bool) {
	t := m.trust.Load()
	if t == nil {
		return objstore.Trust{}, false
	}
	return *t, true
}

// storePrefix is {s3_prefix}/{cluster_id}: every snapshot of the cluster lives below.
func (m *Master) storePrefix() string { return path.Join(m.cfg.S3Prefix, m.ks.ClusterID()) }

// s3Config is the S3 backend's configuration for bucket: endpoint,
// region, credentials and, for an https endpoint, a transport that trusts
// s3_ca_file.
func (c Config) s3Config(bucket string) (s3.Config, error) {
	access, secret, err := c.s3Credentials()
	if err != nil {
		return s3.Config{}, err
	}
	sc := s3.Config{Endpoint: c.S3Endpoint, Bucket: bucket, Region: c.S3Region, AccessKey: access, SecretKey: secret}
	if c.S3CAFile != "" {
		tc, err := etcdclient.LoadTLS(c.S3CAFile, "", "")
		if err != nil {
			return s3.Config{}, fmt.Errorf("s3_ca_file: %w", err)
		}
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.TLSClientConfig = tc
		sc.Transport = tr
	}
	return sc, nil
}

// s3Credentials reads the credentials file, else the named environment
// variables. They are never logged.
func (c Config) s3Credentials() (access, secret string, err error) {
	if c.S3CredentialsFile != "" {
		data, err := os.ReadFile(c.S3CredentialsFile)
		if err != nil {
			return "", "", fmt.Errorf("s3_credentials_file: %w", err)
		}
		var f struct {
			AccessKeyID     string `yaml:"access_key_id"`
			SecretAccessKey string `yaml:"secret_access_key"`
		}
		if err := yaml.Unmarshal(data, &f); err != nil {
			return "", "", fmt.Errorf("s3_credentials_file: %w", err)
		}
		return f.AccessKeyID, f.SecretAccessKey, nil
	}
	return os.Getenv(c.S3AccessKeyEnv), os.Getenv(c.S3SecretKeyEnv), nil
}

// storeWindows opens the snapshotBeforeHEAD crash window in front of every
// HEAD the master sends and the snapshotCorruptUpload injection on puts,
// and adds up the time HEADs take (the upload's verification); otherwise it
// is the store itself.
type storeWindows struct {
	objstore.Store
	headTime *atomic.Int64 // nanoseconds spent in HEAD
}

func (h storeWindows) PutIfAbsent(ctx context.Context, key string, src io.ReaderAt, size int64, crc uint32) error {
	if size > 0 && hit(fpSnapshotCorruptUpload) {
		src = flipFirstByte{src}
	}
	return h.Store.PutIfAbsent(ctx, key, src, size, crc)
}

// flipFirstByte serves src with its first byte inverted: bytes that no
// longer match the checksum sent with them.
type flipFirstByte struct{ io.ReaderAt }

func (f flipFirstByte) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.ReaderAt.ReadAt(p, off)
	if off == 0 && n > 0 {
		p[0] ^= 0xff
	}
	return n, err
}

func (h storeWindows) Head(ctx context.Context, key string) (objstore.Info, error) {
	hit(fpSnapshotBeforeHEAD)
	start := time.Now()
	defer func() { h.headTime.Add(int64(time.Since(start))) }()
	return h.Store.Head(ctx, key)
}

// ListUploads and AbortUpload reach the wrapped store's unfinished
// multipart uploads, when it has them (objstore.Uploads).
func (h storeWindows) ListUploads(ctx context.Context, prefix string) ([]objstore.Upload, error) {
	if u, ok := h.Store.(objstore.Uploads); ok {
		return u.ListUploads(ctx, prefix)
	}
	return nil, nil
}

// AbortUpload aborts one unfinished multipart upload of the wrapped store.
func (h storeWindows) AbortUpload(ctx context.Context, key, uploadID string) error {
	if u, ok := h.Store.(objstore.Uploads); ok {
		return u.AbortUpload(ctx, key, uploadID)
	}
	return nil
}
