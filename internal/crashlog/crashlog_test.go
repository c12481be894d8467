package crashlog

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A Go crash report as the runtime writes it (a signal in C code), its
// register dump last.
const cgoCrash = `{"level":"info","msg":"loaded model"}
SIGSEGV: segmentation violation
PC=0x47e520 m=0 sigcode=1 addr=0x0
signal arrived during cgo execution

goroutine 1 gp=0x1835b07141e0 m=0 mp=0x532240 [syscall]:
runtime.cgocall(0x47e520, 0x1835b0758f38)
	/usr/local/go/src/runtime/cgocall.go:167 +0x4b fp=0x1835b0758f10 sp=0x1835b0758ed8 pc=0x4732cb

rax    0x0
cs     0x33
fs     0x0
gs     0x0
`

func TestHeadline(t *testing.T) {
	for _, tc := range []struct {
		name, log, want string
	}{
		{"a signal in C code", cgoCrash, "SIGSEGV: segmentation violation" + InC},
		{"a signal in Go", "SIGBUS: bus error\nPC=0x1 m=0 sigcode=2\n\ngoroutine 1 [running]:\n", "SIGBUS: bus error"},
		{"a panic", "panic: runtime error: index out of range [3] with length 3\n\ngoroutine 9 [running]:\nmain.f()\n", "panic: runtime error: index out of range [3] with length 3"},
		{"a fatal error", "fatal error: concurrent map writes\n\ngoroutine 5 [running]:\n", "fatal error: concurrent map writes"},
		{"the last of two", "panic: first\n\ngoroutine 1:\n" + cgoCrash, "SIGSEGV: segmentation violation" + InC},
		{"no crash", `{"level":"error","msg":"load failed"}` + "\nsome library's print\n", ""},
		{"a line that only mentions one", "the model said: panic: not really\n", ""},
		{"empty", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, Headline(tc.log))
		})
	}
	require.True(t, IsHeadline("SIGSEGV: segmentation violation"))
	require.False(t, IsHeadline("PC=0x47e520 m=0 sigcode=1 addr=0x0"))
	require.True(t, InCgo("signal arrived during cgo execution"))
}

// Watch finds the headline however the output is cut into writes and
// however long the report after it.
func TestWatch(t *testing.T) {
	var w Watch
	long := strings.Repeat("runtime.gopark(0x1, 0x2)\n\truntime/proc.go:462 +0xce\n", 1000)
	out := cgoCrash[:40] + "|" + cgoCrash[40:] + long + strings.Repeat("x", 2000) + "\n"
	for _, part := range strings.Split(out, "|") { // the headline cut in two writes
		for len(part) > 0 {
			n := min(len(part), 7)
			_, err := w.Write([]byte(part[:n]))
			require.NoError(t, err)
			part = part[n:]
		}
	}
	require.Equal(t, "SIGSEGV: segmentation violation"+InC, w.Headline())
	var none Watch
	_, _ = none.Write([]byte("{\"level\":\"info\"}\npanic: not ended by a newline"))
	require.Empty(t, none.Headline())
}

// A Tail keeps the last bytes written, and puts a crash report's headline
// that has left them before them.
func TestTail(t *testing.T) {
	b := NewTail(8)
	n, err := b.Write([]byte("one\ntwo\nthree\n"))
	require.NoError(t, err)
	require.Equal(t, 14, n, "a write past the bound still takes it all")
	require.Equal(t, "o\nthree\n", b.String())
	require.Empty(t, b.Headline())

	crash := NewTail(16)
	_, _ = crash.Write([]byte("SIGSEGV: segmentation violation\nPC=0x1\n" + strings.Repeat("rax 0x0\n", 4)))
	require.Equal(t, "SIGSEGV: segmentation violation", crash.Headline())
	require.Equal(t, "SIGSEGV: segmentation violation\n…\nrax 0x0\nrax 0x0\n", crash.String())
}
