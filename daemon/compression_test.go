package daemon

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/daemon/connlimit"
	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/stretchr/testify/require"
)

func compressed(t *testing.T, format string, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	var w io.WriteCloser
	switch format {
	case "gzip":
		w = gzip.NewWriter(&buf)
	case "zlib":
		w = zlib.NewWriter(&buf)
	case "raw":
		fw, err := flate.NewWriter(&buf, flate.DefaultCompression)
		require.NoError(t, err)
		w = fw
	}
	_, err := w.Write(b)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return buf.Bytes()
}

func TestAnswerCoding(t *testing.T) {
	for _, tc := range []struct {
		accept, want string
	}{
		{"", "identity"},
		{"gzip", "gzip"},
		{"GZIP", "gzip"},
		{"deflate", "deflate"},
		{"gzip, deflate", "gzip"},
		{"deflate, gzip", "deflate"},
		{"gzip;q=0.5, deflate", "deflate"},
		{"gzip; q=0.8, deflate;q=0.2", "gzip"},
		{"br", "identity"},
		{"br, gzip;q=0.1", "gzip"},
		{"*", "gzip"},
		{"gzip;q=0", "identity"},
		{"identity, gzip;q=0.5", "identity"},
		{"gzip;q=abc, deflate;q=0.3", "deflate"},
		{" , ;q=1, gzip", "gzip"},
	} {
		t.Run(tc.accept, func(t *testing.T) {
			require.Equal(t, tc.want, answerCoding(tc.accept))
		})
	}
}

func TestDecodedBody(t *testing.T) {
	body := []byte(strings.Repeat(`{"inputs":[]}`, 100))
	for _, tc := range []struct {
		name   string
		coding string
		raw    []byte
		limit  int64
		want   []byte
		err    string
		tooBig bool
	}{
		{"uncompressed", "", body, 1 << 20, body, "", false},
		{"identity", "identity", body, 1 << 20, body, "", false},
		{"gzip", "gzip", compressed(t, "gzip", body), 1 << 20, body, "", false},
		{"x-gzip", "x-gzip", compressed(t, "gzip", body), 1 << 20, body, "", false},
		{"deflate in zlib", "Deflate", compressed(t, "zlib", body), 1 << 20, body, "", false},
		{"deflate sent in gzip's format", "deflate", compressed(t, "gzip", body), 1 << 20, body, "", false},
		{"exactly the limit", "gzip", compressed(t, "gzip", body), int64(len(body)), body, "", false},
		{"a byte over the limit", "gzip", compressed(t, "gzip", body), int64(len(body)) - 1, nil, "", true},
		{"a bomb", "gzip", compressed(t, "gzip", make([]byte, 8<<20)), 64 << 10, nil, "", true},
		{"raw deflate, no zlib header", "deflate", compressed(t, "raw", body), 1 << 20, nil, "decompress deflate body: zlib: invalid header", false},
		{"not gzip", "gzip", body, 1 << 20, nil, "decompress gzip body: gzip: invalid header", false},
		{"empty gzip body", "gzip", nil, 1 << 20, nil, "decompress gzip body: unexpected EOF", false},
		{"cut short", "gzip", compressed(t, "gzip", body)[:20], 1 << 20, nil, "decompress gzip body: unexpected EOF", false},
		{"corrupt checksum", "gzip", func() []byte {
			b := compressed(t, "gzip", body)
			b[len(b)-5] ^= 0xff
			return b
		}(), 1 << 20, nil, "decompress gzip body: gzip: invalid checksum", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, size, err := decodedBody(tc.coding, bytes.NewReader(tc.raw), int64(len(tc.raw)), tc.limit)
			require.NoError(t, err)
			if tc.coding == "" || tc.coding == "identity" {
				require.Equal(t, int64(len(tc.raw)), size, "an uncompressed body keeps its length")
			} else {
				require.Equal(t, min(tc.limit, max(8*int64(len(tc.raw)), 4<<10)), size, "a compressed body's length is guessed")
			}
			got, err := io.ReadAll(r)
			switch {
			case tc.tooBig:
				var tooBig *http.MaxBytesError
				require.ErrorAs(t, err, &tooBig)
				require.Equal(t, tc.limit, tooBig.Limit)
				require.LessOrEqual(t, int64(len(got)), tc.limit, "never more than the limit is given")
			case tc.err != "":
				require.EqualError(t, err, tc.err)
			default:
				require.NoError(t, err)
				require.Equal(t, tc.want, got)
			}
		})
	}
	_, _, err := decodedBody("br", bytes.NewReader(body), int64(len(body)), 1<<20)
	require.True(t, errors.Is(err, errUnsupportedCoding))
	require.EqualError(t, err, `unsupported content coding "br": gpuletd reads gzip and deflate (zlib) bodies`)
	_, _, err = decodedBody("gzip, deflate", bytes.NewReader(body), int64(len(body)), 1<<20)
	require.ErrorIs(t, err, errUnsupportedCoding, "codings applied one over another are not read")
}

