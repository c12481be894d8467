package loadgen

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/kserve"
	"github.com/stretchr/testify/require"
)

func TestRunCountsAndPayload(t *testing.T) {
	for _, bin := range []bool{false, true} {
		t.Run("binary="+map[bool]string{false: "no", true: "yes"}[bin], func(t *testing.T) {
			srv := newFakeServer(t, &fakeServer{delay: func(int64) time.Duration { return 2 * time.Millisecond }})
			cfg := Config{URL: srv.URL, Model: "m", Rate: 400, Duration: 500 * time.Millisecond, Seed: 3, Binary: bin}
			rep, err := Run(context.Background(), cfg)
			require.NoError(t, err)

			want := due(t, 400, 3, 0, 500*time.Millisecond)
			require.Equal(t, want, rep.Scheduled, "every arrival of the window is scheduled")
			require.Equal(t, want, rep.Sent)
			require.Zero(t, rep.Dropped)
			require.Equal(t, want, rep.OK)
			require.Equal(t, want, srv.requests.Load())
			require.Empty(t, rep.Failed)
			require.Empty(t, srv.decodeErrs, "the server decodes every request")
			require.Equal(t, time.Second, rep.SLO, "the SLO comes from the model's config")
			require.Equal(t, want, rep.WithinSLO)
			require.Equal(t, 1.0, rep.Attainment)
			require.Equal(t, want, rep.Latency.Count)
			require.Equal(t, want, rep.Lag.Count)
			require.GreaterOrEqual(t, rep.Latency.P50, 2*time.Millisecond, "latency includes the server's time")
			require.LessOrEqual(t, rep.Latency.P50, rep.Latency.P90)
			require.LessOrEqual(t, rep.Latency.P90, rep.Latency.P99)
			require.LessOrEqual(t, rep.Latency.P99, rep.Latency.Max)
			require.Equal(t, float64(len(`{"model_name":"m","outputs":[]}`)), rep.ResponseBytes)
			require.InDelta(t, float64(want)/rep.Window.Seconds(), rep.SendRate, 1e-9)
			require.InDelta(t, float64(want)/rep.Window.Seconds(), rep.Goodput, 1e-9)
			require.Equal(t, []Second{{Due: want, OK: want, Within: want}}, rep.Seconds)
			worst, share := rep.WorstSecond()
			require.Equal(t, 0, worst)
			require.Equal(t, 1.0, share)

			got := srv.decoded[0]
			require.Len(t, got.Inputs, 1)
			in := got.Inputs[0]
			require.Equal(t, "x", in.Name)
			require.Equal(t, tensor.FP32, in.DataType)
			require.Equal(t, []int64{1, 1, 4, 4}, in.Shape, "batch dimension 1")
			vals, err := in.Float32s()
			require.NoError(t, err)
			require.Len(t, vals, 16)
			for _, v := range vals {
				require.True(t, v >= 0 && v < 1, "value %v", v)
			}
			require.Equal(t, bin, got.BinaryOutputs, "binary runs ask for binary outputs")
		})
	}
}

// An image model's input is megabytes as JSON: AutoBinary sends it binary,
// a small model's stays JSON, and a run without AutoBinary keeps JSON.
func TestAutoBinaryForLargeRequests(t *testing.T) {
	image := kserve.ModelMetadata{Name: "m", Versions: []string{"1"},
		Inputs:  []kserve.TensorMetadata{{Name: "x", DataType: "FP32", Shape: []int64{-1, 3, 224, 224}}},
		Outputs: []kserve.TensorMetadata{{Name: "y", DataType: "FP32", Shape: []int64{-1, 10}}}}
	tests := []struct {
		name       string
		meta       kserve.ModelMetadata
		auto, want bool
	}{
		{"an image, auto", image, true, true},
		{"an image, JSON asked for", image, false, false},
		{"a small input, auto", kserve.ModelMetadata{}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, &fakeServer{meta: tt.meta})
			rep, err := Run(context.Background(), Config{URL: srv.URL, Model: "m", Rate: 20, Duration: 200 * time.Millisecond, Seed: 1, AutoBinary: tt.auto})
			require.NoError(t, err)
			require.Equal(t, tt.want, rep.Binary)
			require.Positive(t, rep.OK)
			require.Empty(t, srv.decodeErrs)
			require.Equal(t, tt.want, srv.decoded[0].BinaryOutputs, "binary requests ask for binary outputs")
			if tt.meta.Name != "" { // the image: 602 112 bytes of FP32, more than twice that as JSON numbers
				require.Equal(t, tt.want, rep.RequestBytes < 2*4*3*224*224, "%d-byte requests", rep.RequestBytes)
			}
		})
	}
}

