package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"github.com/gpulet/gpuletd/sim/loadgen"
	"github.com/spf13/cobra"
	"google.golang.org/grpc/codes"
)

// addDaemonFlags adds --url and --json, the flags of every command that
// talks to a running daemon.
func addDaemonFlags(cmd *cobra.Command, url *string, asJSON *bool) {
	addURLFlag(cmd.Flags(), url)
	cmd.Flags().BoolVar(asJSON, "json", false, "print JSON")
}

// adminTimeout bounds one call to a daemon's admin API (a variable for
// the tests).
var adminTimeout = 10 * time.Second

// adminGet fetches one document of a daemon's API. A daemon that does not
// answer is one clear line and exit status 1.
func adminGet(ctx context.Context, d *daemonAPI, path string, v any) error {
	return d.fail(adminFetch(ctx, d, path, v))
}

// adminFetch is adminGet with the error as loadgen gives it: a
// loadgen.HTTPError for the daemon's error answers.
func adminFetch(ctx context.Context, d *daemonAPI, path string, v any) error {
	cctx, cancel := context.WithTimeout(ctx, adminTimeout)
	defer cancel()
	defer d.client.CloseIdleConnections()
	err := loadgen.GetJSON(cctx, d.client, d.base+path, v)
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		return fmt.Errorf("%w within %s", errNoAnswerInTime, adminTimeout)
	}
	return err
}

// errNoAnswerInTime: a daemon took the connection but did not answer
// within adminTimeout (stopped, hung, or swamped).
var errNoAnswerInTime = errors.New("did not answer")

// fail turns err, from a call to the daemon, into one clear line: "nothing
// answers" (with where the installed service listens instead, d.hint), the
// TLS mismatches, and the daemon's error answers.
func (d *daemonAPI) fail(err error) error {
	base := d.base
	var he *loadgen.HTTPError
	var verify *tls.CertificateVerificationError
	var record tls.RecordHeaderError
	switch {
	case errors.As(err, &verify):
		return &exitError{code: 1, msg: fmt.Sprintf("gpuletd at %s: its certificate is not trusted here (%v): give its certificate as tls.cert_file, or one its issuer signed to the system's roots", base, verify.Err)}
	case errors.Is(err, loadgen.ErrUnreachable) && strings.Contains(err.Error(), "remote error: tls:"):
		return &exitError{code: 1, msg: fmt.Sprintf("gpuletd at %s refused this client (%s): it %s",
			base, err.Error()[strings.Index(err.Error(), "remote error: tls:"):], asksForClientCert)}
	case errors.As(err, &record), errors.Is(err, loadgen.ErrUnreachable) && strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return &exitError{code: 1, msg: "gpuletd at " + base + " does not speak TLS: reach it with --url http://…"}
	case errors.As(err, &he) && he.Code == http.StatusBadRequest && strings.Contains(he.Message, "HTTP request to an HTTPS server"):
		return &exitError{code: 1, msg: "gpuletd at " + base + " speaks TLS: set tls.cert_file (GPULETD_TLS_CERT_FILE) to its certificate, or reach it with --url https://…"}
	case errors.Is(err, loadgen.ErrUnreachable) && strings.HasPrefix(base, "https://") &&
		!errors.Is(err, syscall.ECONNREFUSED) && !errors.As(err, new(*net.DNSError)):
		// Something answered and broke the connection off. A TLS 1.3
		// server checks a client's certificate after the client thinks
		// the handshake done, so its refusal may arrive as a closed or
		// reset connection, or a failed write, rather than an alert.
		return &exitError{code: 1, msg: fmt.Sprintf("gpuletd at %s broke the connection off (%v): if it %s", base, err, asksForClientCert)}
	case errors.Is(err, loadgen.ErrUnreachable):
		msg := "no gpuletd answers at " + base + ": is it running?"
		if hint := d.serviceHint(); hint != "" {
			msg += " (" + hint + ")"
		}
		return &exitError{code: 1, msg: msg}
	case errors.Is(err, errNoAnswerInTime):
		return &exitError{code: 1, msg: fmt.Sprintf("gpuletd at %s took the connection but %v: it is hung or swamped (its log may say which)", base, err)}
	case errors.As(err, &he) && he.Code == http.StatusNotFound:
		return &exitError{code: 1, msg: "gpuletd: " + he.Message}
	case errors.As(err, &he):
		return &exitError{code: 1, msg: fmt.Sprintf("gpuletd: the daemon at %s answered %d %s: %s", base, he.Code, http.StatusText(he.Code), he.Message)}
	}
	return err
}

// failOver is fail for a command that reached the daemon over gRPC at
// grpcAddr ("" for REST): a listener that does not answer there, or a
// call it refused, says so of that address.
func (d *daemonAPI) failOver(grpcAddr string, err error) error {
	var ge *loadgen.GRPCError
	switch {
	case grpcAddr == "":
		return d.fail(err)
	case errors.Is(err, loadgen.ErrGRPCUnreachable):
		return &exitError{code: 1, msg: fmt.Sprintf("no gpuletd answers over gRPC at %s: is it running, with grpc_listen at that address? (%v)", grpcAddr, err)}
	case errors.As(err, &ge) && ge.Code == codes.NotFound:
		return &exitError{code: 1, msg: "gpuletd: " + ge.Message}
	case errors.As(err, &ge):
		return &exitError{code: 1, msg: fmt.Sprintf("gpuletd: the gRPC listener at %s answered %s to %s: %s", grpcAddr, ge.Code, ge.Call, ge.Message)}
	}
	return d.fail(err)
}

// modelOf reads what the daemon says of model (of version, unless ""):
// over gRPC from the listener at grpcAddr when given, as perf_analyzer
// asks over the protocol it sends with, else over REST.
func modelOf(ctx context.Context, d *daemonAPI, grpcAddr, model, version string) (*loadgen.Model, error) {
	if grpcAddr == "" {
		m, err := loadgen.FetchModel(ctx, d.client, d.base, model, version)
		if err != nil {
			return nil, d.fail(err)
		}
		return m, nil
	}
	c, err := d.grpcClient(ctx, grpcAddr)
	if err != nil {
		return nil, d.failOver(grpcAddr, err)
	}
	m, err := loadgen.FetchModelGRPC(ctx, c, model, version)
	if err != nil {
		return nil, d.failOver(grpcAddr, err)
	}
	return m, nil
}

// printRaw writes a JSON document indented.
func printRaw(w io.Writer, raw json.RawMessage) error {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return fmt.Errorf("indent JSON: %w", err)
	}
	b.WriteByte('\n')
	_, err := w.Write(b.Bytes())
	return err
}
