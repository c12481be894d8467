package loadgen

import (
	"bytes"
	"encoding/csv"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func csvMix() *MixReport {
	a := &Report{Model: "lenet5", Rate: 300, SLO: 5 * time.Millisecond, Scheduled: 3000, Sent: 2990, Dropped: 10, OK: 2985,
		Failed: map[string]int64{"503 deadline": 3, "503 dropped": 2}, WithinSLO: 2980, Attainment: 2980.0 / 2990, Goodput: 298, SendRate: 299,
		Latency: Percentiles{Count: 2985, P50: 900 * time.Microsecond, P90: 1500 * time.Microsecond, P95: 2 * time.Millisecond,
			P99: 3500 * time.Microsecond, Max: 9 * time.Millisecond, Mean: 1100 * time.Microsecond}}
	b := &Report{Model: "resnet18", BatchSize: 4, Rate: 10, SLO: 500 * time.Millisecond, Scheduled: 100, Sent: 100, Failed: map[string]int64{"503 dropped": 100}}
	return &MixReport{Models: []*Report{a, b}, Total: sum([]*Report{a, b})}
}

func readCSV(t *testing.T, b []byte) [][]string {
	t.Helper()
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	require.NoError(t, err)
	return rows
}

// A row per model and, for a mix, their total, under one header; a
// sweep's rows say their step and whether it held.
func TestCSVWriter(t *testing.T) {
	var buf bytes.Buffer
	w := NewCSVWriter(&buf)
	require.False(t, w.Wrote())
	require.NoError(t, w.Step(SweepStep{At: 310, Holds: true, Run: csvMix()}))
	require.NoError(t, w.Step(SweepStep{At: 465.5, Run: csvMix()}))
	require.True(t, w.Wrote())
	rows := readCSV(t, buf.Bytes())
	require.Len(t, rows, 1+3+3, "one header, then two models and their total per step")
	require.Equal(t, csvColumns, rows[0])
	col := func(row []string, name string) string {
		for i, c := range csvColumns {
			if c == name {
				return row[i]
			}
		}
		t.Fatalf("no column %s", name)
		return ""
	}
	lenet, resnet, total := rows[1], rows[2], rows[3]
	for name, want := range map[string]string{
		"step": "310", "holds": "yes", "model": "lenet5", "target_rate": "300", "closed_loop": "", "slo_ms": "5",
		"scheduled": "3000", "sent": "2990", "dropped_by_client": "10", "ok": "2985", "failed": "5", "within_slo": "2980",
		"goodput": "298", "send_rate": "299", "p50_us": "900", "p90_us": "1500", "p95_us": "2000", "p99_us": "3500",
		"max_us": "9000", "mean_us": "1100", "failures": "503 deadline=3; 503 dropped=2", "batch_size": "1",
	} {
		require.Equal(t, want, col(lenet, name), name)
	}
	require.Equal(t, "", col(resnet, "p50_us"), "no answer: no latency")
	require.Equal(t, "4", col(resnet, "batch_size"))
	require.Equal(t, "", col(total, "batch_size"), "a mix's models may send other rows")
	require.Equal(t, "100", col(resnet, "failed"))
	require.Equal(t, "total", col(total, "model"))
	require.Equal(t, "310", col(total, "target_rate"))
	require.Equal(t, "105", col(total, "failed"))
	require.Equal(t, "503 deadline=3; 503 dropped=102", col(total, "failures"))
	require.Equal(t, "", col(total, "p99_us"), "latencies are per model")
	require.Equal(t, "0.9967", col(lenet, "slo_attainment"), "shares to four decimals")
	require.Equal(t, []string{"465.5", "no"}, rows[4][:2])

	// A single run, one model: no step, no total, a closed loop's concurrency.
	buf.Reset()
	w = NewCSVWriter(&buf)
	one := &Report{Model: "mlp", Closed: 4, Sent: 10, OK: 10}
	require.NoError(t, w.Run(&MixReport{Models: []*Report{one}, Total: sum([]*Report{one})}))
	rows = readCSV(t, buf.Bytes())
	require.Len(t, rows, 2)
	require.Equal(t, []string{"", "", "mlp"}, rows[1][:3])
	require.Equal(t, "4", col(rows[1], "closed_loop"))
	require.Equal(t, "", col(rows[1], "failures"))
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

func TestCSVWriterSaysWhyItFailed(t *testing.T) {
	err := NewCSVWriter(failingWriter{}).Run(csvMix())
	require.ErrorContains(t, err, "write csv: no space left on device")
}
