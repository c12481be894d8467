package daemon

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/kserve"
)

// An answer up to answerInMemory goes whole with its length, compressed
// when the client accepts it; a larger one goes as it is formatted,
// without a length, compressed the same way, and reads back the same.
func TestWriteAnswer(t *testing.T) {
	answer := func(n int, binary bool) *kserve.Response { return floatAnswer(t, n, binary) }
	for _, tc := range []struct {
		name     string
		values   int
		binary   bool
		accept   string
		coding   string
		hasLen   bool
		jsonHead bool
	}{
		{"small JSON", 1000, false, "", "", true, false},
		{"small JSON, gzip", 1000, false, "gzip", "gzip", true, false},
		{"large JSON", 1 << 20, false, "", "", false, false},
		{"large JSON, gzip", 1 << 20, false, "gzip", "gzip", false, false},
		{"large JSON, deflate", 1 << 20, false, "deflate", "deflate", false, false},
		{"large JSON, a coding gpuletd does not write", 1 << 20, false, "br", "", false, false},
		{"large binary", 1 << 20, true, "", "", false, true},
		{"large binary, gzip", 1 << 20, true, "gzip", "gzip", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := answer(tc.values, tc.binary)
			want := resp.Bytes()
			rec := httptest.NewRecorder()
			whole := formatAnswer(resp)
			require.Equal(t, tc.hasLen, whole != nil, "formatted before it is sent when it goes whole")
			require.True(t, writeAnswer(rec, tc.accept, resp, whole, 0))
			require.Equal(t, 200, rec.Code)
			require.Equal(t, tc.coding, rec.Header().Get("Content-Encoding"))
			if tc.hasLen {
				require.Equal(t, strconv.Itoa(rec.Body.Len()), rec.Header().Get("Content-Length"))
			} else {
				require.Empty(t, rec.Header().Get("Content-Length"), "a large answer goes as it is formatted")
			}
			if tc.jsonHead {
				require.Equal(t, strconv.FormatInt(resp.JSONLen, 10), rec.Header().Get(kserve.HeaderContentLength))
				require.Equal(t, "application/octet-stream", rec.Header().Get("Content-Type"))
			} else {
				require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
			}
			got := decodedAnswer(t, tc.coding, rec.Body.Bytes())
			require.Equal(t, want, got)
			if !tc.jsonHead {
				require.True(t, json.Valid(got))
			}
			if tc.coding != "" {
				require.Less(t, rec.Body.Len(), len(want))
			}
		})
	}
}

// floatAnswer is an answer of n float32 values, as JSON or binary data.
func floatAnswer(t *testing.T, n int, binary bool) *kserve.Response {
	t.Helper()
	vals := make([]float32, n)
	for i := range vals {
		vals[i] = float32(i%1000) / 8
	}
	x, err := tensor.FromFloat32s("y", []int64{1, int64(n)}, vals)
	require.NoError(t, err)
	r, err := kserve.EncodeResponse(kserve.InferResponseJSON{ModelName: "m"}, []kserve.Output{{Tensor: x, Binary: binary}})
	require.NoError(t, err)
	return r
}

// A client that takes none of its answer's bytes for the stall time loses
// it and its connection, so that it holds no answer in memory for as long
// as it keeps the connection; one that reads gets the whole answer, and
// its connection serves its next request.
func TestAnAnswerNotReadIsDropped(t *testing.T) {
	const stall = 300 * time.Millisecond
	resp := floatAnswer(t, 4<<20, false) // some 40 MB of text
	want := resp.Bytes()
	sent := make(chan bool, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent <- writeAnswer(w, "", resp, formatAnswer(resp), stall)
	}))
	defer srv.Close()
	request := func(c net.Conn) {
		_, err := fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		require.NoError(t, err)
	}

	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.(*net.TCPConn).SetReadBuffer(4096))
	request(c)
	select {
	case whole := <-sent:
		require.False(t, whole, "a client that reads nothing does not get the answer")
	case <-time.After(20 * stall):
		t.Fatal("the answer waited on a client that reads nothing")
	}

	c2, err := net.Dial("tcp", srv.Listener.Addr().String())
	require.NoError(t, err)
	defer c2.Close()
	br := bufio.NewReader(c2)
	for range 2 {
		request(c2)
		res, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		got, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		require.NoError(t, res.Body.Close())
		require.Equal(t, len(want), len(got))
		require.True(t, bytes.Equal(want, got))
		require.True(t, <-sent)
	}
}

// Over HTTP/2 (REST over TLS negotiates it) a client that takes none of an
// answer's bytes for the stall time loses that answer, its stream reset,
// while the connection it shares with the client's other requests goes on
// serving them whole.
func TestAnAnswerNotReadOverHTTP2IsDropped(t *testing.T) {
	// Long enough for a reading client over TLS on a busy machine.
	const stall = time.Second
	resp := floatAnswer(t, 4<<20, false) // some 40 MB of text, past a stream's 4 MiB window
	want := resp.Bytes()
	sent := make(chan bool, 4)
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent <- writeAnswer(w, "", resp, formatAnswer(resp), stall)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	client := srv.Client()
	client.Transport.(*http.Transport).DisableCompression = true

	unread, err := client.Get(srv.URL)
	require.NoError(t, err)
	defer unread.Body.Close()
	require.Equal(t, "HTTP/2.0", unread.Proto)
	select {
	case whole := <-sent:
		require.False(t, whole, "a client that reads nothing does not get the answer")
	case <-time.After(10 * stall):
		t.Fatal("the answer waited on a client that reads nothing")
	}
	_, err = io.ReadAll(unread.Body)
	require.Error(t, err, "the stream was reset")

	for range 2 {
		res, err := client.Get(srv.URL)
		require.NoError(t, err)
		got, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		require.NoError(t, res.Body.Close())
		require.Equal(t, "HTTP/2.0", res.Proto)
		require.Equal(t, len(want), len(got))
		require.True(t, bytes.Equal(want, got))
		require.True(t, <-sent)
	}
	require.Equal(t, int32(1), conns.Load(), "one connection served all three")
}