// TestOpenLoop: a server that takes 300 ms per answer does not slow the
// sending. A closed loop of one client could send about 3 requests in the
// second the run lasts; the open loop sends every arrival on schedule and
// many are in flight at once.
func TestOpenLoop(t *testing.T) {
	srv := newFakeServer(t, &fakeServer{delay: func(int64) time.Duration { return 300 * time.Millisecond }})
	rep, err := Run(context.Background(), Config{URL: srv.URL, Model: "m", Rate: 200, Duration: time.Second, Seed: 5, Concurrency: 1000})
	require.NoError(t, err)
	want := due(t, 200, 5, 0, time.Second)
	require.Equal(t, want, rep.Sent)
	require.Equal(t, want, rep.OK)
	require.Zero(t, rep.Dropped)
	require.Greater(t, srv.maxInFlight.Load(), int64(10), "requests overlap at the server")
	require.Greater(t, rep.MaxInFlight, int64(10))
	require.GreaterOrEqual(t, rep.Latency.P50, 300*time.Millisecond)
}

// TestClosedLoop: three senders each send the next request when the last
// is answered, so exactly three are in flight at the server, the rate is
// what the server answers (about 3 per 100 ms), and nothing is dropped.
func TestClosedLoop(t *testing.T) {
	srv := newFakeServer(t, &fakeServer{delay: func(int64) time.Duration { return 100 * time.Millisecond }})
	rep, err := Run(context.Background(), Config{URL: srv.URL, Model: "m", Closed: true, Concurrency: 3, Duration: time.Second, Warmup: 200 * time.Millisecond})
	require.NoError(t, err)
	require.Equal(t, 3, rep.Closed)
	require.Zero(t, rep.Rate)
	require.Equal(t, int64(3), srv.maxInFlight.Load())
	require.Equal(t, int64(3), rep.MaxInFlight)
	require.Zero(t, rep.Dropped)
	require.Equal(t, rep.Sent, rep.Scheduled)
	require.Equal(t, rep.Sent, rep.OK)
	// 3 senders × 1 s / 100 ms: 30 sent (warm-up requests not counted); a
	// slow machine sends fewer, never more.
	require.LessOrEqual(t, rep.Sent, int64(33))
	require.GreaterOrEqual(t, rep.Sent, int64(3), "every sender sent in the window")
	require.Greater(t, srv.requests.Load(), rep.Sent, "the warm-up's requests reached the server too")
	require.GreaterOrEqual(t, rep.Latency.P50, 100*time.Millisecond)
	var due int64
	for _, sec := range rep.Seconds {
		due += sec.Due
	}
	require.Equal(t, rep.Sent, due, "every request falls due in a second of the window")
}

// TestRequestCount: a run given a request count ends once that many fell
// due after the warm-up, open loop or closed, long before its duration,
// and its window is the time they took.
func TestRequestCount(t *testing.T) {
	for _, closed := range []bool{false, true} {
		t.Run(fmt.Sprintf("closed=%v", closed), func(t *testing.T) {
			srv := newFakeServer(t, &fakeServer{delay: func(int64) time.Duration { return time.Millisecond }})
			cfg := Config{URL: srv.URL, Model: "m", Rate: 1000, Duration: time.Hour, Seed: 3, Requests: 40}
			if closed {
				cfg.Rate, cfg.Closed, cfg.Concurrency, cfg.Warmup = 0, true, 4, 50*time.Millisecond
			}
			start := time.Now()
			rep, err := Run(context.Background(), cfg)
			require.NoError(t, err)
			require.Less(t, time.Since(start), time.Minute)
			require.Equal(t, int64(40), rep.Scheduled)
			require.Equal(t, int64(40), rep.Sent)
			require.Equal(t, int64(40), rep.OK)
			require.Less(t, rep.Window, 10*time.Second, "the time the 40 took, not the hour")
			require.Positive(t, rep.Window)
		})
	}
	_, err := Run(context.Background(), Config{URL: "http://127.0.0.1:1", Model: "m", Rate: 1, Duration: time.Second, Requests: -1})
	require.ErrorIs(t, err, ErrConfig)
}

