// Package pki makes the certificates of one run: a throwaway certificate
// authority (ECDSA P-256, crypto/x509) and the server, peer and client
// certificates it signs, written as PEM files under the run's directory with
// private keys readable by the owner only. Every certificate is valid for
// 127.0.0.1 and localhost, the only addresses a run listens on, and for a
// few hours: nothing a run makes outlives it.
package pki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Usage is what a certificate may be used for.
type Usage int

// Usages. A peer certificate serves and dials (etcd peer links use one
// certificate both ways).
const (
	Server Usage = 1 << iota
	Client
	Peer = Server | Client
)

// Pair names a certificate and its key on disk.
type Pair struct {
	Cert string `json:"cert"`
	Key  string `json:"key"`
}

// Authority is a run's CA.
type Authority struct {
	// Hosts are addresses every certificate is also valid for (the nodes'
	// own addresses on the docker runtime).
	Hosts  []string
	Dir    string
	CAFile string // the CA certificate (PEM), what every side trusts
	cert   *x509.Certificate
	key    *ecdsa.PrivateKey
	pool   *x509.CertPool
	serial int64
}

// New makes a CA in dir (created 0700).
func New(dir, name string) (*Authority, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("pki: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("pki: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name + " run CA", Organization: []string{"oplogha"}},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(12 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("pki: CA: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("pki: CA: %w", err)
	}
	a := &Authority{Dir: dir, CAFile: filepath.Join(dir, "ca.pem"), cert: cert, key: key, pool: x509.NewCertPool(), serial: 1}
	a.pool.AddCert(cert)
	if err := writePEM(a.CAFile, "CERTIFICATE", der, 0o644); err != nil {
		return nil, err
	}
	return a, nil
}

// Issue signs a certificate for cn (also etcd's user name when a client
// presents it) and writes name.pem and name-key.pem.
func (a *Authority) Issue(name, cn string, usage Usage) (Pair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Pair{}, fmt.Errorf("pki: %w", err)
	}
	a.serial++
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(a.serial),
		Subject:      pkix.Name{CommonName: cn, Organization: []string{"oplogha"}},
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(12 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:     []string{"localhost"},
	}
	for _, h := range a.Hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	if usage&Server != 0 {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
	}
	if usage&Client != 0 {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, &key.PublicKey, a.key)
	if err != nil {
		return Pair{}, fmt.Errorf("pki: %s: %w", name, err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return Pair{}, fmt.Errorf("pki: %s: %w", name, err)
	}
	p := Pair{Cert: filepath.Join(a.Dir, name+".pem"), Key: filepath.Join(a.Dir, name+"-key.pem")}
	if err := writePEM(p.Cert, "CERTIFICATE", der, 0o644); err != nil {
		return Pair{}, err
	}
	if err := writePEM(p.Key, "EC PRIVATE KEY", kder, 0o600); err != nil {
		return Pair{}, err
	}
	return p, nil
}

// Pool is the pool that trusts this CA only.
func (a *Authority) Pool() *x509.CertPool { return a.pool }

// ClientTLS is a client configuration that trusts this CA and presents p
// (none when p is empty).
func (a *Authority) ClientTLS(p Pair) (*tls.Config, error) {
	cfg := &tls.Config{RootCAs: a.pool, MinVersion: tls.VersionTLS12}
	if p.Cert != "" {
		c, err := tls.LoadX509KeyPair(p.Cert, p.Key)
		if err != nil {
			return nil, fmt.Errorf("pki: %w", err)
		}
		cfg.Certificates = []tls.Certificate{c}
	}
	return cfg, nil
}

func writePEM(path, kind string, der []byte, mode os.FileMode) error {
	data := pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
	if err := os.WriteFile(path, data, mode); err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	return nil
}
