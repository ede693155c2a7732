package importgraph

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// One etcd client configuration: outside package etcdclient (and tests),
// nothing builds a clientv3.Config of its own, so TLS, auth and keepalive
// cannot drift apart between the master, oplogctl and the harness.
func TestOneEtcdClientConfiguration(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".cache" || d.Name() == "artifacts" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		rel := filepath.ToSlash(mustRel(root, path))
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.HasPrefix(rel, "etcdclient/") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(data), "clientv3.Config{") {
			t.Errorf("%s builds its own clientv3.Config: dial etcd through etcdclient.Options", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
