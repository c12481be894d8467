package arrival

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// azureHead is testdata/azure-code-head.csv: the first 200 requests of the
// Azure LLM code trace (shared/data/azure/llm-inference-trace-code.csv).
func azureHead(t testing.TB) *Trace {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "azure-code-head.csv"))
	require.NoError(t, err)
	defer f.Close()
	tr, err := ReadTrace(f)
	require.NoError(t, err)
	return tr
}

func TestReadAzureTrace(t *testing.T) {
	tr := azureHead(t)
	require.Equal(t, 200, tr.Len())
	// 18:17:03.9799600 to 18:20:23.0695450.
	require.Equal(t, 199*time.Second+89_585_000*time.Nanosecond, tr.Span())
	require.InDelta(t, 199/199.089585, tr.Rate(), 1e-9)
	// The first gaps, 03.9799600 → 04.0319600 → 04.0781490.
	require.Equal(t, 52*time.Millisecond, tr.gaps[0])
	require.Equal(t, 46_189_000*time.Nanosecond, tr.gaps[1])
	require.Greater(t, tr.CV(), 1.0, "the trace is burstier than Poisson")
}

func TestReplayRescalesAndLoops(t *testing.T) {
	tr := azureHead(t)
	for _, rate := range []float64{0.5, 50, 4000} {
		r, err := tr.Replay(rate)
		require.NoError(t, err)
		require.Equal(t, rate, r.Rate())
		// The first gap is the recorded 52 ms at the trace's own rate.
		require.InDelta(t, 0.052*tr.Rate()/rate, r.Next().Seconds(), 1e-9)
		// Three whole loops (each: 199 recorded gaps and the wrap gap) keep the
		// mean rate.
		r, err = tr.Replay(rate)
		require.NoError(t, err)
		var sum time.Duration
		for range 3 * 200 {
			sum += r.Next()
		}
		require.Equal(t, 3, r.Loops())
		require.InEpsilon(t, rate, 600/sum.Seconds(), 1e-6)
	}
}

func TestTraceSpecs(t *testing.T) {
	tr := azureHead(t)
	s, err := Parse("trace:testdata/azure-code-head.csv")
	require.NoError(t, err)
	a, err := s.New(100, 1, tr)
	require.NoError(t, err)
	require.Equal(t, 100.0, a.Rate(), "rescaled to the target rate")
	require.InDelta(t, 0.052*tr.Rate()/100, a.Next().Seconds(), 1e-9)

	s, err = Parse("trace:testdata/azure-code-head.csv@2")
	require.NoError(t, err)
	a, err = s.New(100, 1, tr)
	require.NoError(t, err)
	require.InDelta(t, 2*tr.Rate(), a.Rate(), 1e-12, "the scale, not the target rate")
	require.Equal(t, 26*time.Millisecond, a.Next())
}

func TestReadTraceForms(t *testing.T) {
	for _, tc := range []struct {
		name, csv string
		len       int
		span      time.Duration
	}{
		{"seconds without header", "0.5\n1.5\n3\n", 3, 2500 * time.Millisecond},
		{"out of order", "3\n0.5\n1.5\n", 3, 2500 * time.Millisecond},
		{"named column", "id,time\n1,10\n2,12\n", 2, 2 * time.Second},
		{"rfc3339", "timestamp\n2024-01-02T03:04:05Z\n2024-01-02T03:04:06.5Z\n", 2, 1500 * time.Millisecond},
		{"other header", "when\n1\n2\n", 2, time.Second},
		{"blank lines and repeats", "TIMESTAMP\n\n2023-11-16 18:17:03.1\n2023-11-16 18:17:03.1\n2023-11-16 18:17:04.1\n", 3, time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := ReadTrace(strings.NewReader(tc.csv))
			require.NoError(t, err)
			require.Equal(t, tc.len, tr.Len())
			require.Equal(t, tc.span, tr.Span())
		})
	}
	tr, err := NewTrace([]time.Time{time.Unix(5, 0), time.Unix(1, 0), time.Unix(2, 0)})
	require.NoError(t, err)
	require.Equal(t, []time.Duration{time.Second, 3 * time.Second}, tr.gaps)
}

func TestReadTraceRejects(t *testing.T) {
	for _, tc := range []struct {
		name, csv, says string
	}{
		{"empty", "", "0 arrivals"},
		{"header only", "TIMESTAMP,ContextTokens\n", "0 arrivals"},
		{"one arrival", "TIMESTAMP\n2023-11-16 18:17:03.9799600\n", "1 arrivals"},
		{"same time", "1\n1\n1\n", "same time"},
		{"bad timestamp", "TIMESTAMP\n2023-11-16 18:17:03\nyesterday\n", `line 3: timestamp "yesterday"`},
		{"missing field", "a,TIMESTAMP\n1,2\n3\n", "line 3 has 1 fields"},
		{"bad quoting", "TIMESTAMP\n\"1\n", "bad trace"},
		{"out of range", "1\n1e300\n", "out of range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadTrace(strings.NewReader(tc.csv))
			require.ErrorIs(t, err, ErrBadTrace)
			require.Contains(t, err.Error(), tc.says)
		})
	}
	_, err := azureHead(t).Replay(0)
	require.ErrorIs(t, err, ErrBadRate)
}

// TestFullAzureTraces reads the real traces the testdata copy comes from.
func TestFullAzureTraces(t *testing.T) {
	for name, n := range map[string]int{"code": 8819, "conv": 19366} {
		path := filepath.Join("..", "..", "..", "shared", "data", "azure", "llm-inference-trace-"+name+".csv")
		f, err := os.Open(path)
		if os.IsNotExist(err) {
			t.Skipf("%s is not here", path)
		}
		require.NoError(t, err)
		tr, err := ReadTrace(f)
		f.Close()
		require.NoError(t, err)
		require.Equal(t, n, tr.Len(), name)
		require.InDelta(t, time.Hour.Seconds(), tr.Span().Seconds(), 600, "about an hour")
		t.Logf("%s: %d arrivals over %s, %.2f/s, gap CV %.2f", name, tr.Len(), tr.Span(), tr.Rate(), tr.CV())
	}
}

func TestTracePeak(t *testing.T) {
	// Arrivals at 0, 1, 2 and then 2.5, 2.75, 3 s: the second half of the
	// span holds 4 of 6.
	var ts []time.Time
	for _, s := range []float64{0, 1, 2, 2.5, 2.75, 3} {
		ts = append(ts, time.Unix(0, 0).Add(time.Duration(s*float64(time.Second))))
	}
	tr, err := NewTrace(ts)
	require.NoError(t, err)
	require.InDelta(t, 4.0*2/6, tr.PeakFactor(2), 1e-12)
	require.Equal(t, []int{2, 4}, tr.Bins(2))
	require.InDelta(t, 1, tr.PeakFactor(1), 1e-12)
	require.InDelta(t, 1, tr.PeakFactor(0), 1e-12)
	require.Nil(t, tr.Bins(0))
}
