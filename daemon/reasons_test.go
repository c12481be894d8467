package daemon

import (
	"bufio"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gpulet/gpuletd/daemon/connlimit"
	"github.com/gpulet/gpuletd/kserve"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/code"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
)

// documentedReason is a row of OPERATIONS.md's table of failure reasons.
type documentedReason struct {
	http  string // a status code, or prose where it varies
	grpc  string
	retry string // "1 s", or "–" for none
}

// failureReasonTable reads the table under "### Why a request failed".
func failureReasonTable(t *testing.T) map[string]documentedReason {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "docs", "OPERATIONS.md"))
	require.NoError(t, err)
	defer func() { require.NoError(t, f.Close()) }()
	row := regexp.MustCompile("^\\| `([a-z_]+)` \\| ([^|]+) \\| ([^|]+) \\| ([^|]+) \\|")
	out := map[string]documentedReason{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "### Why a request failed":
			in = true
		case in && strings.HasPrefix(line, "#"):
			in = false
		case in:
			if m := row.FindStringSubmatch(line); m != nil {
				out[m[1]] = documentedReason{http: strings.TrimSpace(m[2]), grpc: strings.TrimSpace(m[3]), retry: strings.TrimSpace(m[4])}
			}
		}
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, out, "OPERATIONS.md has a table under \"### Why a request failed\"")
	return out
}

func TestEveryFailureReasonIsDocumentedWithItsCodes(t *testing.T) {
	docs := failureReasonTable(t)
	for _, reason := range failureReasons {
		t.Run(reason, func(t *testing.T) {
			row, ok := docs[reason]
			require.True(t, ok, "OPERATIONS.md lists reason %q", reason)
			httpCode, err := strconv.Atoi(row.http)
			if err != nil {
				require.Equal(t, reasonDroppedEarly, reason, "only a pipeline's drop answers with its step's code")
				return
			}
			st := grpcstatus.Convert(grpcError(&inferError{code: httpCode, reason: reason, msg: "m: why"}))
			require.Equal(t, row.grpc, code.Code(st.Code()).String(), "the gRPC code OPERATIONS.md gives")
			require.Equal(t, "m: why", st.Message())
			var retry *errdetails.RetryInfo
			var info *errdetails.ErrorInfo
			for _, d := range st.Details() {
				switch d := d.(type) {
				case *errdetails.RetryInfo:
					retry = d
				case *errdetails.ErrorInfo:
					info = d
				}
			}
			require.NotNil(t, info, "the reason, for clients that count by cause")
			require.Equal(t, reason, info.Reason)
			require.Equal(t, kserve.ErrorDomain, info.Domain)
			require.Equal(t, row.retry == "1 s", retry != nil, "RetryInfo where OPERATIONS.md says a retry may cure it (%q)", row.retry)
			if retry != nil {
				require.Equal(t, retryDelay, retry.RetryDelay.AsDuration())
			}

			// REST says the same: the status, the message and the wait.
			rec := httptest.NewRecorder()
			writeInferError(rec, &inferError{code: httpCode, reason: reason, msg: "m: why"})
			require.Equal(t, httpCode, rec.Code)
			require.JSONEq(t, `{"error": "m: why"}`, rec.Body.String())
			require.Equal(t, reason, rec.Header().Get(kserve.HeaderFailureReason), "the reason, for clients that count by cause")
			if retry != nil {
				require.Equal(t, "1", rec.Header().Get("Retry-After"))
			} else {
				require.Empty(t, rec.Header().Get("Retry-After"))
			}
		})
	}
	for reason, row := range docs {
		if reason == connlimit.RefusalReason {
			// Refused with the connection, before a model is known: the
			// listener's answer and the gRPC calls' over the cap.
			require.Equal(t, []string{"503", "UNAVAILABLE", "1 s"}, []string{row.http, row.grpc, row.retry})
			st := grpcstatus.Convert(errOverCap)
			require.Equal(t, codes.Unavailable, st.Code())
			require.Len(t, st.Details(), 1, "RetryInfo")
			continue
		}
		require.Contains(t, failureReasons, reason, "OPERATIONS.md lists a reason the daemon never gives")
	}
}

func TestReasonsAreNamedConstants(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	literal := regexp.MustCompile(`reason:\s*"`)
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		b, err := os.ReadFile(name)
		require.NoError(t, err)
		require.False(t, literal.Match(b), "%s writes a failure reason as a literal: add it to reasons.go", name)
	}
}