// decodedAnswer is an answer's body read back from its coding (gzip,
// deflate; anything else: as it is).
func decodedAnswer(t *testing.T, coding string, body []byte) []byte {
	t.Helper()
	var r io.Reader = bytes.NewReader(body)
	var err error
	switch coding {
	case "gzip":
		r, err = gzip.NewReader(r)
	case "deflate":
		r, err = zlib.NewReader(r)
	}
	require.NoError(t, err)
	got, err := io.ReadAll(r)
	require.NoError(t, err)
	return got
}

func TestEncodeAnswer(t *testing.T) {
	large := []byte(strings.Repeat(`{"name":"output","data":[0.25,0.5]}`, 100))
	small := large[:minCompressedAnswer-1]
	for _, tc := range []struct {
		name, accept string
		body         []byte
		coding       string
	}{
		{"nothing accepted", "", large, "identity"},
		{"gzip", "gzip", large, "gzip"},
		{"deflate", "deflate", large, "deflate"},
		{"too small to gain", "gzip", small, "identity"},
		{"a coding gpuletd does not write", "br", large, "identity"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, coding := encodeAnswer(tc.accept, tc.body)
			require.Equal(t, tc.coding, coding)
			require.Equal(t, tc.body, decodedAnswer(t, coding, out))
			if coding != "identity" {
				require.Less(t, len(out), len(tc.body))
			}
		})
	}
	// Pooled compressors start every answer afresh.
	first, _ := encodeAnswer("gzip", large)
	second, _ := encodeAnswer("gzip", large)
	require.Equal(t, first, second)
}

// BenchmarkCompression is the CPU an inference body's compression costs
// the daemon: reading lenet5's 8 KiB JSON request sent in gzip, and writing
// a 16 KiB JSON answer in gzip.
func BenchmarkCompression(b *testing.B) {
	var req strings.Builder
	req.WriteString(`{"inputs":[{"name":"input","shape":[1,1,28,28],"datatype":"FP32","data":[`)
	for i := range 784 {
		if i > 0 {
			req.WriteByte(',')
		}
		req.WriteString(strconv.FormatFloat(float64(i*7919%1000)/1000, 'f', -1, 32))
	}
	req.WriteString(`]}]}`)
	body := []byte(req.String())
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	_, _ = zw.Write(body)
	_ = zw.Close()
	answer := bytes.Repeat([]byte(`0.123456789,`), 16<<10/12)
	b.Run("read 8KiB request", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			r, _, _ := decodedBody("gzip", bytes.NewReader(zipped.Bytes()), int64(zipped.Len()), 1<<20)
			if _, err := io.Copy(io.Discard, r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("write 16KiB answer", func(b *testing.B) {
		b.SetBytes(int64(len(answer)))
		b.ReportAllocs()
		for b.Loop() {
			if _, coding := encodeAnswer("gzip", answer); coding != "gzip" {
				b.Fatal(coding)
			}
		}
	})
}

// A compressed body holds its decompressor's buffers in the budget of
// request bytes while it is read, and gives them back after.
func TestCompressedBodyHoldsItsDecompressor(t *testing.T) {
	body := []byte(strings.Repeat(`{"inputs":[]}`, 100))
	for _, tc := range []struct {
		name, coding string
		budget       int64
		raw          []byte
		reason       string // "" read
	}{
		{"room for the decompressor", "gzip", 1 << 20, compressed(t, "gzip", body), ""},
		{"no room for it", "gzip", 56 << 10, compressed(t, "gzip", body), reasonMemoryBudget},
		{"an uncompressed body needs none", "", 56 << 10, body, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := &node{bodies: connlimit.NewBudget(tc.budget)}
			c := config.Default()
			n.cfg.Store(&c)
			m := &repository.Model{Name: "m"}
			m.Config.SLO = config.Duration(50 * time.Millisecond)
			req := httptest.NewRequest("POST", "/v2/models/m/infer", bytes.NewReader(tc.raw))
			if tc.coding != "" {
				req.Header.Set("Content-Encoding", tc.coding)
			}
			got, release, ierr := n.readBody(req, m, time.Now())
			if tc.reason != "" {
				require.NotNil(t, ierr)
				require.Equal(t, tc.reason, ierr.reason, ierr.msg)
				require.Zero(t, n.bodies.InUse(), "nothing stays held")
				return
			}
			require.Nil(t, ierr)
			require.Equal(t, body, got)
			require.Less(t, n.bodies.InUse(), int64(decompressorBytes), "the decompressor's buffers are given back once the body is read")
			release()
			require.Zero(t, n.bodies.InUse())
		})
	}
}