// TestBoundDrops: with 4 requests in flight allowed and a slow server, the
// requests due while 4 are in flight are dropped by the client, and the
// schedule goes on.
func TestBoundDrops(t *testing.T) {
	srv := newFakeServer(t, &fakeServer{delay: func(int64) time.Duration { return 200 * time.Millisecond }})
	rep, err := Run(context.Background(), Config{URL: srv.URL, Model: "m", Rate: 200, Duration: 500 * time.Millisecond, Seed: 9, Concurrency: 4})
	require.NoError(t, err)
	want := due(t, 200, 9, 0, 500*time.Millisecond)
	require.Equal(t, want, rep.Scheduled)
	require.Equal(t, want, rep.Sent+rep.Dropped)
	require.Positive(t, rep.Dropped)
	require.LessOrEqual(t, srv.maxInFlight.Load(), int64(4))
	require.LessOrEqual(t, rep.MaxInFlight, int64(4))
	require.Equal(t, rep.Sent, rep.OK)
	require.Equal(t, rep.Sent, srv.requests.Load())
	require.Equal(t, []Second{{Due: want, Dropped: rep.Dropped, OK: rep.OK, Within: rep.OK}}, rep.Seconds)
}

// TestStatusesAndSLO: every third request is refused with 503, the others
// alternate between an instant answer and one later than the 1 s SLO.
func TestStatusesAndSLO(t *testing.T) {
	srv := newFakeServer(t, &fakeServer{
		code: func(i int64) int {
			if i%3 == 0 {
				return http.StatusServiceUnavailable
			}
			return http.StatusOK
		},
		delay: func(i int64) time.Duration {
			if i%3 == 2 {
				return 1200 * time.Millisecond
			}
			return 0
		},
	})
	rep, err := Run(context.Background(), Config{URL: srv.URL, Model: "m", Rate: 100, Duration: 300 * time.Millisecond, Seed: 1})
	require.NoError(t, err)
	n := rep.Sent
	require.Equal(t, due(t, 100, 1, 0, 300*time.Millisecond), n)
	refused, fast := (n+2)/3, (n+1)/3 // i%3 == 0 and i%3 == 1 for i < n
	require.Equal(t, map[string]int64{"503": refused}, rep.Failed)
	require.Equal(t, "503: no", rep.FirstError, "the status and the server's message")
	require.Equal(t, n-refused, rep.OK)
	require.Equal(t, fast, rep.WithinSLO)
	require.InDelta(t, float64(fast)/float64(n), rep.Attainment, 1e-12)
	require.Equal(t, []Second{{Due: n, OK: n - refused, Within: fast, Failed: refused}}, rep.Seconds)
	require.GreaterOrEqual(t, rep.Latency.Max, 1200*time.Millisecond)
}

// Failures from gpuletd count by status and the reason its header gives, so
// a report tells requests dropped from a queue's head from those refused on
// arrival.
func TestFailuresCountByReason(t *testing.T) {
	srv := newFakeServer(t, &fakeServer{
		code: func(int64) int { return http.StatusServiceUnavailable },
		reason: func(i int64) string {
			if i%2 == 0 {
				return "deadline"
			}
			return "dropped"
		},
	})
	rep, err := Run(context.Background(), Config{URL: srv.URL, Model: "m", Rate: 100, Duration: 300 * time.Millisecond, Seed: 1})
	require.NoError(t, err)
	n := rep.Sent
	require.Equal(t, map[string]int64{"503 deadline": (n + 1) / 2, "503 dropped": n / 2}, rep.Failed)
}

// TestSeconds: each request counts in the second of the window it fell due
// in, and the worst second is the first with the smallest share within the
// SLO.
func TestSeconds(t *testing.T) {
	srv := newFakeServer(t, &fakeServer{code: func(int64) int { return http.StatusServiceUnavailable }})
	rep, err := Run(context.Background(), Config{URL: srv.URL, Model: "m", Rate: 200, Duration: 1500 * time.Millisecond, Seed: 6})
	require.NoError(t, err)
	first, second := due(t, 200, 6, 0, time.Second), due(t, 200, 6, time.Second, 1500*time.Millisecond)
	require.Equal(t, []Second{{Due: first, Failed: first}, {Due: second, Failed: second}}, rep.Seconds)
	worst, share := rep.WorstSecond()
	require.Equal(t, 0, worst)
	require.Zero(t, share)
	worst, _ = (&Report{}).WorstSecond()
	require.Equal(t, -1, worst, "no request fell due")
}

