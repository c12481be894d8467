// Package testcert issues X.509 certificates for tests: self-signed ones, a
// CA, and certificates a CA signs, for 127.0.0.1 and localhost.
package testcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"testing"
	"time"
)

// Cert is an issued certificate and its key, parsed and in PEM.
type Cert struct {
	Cert    *x509.Certificate
	Key     *ecdsa.PrivateKey
	CertPEM []byte
	KeyPEM  []byte
}

// Options describe a certificate to issue.
type Options struct {
	// Serial is its serial number; 0 is 1.
	Serial int64
	// CommonName is its subject's; empty is "gpuletd test".
	CommonName string
	// NotAfter ends its validity; zero is a day from now.
	NotAfter time.Time
	// CA makes it a CA that may sign others.
	CA bool
	// Client makes it a client's certificate rather than a server's.
	Client bool
	// Parent signs it; nil signs it with its own key.
	Parent *Cert
	// Names, when given, are the DNS names a server's certificate is for,
	// in place of 127.0.0.1 and localhost.
	Names []string
}

// Issue issues a certificate, failing the test on error.
func Issue(t testing.TB, o Options) *Cert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("generate key: %v", err)
	}
	if o.Serial == 0 {
		o.Serial = 1
	}
	if o.CommonName == "" {
		o.CommonName = "gpuletd test"
	}
	if o.NotAfter.IsZero() {
		o.NotAfter = time.Now().Add(24 * time.Hour)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(o.Serial), Subject: pkix.Name{CommonName: o.CommonName},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: o.NotAfter.Truncate(time.Second),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		BasicConstraintsValid: true, IsCA: o.CA,
	}
	if o.CA {
		tmpl.KeyUsage |= x509.KeyUsageCertSign
		tmpl.ExtKeyUsage = nil // a CA signs for any use
	}
	if len(o.Names) > 0 {
		tmpl.IPAddresses, tmpl.DNSNames = nil, o.Names
	}
	if o.Client {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
		tmpl.IPAddresses, tmpl.DNSNames = nil, nil
	}
	parent, signer := tmpl, key
	if o.Parent != nil {
		parent, signer = o.Parent.Cert, o.Parent.Key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		t.Fatalf("create certificate: %v", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatalf("parse certificate: %v", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatalf("marshal key: %v", err)
	}
	return &Cert{Cert: cert, Key: key,
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})}
}

// Write writes the certificate and its key in PEM to the two files.
func (c *Cert) Write(t testing.TB, certFile, keyFile string) {
	t.Helper()
	if err := os.WriteFile(certFile, c.CertPEM, 0o600); err != nil {
		t.Fatalf("write certificate: %v", err)
	}
	if err := os.WriteFile(keyFile, c.KeyPEM, 0o600); err != nil {
		t.Fatalf("write key: %v", err)
	}
}
