package daemon

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/internal/testcert"
	"github.com/stretchr/testify/require"
)

// selfSigned writes a self-signed certificate of the given serial and its
// key into dir.
func selfSigned(t *testing.T, dir string, serial int64) (certFile, keyFile string) {
	t.Helper()
	return selfSignedUntil(t, dir, serial, time.Now().Add(time.Hour))
}

// selfSignedUntil is selfSigned valid until notAfter.
func selfSignedUntil(t *testing.T, dir string, serial int64, notAfter time.Time) (certFile, keyFile string) {
	t.Helper()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	testcert.Issue(t, testcert.Options{Serial: serial, CommonName: "node", NotAfter: notAfter}).Write(t, certFile, keyFile)
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

func TestTLSReport(t *testing.T) {
	dir := t.TempDir()
	notAfter := time.Now().Add(365 * 24 * time.Hour).Truncate(time.Second)
	certFile, keyFile := selfSignedUntil(t, dir, 3, notAfter)
	with := func(listen string) config.Config {
		c := config.Default()
		c.Listen, c.TLS = listen, config.TLS{CertFile: certFile, KeyFile: keyFile}
		return c
	}
	require.Nil(t, tlsReport(config.Default(), time.Now()), "no TLS, nothing to report")
	for _, tc := range []struct {
		name    string
		cfg     config.Config
		now     time.Time
		warning string
		err     string
	}{
		{"good", with("127.0.0.1:8700"), time.Now(), "", ""},
		{"any address", with("0.0.0.0:8700"), time.Now(), "", ""},
		{"expiring", with("127.0.0.1:8700"), notAfter.Add(-48 * time.Hour), "expires in 48h0m0s", ""},
		{"expired", with("127.0.0.1:8700"), notAfter.Add(3 * time.Hour), "expired 3h0m0s ago: clients refuse it", ""},
		{"another address", with("10.1.2.3:8700"), time.Now(), "not valid for 10.1.2.3, the listen address", ""},
		{"missing", func() config.Config {
			c := with("127.0.0.1:8700")
			c.TLS.KeyFile = filepath.Join(dir, "none.pem")
			return c
		}(), time.Now(), "", "load tls.cert_file"},
		{"client CAs missing", func() config.Config {
			c := with("127.0.0.1:8700")
			c.TLS.ClientCAFile = filepath.Join(dir, "no-ca.pem")
			return c
		}(), time.Now(), "", "load tls.client_ca_file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tlsReport(tc.cfg, tc.now)
			require.NotNil(t, r)
			if tc.err != "" {
				require.Contains(t, r.Error, tc.err)
				require.NotEmpty(t, r.Fix)
				return
			}
			require.Empty(t, r.Error)
			require.Equal(t, "CN=node", r.Subject)
			require.Equal(t, notAfter.UTC(), r.NotAfter.UTC())
			if tc.warning == "" {
				require.Empty(t, r.Warning)
				return
			}
			require.Contains(t, r.Warning, tc.warning)
			require.NotEmpty(t, r.Fix)
		})
	}
}

func TestClientCertificates(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := selfSigned(t, dir, 1)
	ca := testcert.Issue(t, testcert.Options{CA: true, CommonName: "client CA"})
	caFile := filepath.Join(dir, "ca.pem")
	require.NoError(t, os.WriteFile(caFile, ca.CertPEM, 0o600))
	s, err := newServerCert(config.TLS{CertFile: certFile, KeyFile: keyFile, ClientCAFile: caFile})
	require.NoError(t, err)
	c := s.config()
	require.Equal(t, tls.RequireAnyClientCert, c.ClientAuth, "every client is asked for a certificate")

	signed := testcert.Issue(t, testcert.Options{Client: true, Parent: ca, CommonName: "alice"})
	stranger := testcert.Issue(t, testcert.Options{Client: true, CommonName: "mallory"})
	server := testcert.Issue(t, testcert.Options{Parent: ca, CommonName: "a server's"})
	state := func(certs ...*testcert.Cert) tls.ConnectionState {
		var cs tls.ConnectionState
		for _, c := range certs {
			cs.PeerCertificates = append(cs.PeerCertificates, c.Cert)
		}
		return cs
	}
	require.NoError(t, c.VerifyConnection(state(signed)))
	require.ErrorIs(t, c.VerifyConnection(state()), errNoClientCertificate)
	require.ErrorContains(t, c.VerifyConnection(state(stranger)), "client certificate CN=mallory: x509: certificate signed by unknown authority")
	require.ErrorContains(t, c.VerifyConnection(state(server)), "incompatible key usage", "a server's certificate is no client's")

	// Other CAs on a reload: the next handshake checks against them.
	other := testcert.Issue(t, testcert.Options{CA: true, CommonName: "other CA"})
	require.NoError(t, os.WriteFile(caFile, other.CertPEM, 0o600))
	require.NoError(t, s.load())
	require.Error(t, c.VerifyConnection(state(signed)))
	// A file without certificates is refused; the CAs in use stay.
	require.NoError(t, os.WriteFile(caFile, []byte("nothing"), 0o600))
	require.ErrorContains(t, s.load(), "no PEM certificate in it")
	require.NoError(t, c.VerifyConnection(state(testcert.Issue(t, testcert.Options{Client: true, Parent: other}))))
}
