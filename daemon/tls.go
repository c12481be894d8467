package daemon

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/internal/fsperm"
)

// serverCert is the listeners' TLS certificate, read from its files at start
// and again on every reload, so that a renewed certificate serves new
// connections without a restart.
type serverCert struct {
	certFile, keyFile string
	cert              atomic.Pointer[tls.Certificate]
	// clientCAFile, when set, names the CAs client certificates must chain
	// to (mutual TLS); clientCAs is the pool read from it last.
	clientCAFile string
	clientCAs    atomic.Pointer[x509.CertPool]
}

// newServerCert reads the certificate tls names; nil when TLS is off.
func newServerCert(c config.TLS) (*serverCert, error) {
	if !c.Enabled() {
		return nil, nil
	}
	s := &serverCert{certFile: c.CertFile, keyFile: c.KeyFile, clientCAFile: c.ClientCAFile}
	if err := s.load(); err != nil {
		return nil, err
	}
	return s, nil
}

// load reads the files again; on error what is in use stays, all of it.
func (s *serverCert) load() error {
	cert, err := tls.LoadX509KeyPair(s.certFile, s.keyFile)
	if err != nil {
		return fmt.Errorf("load tls.cert_file %s and tls.key_file %s: %w", s.certFile, s.keyFile, fsperm.ExplainRead(err, s.certFile, s.keyFile))
	}
	if cert.Leaf == nil {
		if cert.Leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			return fmt.Errorf("parse tls.cert_file %s: %w", s.certFile, err)
		}
	}
	var pool *x509.CertPool
	if s.clientCAFile != "" {
		pem, err := os.ReadFile(s.clientCAFile)
		if err != nil {
			return fmt.Errorf("load tls.client_ca_file: %w", fsperm.ExplainRead(err, s.clientCAFile))
		}
		pool = x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return fmt.Errorf("load tls.client_ca_file %s: no PEM certificate in it", s.clientCAFile)
		}
	}
	s.cert.Store(&cert)
	if pool != nil {
		s.clientCAs.Store(pool)
	}
	return nil
}

// errNoClientCertificate is a client that gave no certificate to a daemon
// that asks for one.
var errNoClientCertificate = errors.New("no client certificate: this daemon serves clients with a certificate its tls.client_ca_file vouches for")

// verifyClient checks a client's certificate against the CAs read last, so
// that a reload's new CAs apply to the next connection. The handshake asks
// for any certificate and leaves the checking here, since a configuration
// picked per connection would lose the listeners' protocols (ALPN).
func (s *serverCert) verifyClient(cs tls.ConnectionState) error {
	if len(cs.PeerCertificates) == 0 {
		return errNoClientCertificate
	}
	inter := x509.NewCertPool()
	for _, c := range cs.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: s.clientCAs.Load(), Intermediates: inter,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	if err != nil {
		return fmt.Errorf("client certificate %s: %w", cs.PeerCertificates[0].Subject, err)
	}
	return nil
}

// leaf is the certificate in use.
func (s *serverCert) leaf() *x509.Certificate { return s.cert.Load().Leaf }

// config is the listeners' TLS configuration: TLS 1.2 at least, the
// certificate read last, and with client CAs a client certificate asked
// of every client and checked against them.
func (s *serverCert) config() *tls.Config {
	c := &tls.Config{
		MinVersion: tls.VersionTLS12,
		// newServerCert has read one before any listener serves.
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return s.cert.Load(), nil },
	}
	if s.clientCAFile != "" {
		c.ClientAuth = tls.RequireAnyClientCert
		c.VerifyConnection = s.verifyClient
	}
	return c
}

// describe names the certificate in use for the log and the events.
func (s *serverCert) describe() string {
	l := s.leaf()
	return fmt.Sprintf("%s, serial %s, valid until %s", l.Subject, l.SerialNumber, l.NotAfter.UTC().Format(time.RFC3339))
}
