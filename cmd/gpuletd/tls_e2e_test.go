package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/internal/testbin"
	"github.com/gpulet/gpuletd/internal/testcert"
	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
	"github.com/gpulet/gpuletd/modelzoo"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// writeCert writes a self-signed certificate for 127.0.0.1 and localhost
// with the given serial, and its key, valid for a day from now.
func writeCert(t *testing.T, certFile, keyFile string, serial int64) time.Time {
	t.Helper()
	c := testcert.Issue(t, testcert.Options{Serial: serial})
	c.Write(t, certFile, keyFile)
	return c.Cert.NotAfter
}

// servedSerial is the serial of the certificate a new connection to addr
// is served, trusting any (the test looks at which one it is).
func servedSerial(t *testing.T, addr string) int64 {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // the test reads the certificate
	require.NoError(t, err)
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber.Int64()
}

// TestTLS serves both listeners over TLS: HTTPS and gRPC with the
// configured certificate, nothing in plain text, gpuletd's own commands
// trusting the certificate, its expiry in the metrics, a renewed certificate
// served after a reload, and a broken one refused while the old one serves.
func TestTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	notAfter := writeCert(t, certFile, keyFile, 1)
	repo := filepath.Join(dir, "models")
	require.NoError(t, modelzoo.WriteRepository(repo, []string{"lenet5"}, 3))
	setProfile(t, repo, "lenet5", "alexnet", "200ms")
	grpcAddr, metricsAddr := freeAddr(t), freeAddr(t)
	env := daemonEnv(t, "GPULETD_MODEL_REPOSITORY="+repo, "GPULETD_GRPC_LISTEN="+grpcAddr, "GPULETD_METRICS_LISTEN="+metricsAddr,
		"GPULETD_TLS_CERT_FILE="+certFile, "GPULETD_TLS_KEY_FILE="+keyFile)
	addr, logs, pid := startDaemonUnder(t, env)
	base := "https://" + addr
	_, client := probeClient(t, env)
	get := func(path string) (int, string) {
		resp, err := client.Get(base + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}
	require.Eventually(t, func() bool { code, _ := get("/v2/models/lenet5/ready"); return code == 200 },
		2*time.Minute, 200*time.Millisecond, "logs:\n%s", logs)

	// Inference over HTTPS; nothing in plain text.
	resp, err := client.Post(base+"/v2/models/lenet5/infer", "application/json", bytes.NewReader(lenetJSON()))
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode, string(body))
	require.Equal(t, uint16(tls.VersionTLS13), resp.TLS.Version)
	// A client that offers HTTP/2 gets it, and its requests at once on one
	// connection are answered as over HTTP/1.1.
	h2 := &http.Client{Transport: &http.Transport{ForceAttemptHTTP2: true,
		TLSClientConfig: client.Transport.(*http.Transport).TLSClientConfig.Clone()}}
	defer h2.CloseIdleConnections()
	got := make([]string, 20)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() {
			resp, err := h2.Post(base+"/v2/models/lenet5/infer", "application/json", bytes.NewReader(lenetJSON()))
			if err != nil {
				got[i] = err.Error()
				return
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			got[i] = fmt.Sprintf("%s %d %v %d", resp.Proto, resp.StatusCode, err, bytes.Count(b, []byte(`"name":"output"`)))
		})
	}
	wg.Wait()
	for _, g := range got {
		require.Equal(t, "HTTP/2.0 200 <nil> 1", g)
	}
	plain, err := http.Get("http://" + addr + "/v2/health/ready")
	require.NoError(t, err)
	plain.Body.Close()
	require.Equal(t, 400, plain.StatusCode, "plain HTTP to the TLS listener")
	_, metrics := get("/metrics")
	require.Contains(t, metrics, "gpuletd_tls_certificate_expiry_timestamp_seconds "+strconv.FormatFloat(float64(notAfter.Unix()), 'e', -1, 64))
	// The metrics listener over TLS too, and not without it.
	resp, err = client.Get("https://" + metricsAddr + "/metrics")
	require.NoError(t, err)
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode, string(body))
	require.Contains(t, string(body), "gpuletd_tls_certificate_expiry_timestamp_seconds ")
	plain, err = http.Get("http://" + metricsAddr + "/metrics")
	require.NoError(t, err)
	plain.Body.Close()
	require.Equal(t, 400, plain.StatusCode, "plain HTTP to the TLS metrics listener")

	// gRPC over TLS, and not without it.
	pool := client.Transport.(*http.Transport).TLSClientConfig.RootCAs
	conn, err := grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: pool})))
	require.NoError(t, err)
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	live, err := pb.NewGRPCInferenceServiceClient(conn).ServerLive(ctx, &pb.ServerLiveRequest{})
	require.NoError(t, err)
	require.True(t, live.Live)
	bare, err := grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer bare.Close()
	_, err = pb.NewGRPCInferenceServiceClient(bare).ServerLive(ctx, &pb.ServerLiveRequest{})
	require.Error(t, err, "gRPC in plain text to the TLS listener")

	// A daemon the configuration does not describe (another node's): its
	// certificate is trusted with --cacert, as curl's, or perf_analyzer's
	// --ssl-* files, over REST and gRPC.
	code, _, stderr := runCLI(t, "infer", "lenet5", "--url", base)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "certificate signed by unknown authority")
	code, out, stderr := runCLI(t, "infer", "lenet5", "--url", base, "--cacert", certFile)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "output  FP32 [1 10]")
	code, out, stderr = runCLI(t, "infer", "lenet5", "--url", "http://"+metricsAddr, "--grpc", grpcAddr, "--ssl-grpc-root-certifications-file", certFile)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "output  FP32 [1 10]")
	code, out, stderr = runCLI(t, "load", "-m", "lenet5", "-u", base, "--ssl-https-ca-certificates-file", certFile, "-p", "300")
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, `(?m)^requests +\d+ scheduled, \d+ sent, 0 dropped by this client, [1-9]\d* ok$`, out)
	// Every command that reaches a daemon takes them: the status, a model's
	// page of the repository, the trace settings.
	code, _, stderr = runCLI(t, "status", "--url", base)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "certificate signed by unknown authority")
	for _, args := range [][]string{{"status"}, {"models", "list"}, {"trace"}} {
		code, out, stderr = runCLI(t, append(args, "--url", base, "--cacert", certFile)...)
		require.Equal(t, 0, code, "%v: %s", args, stderr)
		require.NotEmpty(t, out)
	}

	// gpuletd's commands find the daemon over https from the configuration
	// and trust its certificate; load goes over TLS to both listeners.
	t.Setenv("GPULETD_LISTEN", addr)
	t.Setenv("GPULETD_TLS_CERT_FILE", certFile)
	t.Setenv("GPULETD_TLS_KEY_FILE", keyFile)
	code, out, stderr = runCLI(t, "status")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "lenet5")
	require.Contains(t, out, "TLS: CN=gpuletd test, valid until "+notAfter.UTC().Format(time.DateOnly)+"\n", "the status names the certificate")
	code, out, stderr = runCLI(t, "infer", "lenet5")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "output  FP32 [1 10]")
	for _, via := range [][]string{nil, {"--grpc", grpcAddr}} {
		code, out, stderr = runCLI(t, append([]string{"load", "--model", "lenet5", "--rate", "20", "--duration", "500ms", "--json"}, via...)...)
		require.Equal(t, 0, code, stderr)
		var load struct {
			Report struct {
				Sent int64 `json:"sent"`
				OK   int64 `json:"ok"`
			} `json:"report"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &load))
		require.Positive(t, load.Report.OK, "%v: %s", via, out)
	}

	// A renewed certificate in the same files serves new connections after
	// a reload, without a restart.
	require.Equal(t, int64(1), servedSerial(t, addr))
	writeCert(t, certFile, keyFile, 2)
	require.NoError(t, syscall.Kill(pid, syscall.SIGHUP))
	require.Eventually(t, func() bool { return servedSerial(t, addr) == 2 }, 10*time.Second, 50*time.Millisecond, "logs:\n%s", logs)
	require.Equal(t, int64(2), servedSerial(t, grpcAddr), "the gRPC listener serves it too")

	// A broken one is refused and the renewed one keeps serving.
	require.NoError(t, os.WriteFile(certFile, []byte("not a certificate"), 0o644))
	require.NoError(t, syscall.Kill(pid, syscall.SIGHUP))
	require.Eventually(t, func() bool {
		return strings.Contains(logs.String(), "the TLS certificate in use stays")
	}, 10*time.Second, 50*time.Millisecond, "logs:\n%s", logs)
	require.Equal(t, int64(2), servedSerial(t, addr))
}

// TestServeRefusesAMissingCertificate: a certificate that does not load is
// an error at start naming the files, before anything listens.
func TestServeRefusesAMissingCertificate(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	dir := t.TempDir()
	repo := filepath.Join(dir, "models")
	require.NoError(t, modelzoo.WriteRepository(repo, []string{"lenet5"}, 3))
	cmd := exec.Command(testbin.Gpuletd(t), "serve")
	cmd.Env = append(daemonEnv(t, "GPULETD_MODEL_REPOSITORY="+repo, "GPULETD_LISTEN="+freeAddr(t)),
		"GPULETD_TLS_CERT_FILE="+filepath.Join(dir, "missing.pem"), "GPULETD_TLS_KEY_FILE="+filepath.Join(dir, "missing-key.pem"))
	out, err := cmd.CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), "load tls.cert_file "+filepath.Join(dir, "missing.pem"))
	require.Contains(t, string(out), "no such file or directory")
}

// TestMutualTLS: with tls.client_ca_file the daemon serves only clients
// whose certificate that CA signed, on both listeners; gpuletd's commands
// present tls.client_cert_file, and without one say what is missing.
func TestMutualTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	dir := t.TempDir()
	file := func(name string) string { return filepath.Join(dir, name) }
	testcert.Issue(t, testcert.Options{}).Write(t, file("cert.pem"), file("key.pem"))
	ca := testcert.Issue(t, testcert.Options{CA: true, CommonName: "clients"})
	require.NoError(t, os.WriteFile(file("ca.pem"), ca.CertPEM, 0o600))
	client := testcert.Issue(t, testcert.Options{Client: true, Parent: ca, CommonName: "operator"})
	client.Write(t, file("client.pem"), file("client-key.pem"))
	stranger := testcert.Issue(t, testcert.Options{Client: true, CommonName: "stranger"})

	repo := filepath.Join(dir, "models")
	require.NoError(t, modelzoo.WriteRepository(repo, []string{"lenet5"}, 3))
	setProfile(t, repo, "lenet5", "alexnet", "200ms")
	grpcAddr := freeAddr(t)
	tlsEnv := []string{"GPULETD_TLS_CERT_FILE=" + file("cert.pem"), "GPULETD_TLS_KEY_FILE=" + file("key.pem"),
		"GPULETD_TLS_CLIENT_CA_FILE=" + file("ca.pem"),
		"GPULETD_TLS_CLIENT_CERT_FILE=" + file("client.pem"), "GPULETD_TLS_CLIENT_KEY_FILE=" + file("client-key.pem")}
	env := daemonEnv(t, append([]string{"GPULETD_MODEL_REPOSITORY=" + repo, "GPULETD_GRPC_LISTEN=" + grpcAddr}, tlsEnv...)...)
	addr, logs := startDaemon(t, env)
	for _, kv := range tlsEnv {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	t.Setenv("GPULETD_LISTEN", addr)
	require.Eventually(t, func() bool { code, _, _ := runCLI(t, "status"); return code == 0 },
		time.Minute, 200*time.Millisecond, "the commands present the client certificate; logs:\n%s", logs)
	_, out, _ := runCLI(t, "status")
	require.Contains(t, out, ", client certificates required\n")

	_, probe := probeClient(t, env)
	roots := probe.Transport.(*http.Transport).TLSClientConfig.RootCAs
	withCert := func(c *testcert.Cert) *tls.Config {
		tc := &tls.Config{RootCAs: roots}
		if c != nil {
			pair, err := tls.X509KeyPair(c.CertPEM, c.KeyPEM)
			require.NoError(t, err)
			tc.Certificates = []tls.Certificate{pair}
		}
		return tc
	}
	for _, tc := range []struct {
		name string
		cert *testcert.Cert
		ok   bool
	}{{"the CA's client", client, true}, {"no certificate", nil, false}, {"a stranger's", stranger, false}} {
		t.Run(tc.name, func(t *testing.T) {
			hc := &http.Client{Transport: &http.Transport{TLSClientConfig: withCert(tc.cert), DisableKeepAlives: true}}
			resp, err := hc.Get("https://" + addr + "/v2/health/live")
			if resp != nil {
				resp.Body.Close()
			}
			conn, gerr := grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(credentials.NewTLS(withCert(tc.cert))))
			require.NoError(t, gerr)
			defer conn.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, gerr = pb.NewGRPCInferenceServiceClient(conn).ServerLive(ctx, &pb.ServerLiveRequest{})
			if tc.ok {
				require.NoError(t, err)
				require.Equal(t, 200, resp.StatusCode)
				require.NoError(t, gerr)
				return
			}
			require.Error(t, err, "HTTPS refused")
			require.Error(t, gerr, "gRPC refused")
		})
	}

	// gpuletd load presents it on both listeners.
	for _, via := range [][]string{nil, {"--grpc", grpcAddr}} {
		code, out, stderr := runCLI(t, append([]string{"load", "--model", "lenet5", "--rate", "20", "--duration", "500ms", "--json"}, via...)...)
		require.Equal(t, 0, code, stderr)
		require.Contains(t, out, `"ok"`)
	}
	// Without it, the commands say what is missing.
	require.NoError(t, os.Unsetenv("GPULETD_TLS_CLIENT_CERT_FILE"))
	require.NoError(t, os.Unsetenv("GPULETD_TLS_CLIENT_KEY_FILE"))
	code, _, stderr := runCLI(t, "status")
	require.Equal(t, 1, code)
	require.Equal(t, "gpuletd at https://"+addr+" asks for a client certificate: set tls.client_cert_file and tls.client_key_file to one its tls.client_ca_file vouches for\n", stderr)
	// Reached by --url, the daemon's refusal is read from the handshake.
	code, _, stderr = runCLI(t, "status", "--url", "https://"+addr)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "asks for a client certificate: set tls.client_cert_file and tls.client_key_file")
}
