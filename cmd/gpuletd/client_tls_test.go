package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/gpulet/gpuletd/internal/testcert"
	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"
)

// tlsServer serves 200 over TLS with cert; with clients it asks for a
// client certificate that CA signed.
func tlsServer(t *testing.T, cert *testcert.Cert, clients *testcert.Cert) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	pair, err := tls.X509KeyPair(cert.CertPEM, cert.KeyPEM)
	require.NoError(t, err)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	if clients != nil {
		pool := x509.NewCertPool()
		pool.AddCert(clients.Cert)
		srv.TLS.ClientCAs, srv.TLS.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes refused on purpose
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv.URL
}

// writeFile writes b to a new file named name and returns its path.
func writeFile(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, b, 0o600))
	return p
}

// clientTLSFor parses args as load's and infer's TLS flags and applies
// them to a client of base.
func clientTLSFor(t *testing.T, base string, args ...string) (*daemonAPI, error) {
	t.Helper()
	cmd := &cobra.Command{Use: "load"}
	registerClientTLS(cmd.Flags())
	registerPerfAnalyzerSSL(cmd)
	require.NoError(t, cmd.Flags().Parse(args))
	d := plainAPI(base)
	return d, applyClientTLS(cmd.Flags(), d)
}

// TestClientTLS: the TLS flags of gpuletd load and infer, and
// perf_analyzer's --ssl-* spellings of them, reach a server the
// configuration does not describe: one a private CA signed, one whose
// certificate names another host, one that asks for a client certificate
// (in PEM or DER), and a self-signed one with --insecure; what cannot work
// is refused before any request.
func TestClientTLS(t *testing.T) {
	ca := testcert.Issue(t, testcert.Options{CA: true, CommonName: "private CA"})
	leaf := testcert.Issue(t, testcert.Options{Parent: ca, Serial: 2})
	elsewhere := testcert.Issue(t, testcert.Options{Parent: ca, Serial: 3, Names: []string{"elsewhere.example"}})
	client := testcert.Issue(t, testcert.Options{Parent: ca, Serial: 4, Client: true})
	self := testcert.Issue(t, testcert.Options{Serial: 5})
	caFile := writeFile(t, "ca.pem", ca.CertPEM)
	certFile, keyFile := writeFile(t, "client.pem", client.CertPEM), writeFile(t, "client.key", client.KeyPEM)
	keyBlock, _ := pem.Decode(client.KeyPEM)
	certDER, keyDER := writeFile(t, "client.der", client.Cert.Raw), writeFile(t, "client-key.der", keyBlock.Bytes)

	signed, named, mutual, selfSigned := tlsServer(t, leaf, nil), tlsServer(t, elsewhere, nil), tlsServer(t, leaf, ca), tlsServer(t, self, nil)
	for _, tc := range []struct {
		name    string
		base    string
		args    []string
		refused string // the request's error
	}{
		{name: "the system's roots do not know a private CA", base: signed, args: []string{"--grpc-tls"}, refused: "certificate signed by unknown authority"},
		{name: "--cacert", base: signed, args: []string{"--cacert", caFile}},
		{name: "perf_analyzer's CA file", base: signed, args: []string{"--ssl-https-ca-certificates-file", caFile}},
		{name: "another host's name", base: named, args: []string{"--cacert", caFile}, refused: "cannot validate certificate for 127.0.0.1"},
		{name: "no check of the name", base: named, args: []string{"--cacert", caFile, "--ssl-https-verify-host", "0"}},
		{name: "no check of the name, but of the chain", base: selfSigned, args: []string{"--cacert", caFile, "--ssl-https-verify-host", "0"}, refused: "certificate signed by unknown authority"},
		{name: "no client certificate", base: mutual, args: []string{"--cacert", caFile}, refused: "certificate required"},
		{name: "a client certificate", base: mutual, args: []string{"--cacert", caFile, "--cert", certFile, "--key", keyFile}},
		{name: "perf_analyzer's, in DER", base: mutual, args: []string{"--ssl-https-ca-certificates-file", caFile,
			"--ssl-https-client-certificate-file", certDER, "--ssl-https-client-certificate-type", "DER",
			"--ssl-https-private-key-file", keyDER, "--ssl-https-private-key-type", "der"}},
		{name: "a self-signed certificate", base: selfSigned, args: []string{"--cacert", caFile}, refused: "certificate signed by unknown authority"},
		{name: "--insecure", base: selfSigned, args: []string{"--insecure"}},
		{name: "perf_analyzer's verify-peer 0", base: selfSigned, args: []string{"--ssl-https-verify-peer", "0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := clientTLSFor(t, tc.base, tc.args...)
			require.NoError(t, err)
			require.NotNil(t, d.tls, "gRPC goes over TLS too")
			resp, err := d.client.Get(tc.base + "/v2/health/live")
			if tc.refused != "" {
				require.ErrorContains(t, err, tc.refused)
				return
			}
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode)
		})
	}
}

