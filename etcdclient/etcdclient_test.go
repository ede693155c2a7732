package etcdclient

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLoadTLSNamesTheFileAtFault(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "ca.pem")
	require.NoError(t, os.WriteFile(notPEM, []byte("not a certificate"), 0o600))

	_, err := LoadTLS(filepath.Join(dir, "missing.pem"), "", "")
	require.ErrorIs(t, err, os.ErrNotExist)
	require.ErrorContains(t, err, "CA file")

	_, err = LoadTLS(notPEM, "", "")
	require.ErrorContains(t, err, "CA file "+notPEM+": no PEM certificate in it")

	_, err = LoadTLS("", "cert.pem", "")
	require.ErrorContains(t, err, "needs both its cert and key file")

	_, err = LoadTLS("", filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem"))
	require.ErrorContains(t, err, "client certificate")

	tc, err := LoadTLS("", "", "")
	require.NoError(t, err)
	require.Nil(t, tc.RootCAs, "no CA file: the system pool")
	require.Empty(t, tc.Certificates)
}

func TestReadPassword(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "pw")
	require.NoError(t, os.WriteFile(f, []byte("s3cret\r\n"), 0o600))
	pw, err := ReadPassword(f)
	require.NoError(t, err)
	require.Equal(t, "s3cret", pw)

	require.NoError(t, os.WriteFile(f, []byte("\n"), 0o600))
	_, err = ReadPassword(f)
	require.ErrorIs(t, err, ErrEmptyPassword)

	_, err = ReadPassword(filepath.Join(dir, "none"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

// Every client gets the same keepalive, a default dial timeout and no
// logger noise, whatever else differs.
func TestConfigIsTheSameForEveryClient(t *testing.T) {
	c := Options{Endpoints: []string{"http://127.0.0.1:1"}}.Config()
	require.Equal(t, KeepAliveTime, c.DialKeepAliveTime)
	require.Equal(t, KeepAliveTimeout, c.DialKeepAliveTimeout)
	require.True(t, c.PermitWithoutStream)
	require.Positive(t, c.DialTimeout)
	require.NotNil(t, c.Logger)
	require.Nil(t, c.TLS)
}