func TestWarmupIsNotRecorded(t *testing.T) {
	srv := newFakeServer(t, &fakeServer{})
	rep, err := Run(context.Background(), Config{URL: srv.URL, Model: "m", Rate: 300, Warmup: 200 * time.Millisecond, Duration: 200 * time.Millisecond, Seed: 2})
	require.NoError(t, err)
	require.Equal(t, due(t, 300, 2, 200*time.Millisecond, 400*time.Millisecond), rep.Sent)
	require.Equal(t, due(t, 300, 2, 0, 400*time.Millisecond), srv.requests.Load(), "the warm-up is sent")
	require.Equal(t, rep.Sent, rep.OK)
}

func TestCancelStopsSendingAndInFlight(t *testing.T) {
	srv := newFakeServer(t, &fakeServer{delay: func(int64) time.Duration { return time.Minute }})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	rep, err := Run(ctx, Config{URL: srv.URL, Model: "m", Rate: 100, Duration: time.Minute, Seed: 1, Timeout: 2 * time.Minute, Drain: time.Minute})
	require.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, rep)
	require.Positive(t, rep.Sent)
	require.Less(t, rep.Window, 10*time.Second, "sending stopped")
	require.Equal(t, map[string]int64{FailCancelled: rep.Sent}, rep.Failed)
}

func TestDrainCancelsLateAnswers(t *testing.T) {
	srv := newFakeServer(t, &fakeServer{delay: func(int64) time.Duration { return time.Minute }})
	rep, err := Run(context.Background(), Config{URL: srv.URL, Model: "m", Rate: 100, Duration: 200 * time.Millisecond, Seed: 1, Drain: 100 * time.Millisecond})
	require.NoError(t, err)
	require.Positive(t, rep.Sent)
	require.Equal(t, map[string]int64{FailCancelled: rep.Sent}, rep.Failed)
	require.Zero(t, rep.OK)
}

func TestRequestTimeoutIsAnError(t *testing.T) {
	srv := newFakeServer(t, &fakeServer{delay: func(int64) time.Duration { return time.Minute }})
	rep, err := Run(context.Background(), Config{URL: srv.URL, Model: "m", Rate: 100, Duration: 100 * time.Millisecond, Seed: 4, Timeout: 50 * time.Millisecond})
	require.NoError(t, err)
	require.Positive(t, rep.Sent)
	require.Equal(t, map[string]int64{FailError: rep.Sent}, rep.Failed)
	require.Contains(t, rep.FirstError, "deadline")
}

// TestUnansweredRequestsSayWhy: a request that got no answer (the server
// went away during the run) is reported by its cause, without the method
// and URL that would push the cause past the report's line.
func TestUnansweredRequestsSayWhy(t *testing.T) {
	gone := newFakeServer(t, &fakeServer{})
	gone.Close()
	p := &Payload{Body: []byte(`{"inputs":[]}`), JSONLen: -1}
	rep, err := Run(context.Background(), Config{URL: gone.URL, Model: "m", Rate: 100, Duration: 100 * time.Millisecond, Payload: p, SLO: time.Millisecond})
	require.NoError(t, err)
	require.Positive(t, rep.Sent)
	require.Equal(t, map[string]int64{FailError: rep.Sent}, rep.Failed)
	require.Regexp(t, `^dial tcp 127\.0\.0\.1:\d+: connect: connection refused$`, rep.FirstError)
}

func TestGivenPayloadAndSLOSkipMetadata(t *testing.T) {
	srv := newFakeServer(t, &fakeServer{})
	srv.meta.Inputs = nil // metadata would not do
	p := &Payload{Body: []byte(`{"inputs":[{"name":"x","shape":[1],"datatype":"INT32","data":[7]}]}`), JSONLen: -1}
	rep, err := Run(context.Background(), Config{URL: srv.URL + "/", Model: "m", Rate: 100, Duration: 200 * time.Millisecond, Payload: p, SLO: time.Millisecond})
	require.NoError(t, err)
	require.Equal(t, rep.Sent, rep.OK)
	require.Equal(t, len(p.Body), rep.RequestBytes)
	require.Equal(t, time.Millisecond, rep.SLO)
	require.Equal(t, int32(7), int32(srv.decoded[0].Inputs[0].Data[0]))
}

