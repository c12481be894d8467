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
)

// addDaemonFlags adds --url and --json, the flags of every command that
// talks to a running daemon.
func addDaemonFlags(cmd *cobra.Command, url *string, asJSON *bool) {
	cmd.Flags().StringVar(url, "url", "", urlUsage)
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