// TestClientTLSRefusals: flags that cannot work together, or files that
// hold no certificate, are refused before any request; none given leaves
// the client as it was.
func TestClientTLSRefusals(t *testing.T) {
	ca := testcert.Issue(t, testcert.Options{CA: true})
	caFile, other := writeFile(t, "ca.pem", ca.CertPEM), writeFile(t, "other.pem", ca.CertPEM)
	notPEM := writeFile(t, "ca.txt", []byte("not a certificate"))
	for _, tc := range []struct {
		name string
		base string
		args []string
		err  string
	}{
		{name: "plain HTTP", base: "http://127.0.0.1:1", args: []string{"--cacert", caFile}, err: "http://127.0.0.1:1 is plain http://, and gRPC goes plain with it"},
		{name: "a certificate without its key", base: "https://127.0.0.1:1", args: []string{"--cert", caFile}, err: "--cert and --key go together"},
		{name: "no PEM in the CA file", base: "https://127.0.0.1:1", args: []string{"--cacert", notPEM}, err: "read --cacert " + notPEM + ": no PEM certificate in it"},
		{name: "a CA file that is not there", base: "https://127.0.0.1:1", args: []string{"--cacert", notPEM + ".gone"}, err: "read --cacert: open "},
		{name: "two CA files", base: "https://127.0.0.1:1", args: []string{"--ssl-grpc-root-certifications-file", caFile, "--ssl-https-ca-certificates-file", other}, err: "gpuletd uses one for REST and gRPC alike"},
		{name: "a CA file given two ways", base: "https://127.0.0.1:1", args: []string{"--cacert", caFile, "--ssl-https-ca-certificates-file", other}, err: "give one file"},
		{name: "verify-peer 2", base: "https://127.0.0.1:1", args: []string{"--ssl-https-verify-peer", "2"}, err: "--ssl-https-verify-peer 2: give 0 or 1"},
		{name: "verify-host 3", base: "https://127.0.0.1:1", args: []string{"--ssl-https-verify-host", "3"}, err: "--ssl-https-verify-host 3: give 0, 1 or 2"},
		{name: "a key form", base: "https://127.0.0.1:1", args: []string{"--ssl-https-private-key-type", "P12"}, err: `--ssl-https-private-key-type "P12": give PEM or DER`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := clientTLSFor(t, tc.base, tc.args...)
			require.ErrorContains(t, err, tc.err)
		})
	}
	// The same CA file given both ways is one.
	_, err := clientTLSFor(t, "https://127.0.0.1:1", "--cacert", caFile, "--ssl-https-ca-certificates-file", caFile)
	require.NoError(t, err)
	// perf_analyzer's gRPC files ask for gRPC over TLS, with plain REST.
	d, err := clientTLSFor(t, "http://127.0.0.1:1", "--ssl-grpc-root-certifications-file", caFile)
	require.NoError(t, err)
	require.NotNil(t, d.tls)
	d, err = clientTLSFor(t, "http://127.0.0.1:1")
	require.NoError(t, err)
	require.Nil(t, d.tls, "no flag: plain as before")
}
