package daemon

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/gpulet/gpuletd/daemon/config"
)

// serverCert is the listeners' TLS certificate, read from its files at start
// and again on every reload, so that a renewed certificate serves new
// connections without a restart.
type serverCert struct {
	certFile, keyFile string
	cert              atomic.Pointer[tls.Certificate]
}

// newServerCert reads the certificate tls names; nil when TLS is off.
func newServerCert(c config.TLS) (*serverCert, error) {
	if !c.Enabled() {
		return nil, nil
	}
	s := &serverCert{certFile: c.CertFile, keyFile: c.KeyFile}
	if err := s.load(); err != nil {
		return nil, err
	}
	return s, nil
}

// load reads the files again; on error the certificate in use stays.
func (s *serverCert) load() error {
	cert, err := tls.LoadX509KeyPair(s.certFile, s.keyFile)
	if err != nil {
		return fmt.Errorf("load tls.cert_file %s and tls.key_file %s: %w", s.certFile, s.keyFile, err)
	}
	if cert.Leaf == nil {
		if cert.Leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			return fmt.Errorf("parse tls.cert_file %s: %w", s.certFile, err)
		}
	}
	s.cert.Store(&cert)
	return nil
}

// leaf is the certificate in use.
func (s *serverCert) leaf() *x509.Certificate { return s.cert.Load().Leaf }

// errNoCertificate is a handshake before any certificate was read, which
// newServerCert rules out.
var errNoCertificate = errors.New("no TLS certificate loaded")

// config is the listeners' TLS configuration: TLS 1.2 at least, the
// certificate read last.
func (s *serverCert) config() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			if c := s.cert.Load(); c != nil {
				return c, nil
			}
			return nil, errNoCertificate
		},
	}
}

// describe names the certificate in use for the log and the events.
func (s *serverCert) describe() string {
	l := s.leaf()
	return fmt.Sprintf("%s, serial %s, valid until %s", l.Subject, l.SerialNumber, l.NotAfter.UTC().Format(time.RFC3339))
}
