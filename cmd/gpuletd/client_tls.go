package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/gpulet/gpuletd/sim/loadgen"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// clientTLSFlags say how a command that reaches a daemon speaks TLS to one
// the configuration does not describe (another node's daemon, a Triton
// server): which CA to trust, which client certificate to present, whether
// to check the server's certificate at all, and whether gRPC goes over TLS
// when REST does not. Every command with --url takes them
// (registerClientTLS); gpuletd load and infer take perf_analyzer's --ssl-*
// spellings of them too (registerPerfAnalyzerSSL). readClientTLS reads them
// from a command's flags.
type clientTLSFlags struct {
	caFile, certFile, keyFile string
	insecure, grpcTLS         bool
	// perf_analyzer's: libcurl's verify-peer (0 or 1) and verify-host (0,
	// 1 or 2), and the client certificate's and key's forms (PEM or DER).
	verifyPeer, verifyHost int
	certType, keyType      string
}

// sslAliases are perf_analyzer's --ssl-* file flags and the flag each
// stands for: the gRPC ones ask for gRPC over TLS too.
var sslAliases = []struct{ name, own string }{
	{"ssl-grpc-root-certifications-file", "cacert"},
	{"ssl-grpc-certificate-chain-file", "cert"},
	{"ssl-grpc-private-key-file", "key"},
	{"ssl-https-ca-certificates-file", "cacert"},
	{"ssl-https-client-certificate-file", "cert"},
	{"ssl-https-private-key-file", "key"},
}

// addURLFlag adds --url, and the TLS flags that go with reaching a daemon
// there, to f.
func addURLFlag(f *pflag.FlagSet, url *string) {
	f.StringVar(url, "url", "", urlUsage)
	registerClientTLS(f)
}

// registerClientTLS adds the TLS flags of a command that reaches a daemon.
func registerClientTLS(f *pflag.FlagSet) {
	f.String("cacert", "", "trust the server's certificate when this CA (PEM file) signed it, in place of the system's roots and the configuration's certificate, as curl's --cacert: over https:// and gRPC over TLS")
	f.String("cert", "", "present this client certificate (PEM file; with --key) to a server that asks for one")
	f.String("key", "", "the key of --cert (PEM file)")
	f.Bool("insecure", false, "do not check the server's certificate (a test server's: the connection is encrypted, but to whoever answers), as curl's --insecure")
	f.Bool("grpc-tls", false, "speak TLS to the gRPC listener even when --url is plain http:// (a Triton server's gRPC port alone over TLS), as perf_analyzer's --ssl-grpc-use-ssl")
}

