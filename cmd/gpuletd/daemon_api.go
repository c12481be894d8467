package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"strings"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/internal/listenfile"
	"github.com/gpulet/gpuletd/sim/loadgen"
	"github.com/spf13/cobra"
)

// daemonAPI is how gpuletd's commands reach a running daemon: its base URL
// and an HTTP client that trusts its certificate.
type daemonAPI struct {
	base   string
	client *http.Client
	// tls is what the client trusts: the system's roots and, when the
	// configuration serves TLS, its certificate (a self-signed one then
	// works too); nil for a daemon reached over plain HTTP, whose gRPC
	// listener is taken to be plain too.
	tls *tls.Config
	// hint is added to "no gpuletd answers": where the installed
	// service's configuration says it listens instead (listenHint); a
	// function, so that the file is read only when nothing answered.
	hint func() string
	// header is what every request carries to pass the configuration's
	// auth.restricted_apis: client sends it over REST, and gRPC calls as
	// metadata.
	header map[string]string
	// grpcs keeps the command's connections to gRPC listeners
	// (grpcClient); closeGRPC closes them.
	grpcs grpcPool
}

// headerUsage is the --header flag's usage.
const headerUsage = `a header every request carries, "NAME:VALUE" (repeatable), as perf_analyzer's -H: over gRPC as metadata; such as a key a daemon's auth.restricted_apis asks for (the configuration's are sent already)`

// addHeaders has every request of d carry the headers given as
// "NAME:VALUE" too (--header), over those the configuration gives.
func (d *daemonAPI) addHeaders(given []string) error {
	if len(given) == 0 {
		return nil
	}
	header := maps.Clone(d.header)
	if header == nil {
		header = map[string]string{}
	}
	for _, h := range given {
		name, value, ok := strings.Cut(h, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t") {
			return &exitError{code: 2, msg: fmt.Sprintf("--header %q: give NAME:VALUE, such as x-infer-key:s3cret", h)}
		}
		header[name] = strings.TrimSpace(value)
	}
	d.header, d.client = header, loadgen.WithHeader(d.client, header)
	return nil
}

// serviceHint is d's hint, "" when it has none.
func (d *daemonAPI) serviceHint() string {
	if d.hint == nil {
		return ""
	}
	return d.hint()
}

// plainAPI reaches a daemon at base with no trust beyond the system's.
func plainAPI(base string) *daemonAPI { return &daemonAPI{base: base, client: &http.Client{}} }

