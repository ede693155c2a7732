package bin

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestPinnedVersionsComeFromGoMod(t *testing.T) {
	root, err := ProjectRoot(".")
	require.NoError(t, err)
	v, err := PinnedVersions(root)
	require.NoError(t, err)
	require.Regexp(t, `^v3\.7\.\d+$`, v["etcd"])
	require.Equal(t, "v2.12.0", v["toxiproxy"])
	require.Equal(t, "v1.8.0", v["versitygw"])
	require.NotEmpty(t, v["gotestsum"])
	_, err = Lookup("minio")
	require.ErrorContains(t, err, "unknown tool")
}

func TestProxyFailureIsOneClearLine(t *testing.T) {
	out := "go: downloading go.etcd.io/etcd/server/v3 v3.7.3\ngo: go.etcd.io/etcd/server/v3@v3.7.3: Get " +
		"\"https://proxy.golang.org/...\": dial tcp: lookup proxy.golang.org: no such host\n"
	err := buildError(Tool{Name: "etcd"}, Binary{Version: "v3.7.3"}, out, errors.New("exit status 1"))
	require.ErrorIs(t, err, ErrProxyUnreachable)
	require.NotContains(t, err.Error(), "\n")
	require.Contains(t, err.Error(), "building etcd v3.7.3")

	err = buildError(Tool{Name: "etcd"}, Binary{Version: "v3.7.3"}, "main.go:1: syntax error\nmore", errors.New("exit status 1"))
	require.NotErrorIs(t, err, ErrProxyUnreachable)
	require.NotContains(t, err.Error(), "\n")
}

func TestCacheReusesBuiltBinary(t *testing.T) {
	c, err := NewCache(".", nil)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	first, err := c.Path(ctx, "gotestsum")
	require.NoError(t, err)
	fi1, err := os.Stat(first.Path)
	require.NoError(t, err)
	second, err := c.Path(ctx, "gotestsum")
	require.NoError(t, err)
	fi2, err := os.Stat(second.Path)
	require.NoError(t, err)
	require.Equal(t, first.Path, second.Path)
	require.Equal(t, fi1.ModTime(), fi2.ModTime(), "second lookup rebuilt the binary")
}
