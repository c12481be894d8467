package refset

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseIgniterMini(t *testing.T) {
	src, err := ParseIgniter(strings.NewReader(readFixture(t, "igniter-mini.jsonl")))
	require.NoError(t, err)
	require.Equal(t, SetIgniterV100, src.Meta.Name)
	require.Equal(t, []ModelName{{"aa", "aa"}, {"bb", "bb"}}, src.Models)
	require.Len(t, src.Points, 10)
	// Ascending by size, then batch; utilisation NaN where not measured.
	first := src.Points[:5]
	want := []struct {
		b, p    int
		lat, l2 float64
	}{{1, 20, 4, 5}, {2, 20, 6, 6}, {1, 80, 1, 10}, {2, 80, 2, 12}, {1, 100, 0.9, math.NaN()}}
	for i, w := range want {
		require.Equal(t, "aa", first[i].Model)
		require.Equal(t, w.b, first[i].Batch)
		require.Equal(t, w.p, first[i].Size)
		require.Equal(t, w.lat, first[i].LatencyMS)
		if math.IsNaN(w.l2) {
			require.True(t, math.IsNaN(first[i].L2))
			require.True(t, math.IsNaN(first[i].DRAM))
		} else {
			require.Equal(t, w.l2, first[i].L2)
		}
	}
	require.Equal(t, []CoLocation{
		{Model1: "aa", Model2: "bb", Batch1: 2, Batch2: 2, Size1: 20, Size2: 80, Latency1MS: 6.6, Latency2MS: 5.5, Std1MS: 0.1, Std2MS: 0.2},
		{Model1: "aa", Model2: "bb", Batch1: 2, Batch2: 1, Size1: 80, Size2: 20, Latency1MS: 2.2, Latency2MS: 9.0, Std1MS: 0.3, Std2MS: 0.4},
	}, src.Pairs)
}

func TestParseIgniterCorrupt(t *testing.T) {
	good := readFixture(t, "igniter-mini.jsonl")
	ls := lines(good)
	tests := []struct {
		name, input string
		line        string // "line N" the error must name
		want        string
	}{
		{"not JSON", withLine(good, 3, `{"aa": {"l2cache": {"1": `), "line 3", "not a JSON object"},
		{"truncated before the pairs", joinLines(ls[:7]), "line 8", "no interference latency table (truncated file?)"},
		{"truncated before the deviations", joinLines(ls[:8]), "line 9", "no interference std table"},
		{"table missing", joinLines(append(append([]string{}, ls[:6]...), ls[7:]...)), "line 9", "model bb has no dram table"},
		{"cut mid-line", good[:len(good)-40], "line 9", "not a JSON object"},
		{"empty", "", "line 1", "no model tables"},
		{"bad batch", withLine(good, 1, `{"aa": {"latency": {"x": {"20": 4.0}}}}`), "line 1", `batch "x" is not a positive integer`},
		{"batch beyond the set", withLine(good, 1, `{"aa": {"latency": {"33": {"20": 4.0}}}}`), "line 1", "batch 33 exceeds the set's largest batch 32"},
		{"bad percentage", withLine(good, 1, `{"aa": {"latency": {"1": {"120": 4.0}}}}`), "line 1", `percentage "120"`},
		{"negative latency", withLine(good, 1, `{"aa": {"latency": {"1": {"20": -4.0}}}}`), "line 1", "must be positive"},
		{"utilisation over 100", withLine(good, 3, `{"aa": {"l2cache": {"1": {"20": 120.0}}}}`), "line 3", "outside 0..100"},
		{"utilisation without latency", withLine(good, 3, `{"aa": {"l2cache": {"3": {"20": 5.0}}}}`), "line 3", "has no latency"},
		{"unknown table", withLine(good, 2, `{"aa": {"power": {"1": {"20": 5.0}}}}`), "line 2", `unknown table "power"`},
		{"uppercase model", withLine(good, 2, `{"AA": {"throughput": {"1": {"20": 5.0}}}}`), "line 2", "is not lowercase"},
		{"duplicate table", withLine(good, 2, ls[0]), "line 2", "given twice (first on line 1)"},
		{"unknown pair model", withLine(good, 8, `{"interference": {"latency": [["aa", "cc", 2, 2, 20, 6.6, 5.5], ["aa", "bb", 2, 1, 80, 2.2, 9.0]]}}`), "line 8", `unknown model "cc"`},
		{"short pair row", withLine(good, 8, `{"interference": {"latency": [["aa", "bb", 2, 2, 20, 6.6]]}}`), "line 8", "row 1: has 6 fields"},
		{"fractional batch", withLine(good, 8, `{"interference": {"latency": [["aa", "bb", 2.5, 2, 20, 6.6, 5.5], ["aa", "bb", 2, 1, 80, 2.2, 9.0]]}}`), "line 8", "want a positive integer"},
		{"whole GPU to model 1", withLine(good, 8, `{"interference": {"latency": [["aa", "bb", 2, 2, 100, 6.6, 5.5], ["aa", "bb", 2, 1, 80, 2.2, 9.0]]}}`), "line 8", "leaves nothing for model2"},
		{"deviations for another pair", withLine(good, 9, `{"interference": {"std": [["aa", "bb", 2, 2, 20, 0.1, 0.2], ["aa", "bb", 4, 1, 80, 0.3, 0.4]]}}`), "line 9", "std row 2 is for"},
		{"deviation rows missing", withLine(good, 9, `{"interference": {"std": [["aa", "bb", 2, 2, 20, 0.1, 0.2]]}}`), "line 9", "std has 1 rows, latency has 2"},
		{"negative deviation", withLine(good, 9, `{"interference": {"std": [["aa", "bb", 2, 2, 20, -0.1, 0.2], ["aa", "bb", 2, 1, 80, 0.3, 0.4]]}}`), "line 9", "must not be negative"},
		{"model paired with itself", withLine(good, 8, `{"interference": {"latency": [["aa", "aa", 2, 2, 20, 6.6, 5.5], ["aa", "bb", 2, 1, 80, 2.2, 9.0]]}}`), "line 8", "paired with itself"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseIgniter(strings.NewReader(tc.input))
			require.ErrorIs(t, err, ErrFormat)
			require.Contains(t, err.Error(), "igniter profile "+tc.line+":")
			require.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestParseIgniterNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "broken.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(withLine(readFixture(t, "igniter-mini.jsonl"), 5, "{oops")), 0o644))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	_, err = ParseIgniter(f)
	require.ErrorIs(t, err, ErrFormat)
	require.Contains(t, err.Error(), "read "+path+" line 5: ")
}

func FuzzParseIgniter(f *testing.F) {
	good := readFixture(f, "igniter-mini.jsonl")
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add(`{"interference": {"latency": [[]]}}`)
	f.Fuzz(func(t *testing.T, in string) {
		src, err := ParseIgniter(strings.NewReader(in))
		if err != nil {
			require.ErrorIs(t, err, ErrFormat)
			return
		}
		// Whatever parses must encode and decode back to the same text.
		text := encode(t, src)
		back, err := DecodeSource(strings.NewReader(text), "fuzz")
		require.NoError(t, err)
		require.Equal(t, text, encode(t, back))
	})
}