// registerPerfAnalyzerSSL adds perf_analyzer's --ssl-* spellings of the TLS
// flags to cmd (gpuletd load and infer).
func registerPerfAnalyzerSSL(cmd *cobra.Command) {
	f := cmd.Flags()
	f.Bool("ssl-grpc-use-ssl", false, "as perf_analyzer's: --grpc-tls")
	for _, a := range sslAliases {
		f.String(a.name, "", "as perf_analyzer's: --"+a.own)
	}
	f.Int("ssl-https-verify-peer", 1, "as perf_analyzer's (libcurl's): 0 checks no certificate (--insecure)")
	f.Int("ssl-https-verify-host", 2, "as perf_analyzer's (libcurl's): 0 checks the certificate's signature but not the name it is for")
	f.String("ssl-https-client-certificate-type", "PEM", "as perf_analyzer's: PEM or DER, the form of --cert's file")
	f.String("ssl-https-private-key-type", "PEM", "as perf_analyzer's: PEM or DER, the form of --key's file")
	_ = cmd.RegisterFlagCompletionFunc("ssl-https-client-certificate-type", cobra.FixedCompletions([]string{"PEM", "DER"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("ssl-https-private-key-type", cobra.FixedCompletions([]string{"PEM", "DER"}, cobra.ShellCompDirectiveNoFileComp))
}

// readClientTLS reads the TLS flags f has (a command without them has
// none), perf_analyzer's spellings folded into gpuletd's own; given says
// whether any was given. One file given two ways that differ is refused
// (gpuletd trusts and presents one set for REST and gRPC alike), as are
// values the flags do not take.
func readClientTLS(f *pflag.FlagSet) (c clientTLSFlags, given bool, err error) {
	c = clientTLSFlags{verifyPeer: 1, verifyHost: 2, certType: "PEM", keyType: "PEM"}
	f.Visit(func(fl *pflag.Flag) {
		v := fl.Value.String()
		switch fl.Name {
		case "cacert":
			c.caFile = v
		case "cert":
			c.certFile = v
		case "key":
			c.keyFile = v
		case "insecure":
			c.insecure = v == "true"
		case "grpc-tls", "ssl-grpc-use-ssl":
			c.grpcTLS = c.grpcTLS || v == "true"
		case "ssl-https-verify-peer":
			c.verifyPeer, err = strconv.Atoi(v)
		case "ssl-https-verify-host":
			c.verifyHost, err = strconv.Atoi(v)
		case "ssl-https-client-certificate-type":
			c.certType = v
		case "ssl-https-private-key-type":
			c.keyType = v
		default:
			if !slices.ContainsFunc(sslAliases, func(a struct{ name, own string }) bool { return a.name == fl.Name }) {
				return
			}
		}
		given = true
	})
	if err != nil || !given {
		return c, given, err
	}
	return c, true, c.fold(f)
}

// fold sets the flags perf_analyzer's spellings stand for, and checks the
// values given.
func (c *clientTLSFlags) fold(f *pflag.FlagSet) error {
	own := map[string]*string{"cacert": &c.caFile, "cert": &c.certFile, "key": &c.keyFile}
	from := map[string]string{}
	for _, a := range sslAliases {
		if f.Lookup(a.name) == nil || !f.Changed(a.name) {
			continue
		}
		v, err := f.GetString(a.name)
		if err != nil {
			return err
		}
		if strings.HasPrefix(a.name, "ssl-grpc-") {
			c.grpcTLS = true
		}
		dst := own[a.own]
		switch {
		case f.Changed(a.own) && *dst != v:
			return usageErrorf("--%s %s and --%s %s: give one file", a.name, v, a.own, *dst)
		case from[a.own] != "" && *dst != v:
			return usageErrorf("--%s %s and --%s %s: gpuletd uses one for REST and gRPC alike, give one file", a.name, v, from[a.own], *dst)
		}
		*dst, from[a.own] = v, a.name
	}
	switch c.verifyPeer {
	case 0:
		c.insecure = true
	case 1:
	default:
		return usageErrorf("--ssl-https-verify-peer %d: give 0 or 1", c.verifyPeer)
	}
	if c.verifyHost < 0 || c.verifyHost > 2 {
		return usageErrorf("--ssl-https-verify-host %d: give 0, 1 or 2", c.verifyHost)
	}
	for _, t := range []struct{ flag, v string }{{"ssl-https-client-certificate-type", c.certType}, {"ssl-https-private-key-type", c.keyType}} {
		if !strings.EqualFold(t.v, "PEM") && !strings.EqualFold(t.v, "DER") {
			return usageErrorf("--%s %q: give PEM or DER", t.flag, t.v)
		}
	}
	return nil
}

// applyClientTLS has d speak TLS as f's TLS flags say, when any is given:
// over REST to an https:// daemon, and over gRPC to its listener when REST
// is over TLS or --grpc-tls asks.
func applyClientTLS(f *pflag.FlagSet, d *daemonAPI) error {
	c, given, err := readClientTLS(f)
	if err != nil || !given {
		return err
	}
	https := strings.HasPrefix(d.base, "https://")
	if !https && !c.grpcTLS {
		return usageErrorf("%s is plain http://, and gRPC goes plain with it: the TLS flags are for an https:// --url, or --grpc-tls for gRPC alone", d.base)
	}
	if (c.certFile == "") != (c.keyFile == "") {
		return usageErrorf("--cert and --key go together: give both")
	}
	tc, err := c.config(d.tls)
	if err != nil {
		return err
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = tc.Clone() // the transport adds its protocols to its own
	d.client = loadgen.WithHeader(&http.Client{Transport: t}, d.header)
	d.tls = tc
	return nil
}

// config is the TLS configuration the flags make, over base (the
// configuration's trust, nil when none).
func (c *clientTLSFlags) config(base *tls.Config) (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if base != nil {
		tc = base.Clone()
	}
	if c.caFile != "" {
		b, err := os.ReadFile(c.caFile)
		if err != nil {
			return nil, fmt.Errorf("read --cacert: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(b) {
			return nil, fmt.Errorf("read --cacert %s: no PEM certificate in it", c.caFile)
		}
		tc.RootCAs = pool
	}
	if c.certFile != "" {
		cert, err := c.clientCert()
		if err != nil {
			return nil, err
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	switch {
	case c.insecure:
		tc.InsecureSkipVerify = true //nolint:gosec // asked for: --insecure, perf_analyzer's --ssl-https-verify-peer 0
	case c.verifyHost == 0:
		// The chain must lead to a trusted root; the name it is for is
		// not checked (libcurl's verify-host 0).
		roots := tc.RootCAs
		tc.InsecureSkipVerify = true //nolint:gosec // VerifyConnection checks the chain
		tc.VerifyConnection = func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("the server sent no certificate")
			}
			inter := x509.NewCertPool()
			for _, ic := range cs.PeerCertificates[1:] {
				inter.AddCert(ic)
			}
			_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter})
			return err
		}
	}
	return tc, nil
}

// clientCert loads --cert and --key, each in PEM or DER as the types say.
func (c *clientTLSFlags) clientCert() (tls.Certificate, error) {
	certBytes, err := os.ReadFile(c.certFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("read --cert: %w", err)
	}
	keyBytes, err := os.ReadFile(c.keyFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("read --key: %w", err)
	}
	if strings.EqualFold(c.certType, "DER") {
		certBytes = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: certBytes})
	}
	if strings.EqualFold(c.keyType, "DER") {
		keyBytes, err = derKeyPEM(keyBytes)
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("read --key %s as DER: %w", c.keyFile, err)
		}
	}
	cert, err := tls.X509KeyPair(certBytes, keyBytes)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("load --cert %s and --key %s: %w", c.certFile, c.keyFile, err)
	}
	return cert, nil
}

// derKeyPEM is a DER private key (PKCS #8, PKCS #1 or SEC 1) in PEM.
func derKeyPEM(der []byte) ([]byte, error) {
	if _, err := x509.ParsePKCS8PrivateKey(der); err == nil {
		return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
	}
	if _, err := x509.ParsePKCS1PrivateKey(der); err == nil {
		return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: der}), nil
	}
	if _, err := x509.ParseECPrivateKey(der); err == nil {
		return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
	}
	return nil, errors.New("not a PKCS #8, PKCS #1 or SEC 1 private key")
}