func TestRunErrors(t *testing.T) {
	srv := newFakeServer(t, &fakeServer{})
	ctx := context.Background()
	_, err := Run(ctx, Config{URL: srv.URL, Model: "nope", Rate: 10, Duration: time.Second})
	require.ErrorIs(t, err, ErrNotFound)

	closed := newFakeServer(t, &fakeServer{})
	closed.Close()
	_, err = Run(ctx, Config{URL: closed.URL, Model: "m", Rate: 10, Duration: time.Second})
	require.ErrorIs(t, err, ErrUnreachable)

	for _, cfg := range []Config{
		{URL: "127.0.0.1:8700", Model: "m", Rate: 1, Duration: time.Second},
		{URL: srv.URL, Rate: 1, Duration: time.Second},
		{URL: srv.URL, Model: "m", Rate: 0, Duration: time.Second},
		{URL: srv.URL, Model: "m", Rate: 1},
		{URL: srv.URL, Model: "m", Rate: 1, Duration: time.Second, Concurrency: -1},
		{URL: srv.URL, Model: "m", Rate: 1, Duration: time.Second, Concurrency: MaxConcurrency + 1},
		{URL: srv.URL, Model: "m", Rate: 2 * MaxRate, Duration: time.Second},
		{URL: srv.URL, Model: "m", Rate: 1, Duration: time.Second, Compression: "br"},
	} {
		_, err := Run(ctx, cfg)
		require.ErrorIs(t, err, ErrConfig, "%+v", cfg)
	}
}

func TestNewPayload(t *testing.T) {
	m := &Model{MaxBatchSize: 4, Metadata: kserve.ModelMetadata{Inputs: []kserve.TensorMetadata{
		{Name: "a", DataType: "FP32", Shape: []int64{-1, 2, -1}},
		{Name: "b", DataType: "INT64", Shape: []int64{-1, 3}},
		{Name: "c", DataType: "BOOL", Shape: []int64{-1, 2}},
		{Name: "d", DataType: "FP16", Shape: []int64{-1, 5}},
		{Name: "e", DataType: "UINT8", Shape: []int64{-1, 2}},
		{Name: "f", DataType: "FP64", Shape: []int64{-1, 1}},
		{Name: "g", DataType: "BF16", Shape: []int64{-1, 4}},
		{Name: "h", DataType: "BYTES", Shape: []int64{-1, 3}},
	}}}
	for _, bin := range []bool{false, true} {
		p, err := NewPayload(m, bin, 1)
		require.NoError(t, err)
		req, err := kserve.DecodeRequest(p.Body, p.JSONLen)
		require.NoError(t, err, "the server's decoder reads it")
		require.Equal(t, bin, p.JSONLen >= 0)
		shapes := map[string][]int64{}
		for _, in := range req.Inputs {
			shapes[in.Name] = in.Shape
		}
		require.Equal(t, map[string][]int64{"a": {1, 2, 1}, "b": {1, 3}, "c": {1, 2}, "d": {1, 5}, "e": {1, 2}, "f": {1, 1}, "g": {1, 4}, "h": {1, 3}}, shapes)
		for _, in := range req.Inputs {
			switch in.Name {
			case "b": // INT64 in [0, 10)
				for i := 0; i < len(in.Data); i += 8 {
					require.Less(t, in.Data[i], byte(10))
					require.Zero(t, in.Data[i+1])
				}
			case "c":
				for _, b := range in.Data {
					require.LessOrEqual(t, b, byte(1))
				}
			case "d": // FP16 in [0, 1): exponent below 15
				for i := 0; i < len(in.Data); i += 2 {
					require.Less(t, in.Data[i+1]>>2, byte(15))
				}
			case "g": // BF16 in [0, 1): exponent below 127, sign clear
				for i := 0; i < len(in.Data); i += 2 {
					require.Less(t, binary.LittleEndian.Uint16(in.Data[i:])>>7, uint16(127))
				}
			case "h": // BYTES: three words of lowercase letters
				words, err := tensor.BytesElements(in.Data)
				require.NoError(t, err)
				require.Len(t, words, 3)
				for _, w := range words {
					require.Regexp(t, `^[a-z]{16}$`, string(w))
				}
			}
		}
		again, err := NewPayload(m, bin, 1)
		require.NoError(t, err)
		require.Equal(t, p.Body, again.Body, "seeded")
		other, err := NewPayload(m, bin, 2)
		require.NoError(t, err)
		require.NotEqual(t, p.Body, other.Body)
	}
	// Without batching the declared shape is kept.
	p, err := NewPayload(&Model{Metadata: kserve.ModelMetadata{Inputs: []kserve.TensorMetadata{{Name: "a", DataType: "INT32", Shape: []int64{3}}}}}, false, 1)
	require.NoError(t, err)
	var head kserve.InferRequestJSON
	require.NoError(t, json.Unmarshal(p.Body, &head))
	require.Equal(t, []int64{3}, head.Inputs[0].Shape)

	for _, in := range []kserve.TensorMetadata{
		{Name: "s", DataType: "COMPLEX", Shape: []int64{1}},
		{Name: "s", DataType: "FP32", Shape: []int64{1 << 20, 1 << 20}},
	} {
		_, err := NewPayload(&Model{Metadata: kserve.ModelMetadata{Inputs: []kserve.TensorMetadata{in}}}, false, 1)
		require.ErrorIs(t, err, ErrPayload)
	}
	_, err = NewPayload(&Model{}, false, 1)
	require.ErrorIs(t, err, ErrPayload)
}