// daemon is the daemon at --url, or at the configured listen address. Found
// from the configuration, it first says the configuration's warnings on
// warn, as serve and config do: a misspelt GPULETD_LISTEN otherwise sends
// the command to the default address without a word.
func (g *globalFlags) daemon(warn io.Writer, flag string) (*daemonAPI, error) {
	l, loadErr := g.loadConfig()
	base, err := daemonURL(l, loadErr, flag)
	if err != nil {
		return nil, err
	}
	if flag == "" && loadErr == nil {
		base = runningAt(l.Config, base)
	}
	var hint func() string
	var header map[string]string
	if loadErr == nil {
		header = l.Config.Auth.RestrictionHeaders()
	}
	if flag == "" {
		for _, w := range l.Warnings {
			fmt.Fprintln(warn, "warning: "+w)
		}
		hint = func() string { return g.listenHint(base) }
	}
	var tc *tls.Config
	switch {
	case loadErr == nil && l.Config.TLS.Enabled():
		if flag == "" && l.Config.TLS.ClientCAFile != "" && l.Config.TLS.ClientCertFile == "" {
			// The configured daemon would refuse the handshake; how it
			// does so reaches a client in more than one form.
			return nil, &exitError{code: 1, msg: "gpuletd at " + base + " " + asksForClientCert}
		}
		if tc, err = trustConfig(l.Config.TLS); err != nil {
			return nil, err
		}
	case strings.HasPrefix(base, "https://"):
		// A daemon given by --url whose certificate the system's roots
		// vouch for: its gRPC listener speaks TLS too.
		tc = &tls.Config{MinVersion: tls.VersionTLS12}
	default:
		// With --url, a configuration that does not load only loses its
		// certificate's trust; without it daemonURL has said why.
		d := plainAPI(base)
		d.hint, d.header, d.client = hint, header, loadgen.WithHeader(d.client, header)
		return d, nil
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = tc.Clone() // the transport adds its protocols to its own
	d := &daemonAPI{base: base, client: loadgen.WithHeader(&http.Client{Transport: t}, header), hint: hint, header: header}
	if strings.HasPrefix(base, "https://") {
		d.tls = tc // and gRPC goes over TLS as well
	}
	return d, nil
}

// daemonOf is daemon for cmd: its warnings on cmd's standard error, and
// the TLS flags cmd was given (--cacert, --cert, --insecure…) applied.
func (g *globalFlags) daemonOf(cmd *cobra.Command, flag string) (*daemonAPI, error) {
	d, err := g.daemon(cmd.ErrOrStderr(), flag)
	if err != nil {
		return nil, err
	}
	if err := applyClientTLS(cmd.Flags(), d); err != nil {
		return nil, err
	}
	return d, nil
}

// asksForClientCert is what a command says of a daemon that asks for a
// client certificate it does not have.
const asksForClientCert = "asks for a client certificate: set tls.client_cert_file and tls.client_key_file to one its tls.client_ca_file vouches for"

// trustConfig trusts the system's roots and the certificates of the
// configured tls.cert_file, and presents tls.client_cert_file when set.
func trustConfig(c config.TLS) (*tls.Config, error) {
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	pem, err := os.ReadFile(c.CertFile)
	if err != nil {
		return nil, fmt.Errorf("read tls.cert_file to trust the daemon: %w", err)
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("read tls.cert_file %s to trust the daemon: no PEM certificate in it", c.CertFile)
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool}
	if c.ClientCertFile != "" {
		cert, err := tls.LoadX509KeyPair(c.ClientCertFile, c.ClientKeyFile)
		if err != nil {
			return nil, fmt.Errorf("load tls.client_cert_file %s and tls.client_key_file %s: %w", c.ClientCertFile, c.ClientKeyFile, err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

// tokenUsage is the --token flag's usage in every command that makes an
// admin call.
const tokenUsage = "the admin token, needed off loopback (default: the configuration's auth.admin_token)"

// urlUsage is the --url flag's usage in every command that reaches a
// daemon.
const urlUsage = "the daemon's base URL (default: where the daemon holding the configured runtime_dir says it listens, else the configured listen address; https when tls is set)"

// daemonURL is --url, or the configured listen address (a wildcard host is
// reached on loopback), over https when the configuration serves TLS; l
// and loadErr are the configuration's loading (g.loadConfig).
func daemonURL(l *config.Loaded, loadErr error, flag string) (string, error) {
	scheme := "http://"
	if loadErr == nil && l.Config.TLS.Enabled() {
		scheme = "https://"
	}
	if flag != "" {
		if !strings.Contains(flag, "://") {
			flag = scheme + flag
		}
		return strings.TrimRight(flag, "/"), nil
	}
	if loadErr != nil {
		return "", loadErr
	}
	addr, err := listenfile.Dialable(l.Config.Listen)
	if err != nil {
		return "", err
	}
	return scheme + addr, nil
}

// runningAt is where the daemon that holds c's runtime_dir says it listens
// (package listenfile), so that one started with other addresses than the
// configuration's (gpuletd tritonserver's --http-port, GPULETD_LISTEN set
// for it alone) is reached where it is; base, the address c gives, when no
// such daemon runs, or when it serves HTTPS and c gives no certificate to
// trust it by.
func runningAt(c config.Config, base string) string {
	r, ok := listenfile.Live(c.RuntimeDir)
	if !ok || (r.TLS && !c.TLS.Enabled()) {
		return base
	}
	if url, err := r.URL(); err == nil {
		return url
	}
	return base
}
