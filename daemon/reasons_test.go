package daemon

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/code"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	grpcstatus "google.golang.org/grpc/status"
)

// documentedReason is a row of OPERATIONS.md's table of failure reasons.
type documentedReason struct {
	http string // a status code, or prose where it varies
	grpc string
}

// failureReasonTable reads the table under "### Why a request failed".
func failureReasonTable(t *testing.T) map[string]documentedReason {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "docs", "OPERATIONS.md"))
	require.NoError(t, err)
	defer func() { require.NoError(t, f.Close()) }()
	row := regexp.MustCompile("^\\| `([a-z_]+)` \\| ([^|]+) \\| ([^|]+) \\|")
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
				out[m[1]] = documentedReason{http: strings.TrimSpace(m[2]), grpc: strings.TrimSpace(m[3])}
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
			for _, d := range st.Details() {
				if r, ok := d.(*errdetails.RetryInfo); ok {
					retry = r
				}
			}
			require.Equal(t, httpCode == 503, retry != nil, "RetryInfo goes with 503 only")
			if retry != nil {
				require.Equal(t, retryDelay, retry.RetryDelay.AsDuration())
			}
		})
	}
	for reason := range docs {
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