func TestOpenArrivals(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.csv")
	require.NoError(t, os.WriteFile(path, []byte("TIMESTAMP\n2023-11-16 18:17:03.0\n2023-11-16 18:17:04.0\n2023-11-16 18:17:06.0\n"), 0o644))
	a, err := OpenArrivals("trace:"+path, 10, 1)
	require.NoError(t, err)
	require.Equal(t, 10.0, a.Rate())
	// Two gaps over 3 s: 2/3 arrival/s; the first, 1 s, played at 10/s.
	require.InDelta(t, (time.Second / 15).Seconds(), a.Next().Seconds(), 1e-9)
	a, err = OpenArrivals("trace:"+path+"@3", 10, 1)
	require.NoError(t, err)
	require.InDelta(t, 2.0, a.Rate(), 1e-12, "3 × 2/3")
	_, err = OpenArrivals("trace:"+filepath.Join(t.TempDir(), "missing.csv"), 10, 1)
	require.ErrorIs(t, err, os.ErrNotExist)
	a, err = OpenArrivals("gamma:cv=2", 10, 1)
	require.NoError(t, err)
	require.Equal(t, 10.0, a.Rate())
	_, err = OpenArrivals("zipf", 10, 1)
	require.Error(t, err)
}

func TestReportJSON(t *testing.T) {
	rep := Report{Model: "m", Window: 2 * time.Second, SLO: 5 * time.Millisecond, Failed: map[string]int64{"503": 2},
		Latency: Percentiles{Count: 3, P50: 1500 * time.Microsecond, Max: 2 * time.Millisecond}}
	b, err := json.Marshal(rep)
	require.NoError(t, err)
	var got map[string]any
	require.NoError(t, json.Unmarshal(b, &got))
	require.Equal(t, 2.0, got["window_s"])
	require.Equal(t, 5.0, got["slo_ms"])
	require.Equal(t, map[string]any{"503": 2.0}, got["failed"])
	lat := got["latency"].(map[string]any)
	require.Equal(t, 1500.0, lat["p50_us"])
	require.Equal(t, 2000.0, lat["max_us"])
	require.Equal(t, 3.0, lat["count"])
	for _, k := range []string{"scheduled", "sent", "dropped_by_client", "ok", "within_slo", "goodput", "slo_attainment", "send_rate", "schedule_lag", "target_rate"} {
		require.Contains(t, got, k)
	}
}

func TestGetJSONErrors(t *testing.T) {
	srv := newFakeServer(t, &fakeServer{})
	var v map[string]any
	err := GetJSON(context.Background(), http.DefaultClient, srv.URL+"/v2/models/m/nothing", &v)
	var he *HTTPError
	require.ErrorAs(t, err, &he)
	require.Equal(t, http.StatusNotFound, he.Code)
	require.ErrorIs(t, err, ErrNotFound)
	require.Contains(t, err.Error(), "404 Not Found")
	http.DefaultClient.CloseIdleConnections()
}

