package profiler

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/internal/crashlog"
)

// An executor that crashed says what its crash report's headline said,
// even when the report (every goroutine's stack, then the registers) is
// longer than the tail kept; an executor that did not, its last lines.
func TestLogTailOfACrash(t *testing.T) {
	b := crashlog.NewTail(1 << 10)
	_, _ = b.Write([]byte(`{"level":"info","msg":"loading"}` + "\nSIGSEGV: segmentation violation\nPC=0x1 m=0 sigcode=1 addr=0x0\nsignal arrived during cgo execution\n\n"))
	_, _ = b.Write([]byte(strings.Repeat("runtime.gopark(0x1)\n\truntime/proc.go:462 +0xce\n", 200) + "rax    0x0\ncs     0x33\n"))
	require.Equal(t, "; executor crashed: SIGSEGV: segmentation violation"+crashlog.InC, logTail(b.String()))

	quiet := crashlog.NewTail(1 << 10)
	_, _ = quiet.Write([]byte("one\ntwo\nthree\nfour\n"))
	require.Equal(t, "; executor log: two | three | four", logTail(quiet.String()))
	require.Empty(t, logTail(crashlog.NewTail(16).String()))
}
