package daemon

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/stretchr/testify/require"
)

// selfSigned writes a self-signed certificate of the given serial and its
// key into dir.
func selfSigned(t *testing.T, dir string, serial int64) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "node"},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600))
	return certFile, keyFile
}

func TestServerCert(t *testing.T) {
	s, err := newServerCert(config.TLS{})
	require.NoError(t, err)
	require.Nil(t, s, "no certificate: plain HTTP and gRPC")

	dir := t.TempDir()
	_, err = newServerCert(config.TLS{CertFile: filepath.Join(dir, "none.pem"), KeyFile: filepath.Join(dir, "none-key.pem")})
	require.ErrorContains(t, err, "load tls.cert_file "+filepath.Join(dir, "none.pem")+" and tls.key_file")

	certFile, keyFile := selfSigned(t, dir, 7)
	s, err = newServerCert(config.TLS{CertFile: certFile, KeyFile: keyFile})
	require.NoError(t, err)
	require.Equal(t, int64(7), s.leaf().SerialNumber.Int64())
	got, err := s.config().GetCertificate(nil)
	require.NoError(t, err)
	require.Equal(t, int64(7), got.Leaf.SerialNumber.Int64())
	require.Contains(t, s.describe(), "CN=node, serial 7, valid until")

	// Renewed in place: the next handshake gets the new one.
	selfSigned(t, dir, 8)
	require.NoError(t, s.load())
	got, err = s.config().GetCertificate(nil)
	require.NoError(t, err)
	require.Equal(t, int64(8), got.Leaf.SerialNumber.Int64())

	// A key that is not the certificate's: refused, the last one stays.
	otherDir := t.TempDir()
	_, otherKey := selfSigned(t, otherDir, 9)
	key, err := os.ReadFile(otherKey)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(keyFile, key, 0o600))
	require.ErrorContains(t, s.load(), "private key does not match public key")
	require.Equal(t, int64(8), s.leaf().SerialNumber.Int64())
}