func TestOKStatusMeasuresAnErrorPath(t *testing.T) {
	srv := newFakeServer(t, &fakeServer{code: func(i int64) int {
		if i%2 == 0 {
			return http.StatusBadRequest
		}
		return http.StatusOK
	}})
	rep, err := Run(context.Background(), Config{URL: srv.URL, Model: "m", Rate: 200, Duration: 200 * time.Millisecond, Seed: 6, OKStatus: http.StatusBadRequest})
	require.NoError(t, err)
	require.Equal(t, (rep.Sent+1)/2, rep.OK, "the 400s are the answers")
	require.Equal(t, map[string]int64{"200": rep.Sent / 2}, rep.Failed)
	require.Equal(t, rep.OK, rep.Latency.Count)
	_, err = Run(context.Background(), Config{URL: srv.URL, Model: "m", Rate: 1, Duration: time.Second, OKStatus: 1000})
	require.ErrorIs(t, err, ErrConfig)
}

// With Inputs, a run sends that many distinct requests in turn; without,
// the same one every time. Inputs refuses what it cannot vary.
func TestDistinctInputs(t *testing.T) {
	for _, tc := range []struct {
		inputs, distinct int
	}{{0, 1}, {1, 1}, {3, 3}} {
		srv := newFakeServer(t, &fakeServer{})
		rep, err := Run(context.Background(), Config{URL: srv.URL, Model: "m", Closed: true, Concurrency: 1, Duration: 200 * time.Millisecond, Inputs: tc.inputs})
		require.NoError(t, err)
		require.Greater(t, rep.Sent, int64(2*tc.distinct))
		srv.mu.Lock()
		var seen []string
		for i, r := range srv.decoded {
			data := string(r.Inputs[0].Data)
			if i < tc.distinct {
				require.NotContains(t, seen, data, "request %d repeats an earlier one", i)
				seen = append(seen, data)
				continue
			}
			require.Equal(t, seen[i%tc.distinct], data, "request %d is not the request %d turns back", i, i%tc.distinct)
		}
		srv.mu.Unlock()
	}
	_, err := Run(context.Background(), Config{URL: "http://127.0.0.1:1", Model: "m", Rate: 1, Duration: time.Second, Inputs: 2, Payload: &Payload{}})
	require.ErrorIs(t, err, ErrConfig)
	_, err = Run(context.Background(), Config{URL: "http://127.0.0.1:1", Model: "m", Rate: 1, Duration: time.Second, Inputs: 2, SharedMemory: true})
	require.ErrorContains(t, err, "one region holds one request")
	_, err = Run(context.Background(), Config{URL: "http://127.0.0.1:1", Model: "m", Rate: 1, Duration: time.Second, Inputs: MaxInputs + 1})
	require.ErrorIs(t, err, ErrConfig)
}

// Compressed runs send every body in the coding, ask for answers in it, and
// read those answers decompressed.
func TestCompressedRequests(t *testing.T) {
	for _, coding := range []string{CodingGzip, CodingDeflate} {
		for _, bin := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s binary=%v", coding, bin), func(t *testing.T) {
				srv := newFakeServer(t, &fakeServer{})
				rep, err := Run(context.Background(), Config{URL: srv.URL, Model: "m", Rate: 200, Duration: 300 * time.Millisecond,
					Seed: 5, Binary: bin, Compression: coding, Inputs: 3})
				require.NoError(t, err)
				want := due(t, 200, 5, 0, 300*time.Millisecond)
				require.Equal(t, want, rep.OK)
				require.Empty(t, srv.decodeErrs, "the server decodes every request once decompressed")
				require.Equal(t, map[string]int{coding: int(want)}, srv.codings)
				require.Equal(t, float64(len(`{"model_name":"m","outputs":[]}`)), rep.ResponseBytes, "answers are counted decompressed")
				require.Equal(t, bin, srv.decoded[0].BinaryOutputs)
			})
		}
	}
}

// A server that gives no SLO (Triton) needs one from the caller.
func TestServerWithoutAnSLO(t *testing.T) {
	srv := newFakeServer(t, &fakeServer{tritonConfig: true, delay: func(int64) time.Duration { return 3 * time.Millisecond }})
	_, err := Run(context.Background(), Config{URL: srv.URL, Model: "m", Rate: 100, Duration: 200 * time.Millisecond})
	require.ErrorIs(t, err, ErrConfig)
	require.ErrorContains(t, err, "the server gives no SLO for m")
	require.Zero(t, srv.requests.Load(), "nothing sent")

	rep, err := Run(context.Background(), Config{URL: srv.URL, Model: "m", Rate: 100, Duration: 300 * time.Millisecond, SLO: 2 * time.Millisecond})
	require.NoError(t, err)
	require.Equal(t, 2*time.Millisecond, rep.SLO)
	require.Positive(t, rep.OK)
	require.Zero(t, rep.WithinSLO, "3 ms answers are outside a 2 ms SLO")
}

// Every request of a run given a priority carries it, whatever else its
// parameters and body hold.
func TestPriorityIsSent(t *testing.T) {
	for _, bin := range []bool{false, true} {
		t.Run(fmt.Sprintf("binary=%v", bin), func(t *testing.T) {
			srv := newFakeServer(t, &fakeServer{})
			rep, err := Run(context.Background(), Config{URL: srv.URL, Model: "m", Rate: 200, Duration: 200 * time.Millisecond,
				Seed: 5, Binary: bin, Compression: CodingGzip, Inputs: 3, Priority: 2})
			require.NoError(t, err)
			require.Equal(t, uint64(2), rep.Priority, "the report says the level")
			require.Empty(t, srv.decodeErrs)
			require.Len(t, srv.decoded, 4)
			for _, r := range srv.decoded {
				require.Equal(t, int64(2), r.Priority)
				require.Equal(t, bin, r.BinaryOutputs)
				require.Len(t, r.Inputs, 1)
			}
		})
	}
}

// A batch size sends that many rows in every request, as perf_analyzer's
// -b, and the report says so.
func TestBatchSizeSendsRows(t *testing.T) {
	for _, bin := range []bool{false, true} {
		t.Run(fmt.Sprintf("binary=%v", bin), func(t *testing.T) {
			srv := newFakeServer(t, &fakeServer{})
			rep, err := Run(context.Background(), Config{URL: srv.URL, Model: "m", Rate: 200, Duration: 200 * time.Millisecond,
				Seed: 5, Binary: bin, Inputs: 2, BatchSize: 4})
			require.NoError(t, err)
			require.Equal(t, 4, rep.BatchSize)
			require.Empty(t, srv.decodeErrs)
			require.NotEmpty(t, srv.decoded)
			for _, r := range srv.decoded {
				require.Len(t, r.Inputs, 1)
				require.Equal(t, []int64{4, 1, 4, 4}, r.Inputs[0].Shape)
				vals, err := r.Inputs[0].Float32s()
				require.NoError(t, err)
				require.Len(t, vals, 64)
			}
		})
	}
	rep, err := Run(context.Background(), Config{URL: newFakeServer(t, &fakeServer{}).URL, Model: "m", Rate: 100, Duration: 100 * time.Millisecond, BatchSize: 1})
	require.NoError(t, err)
	require.Zero(t, rep.BatchSize, "one row is no batch size to report")
}

// A batch size a model cannot take is refused before any request, saying
// why.
func TestBatchSizeErrors(t *testing.T) {
	ctx := context.Background()
	srv := newFakeServer(t, &fakeServer{})
	stateful := newFakeServer(t, &fakeServer{stateful: true})
	for _, tt := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"negative", Config{URL: srv.URL, BatchSize: -1}, "batch size -1"},
		{"past max_batch_size", Config{URL: srv.URL, BatchSize: 9}, "m takes at most 8 rows a request (its max_batch_size), and the batch size is 9"},
		{"a given request", Config{URL: srv.URL, BatchSize: 2, Payload: &Payload{Body: []byte("{}"), JSONLen: -1}}, "a given request has the rows it has"},
		{"stateful", Config{URL: stateful.URL, BatchSize: 2}, "m is a stateful model (sequence_batching): each of a sequence's requests is one row"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Model, tt.cfg.Rate, tt.cfg.Duration = "m", 10, time.Second
			_, err := Run(ctx, tt.cfg)
			require.ErrorIs(t, err, ErrConfig)
			require.ErrorContains(t, err, tt.want)
		})
	}
	m := &Model{}
	require.ErrorContains(t, m.SetRows("lenet", 2), "lenet does not batch (max_batch_size 0)")
	require.NoError(t, m.SetRows("lenet", 1))
	require.Zero(t, m.Rows)
}
