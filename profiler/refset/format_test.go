package refset

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func miniSource(t testing.TB) *Source {
	t.Helper()
	src, err := ParseIgniter(strings.NewReader(readFixture(t, "igniter-mini.jsonl")))
	require.NoError(t, err)
	return src
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	src := miniSource(t)
	src.Linear = []LinearModel{{Model: "aa", AlphaMS: 0.1, BetaMS: 1.0 / 3}, {Model: "bb", AlphaMS: 2, BetaMS: 0, SLOMS: 40}}
	text := encode(t, src)
	require.True(t, strings.HasPrefix(text, formatMagic+"\n"))
	require.Contains(t, text, "origin igniter/v100-mps-profile.jsonl\n")
	require.Contains(t, text, "point aa 1 100 0.9 - -\n")
	require.Contains(t, text, "linear aa 0.1 0.3333333333333333 -\n")
	require.Contains(t, text, "pair aa bb 2 1 80 20 2.2 9 0.3 0.4\n")
	require.True(t, strings.HasSuffix(text, "end 10 2 2\n"))

	back, err := DecodeSource(strings.NewReader(text), "mini.ref")
	require.NoError(t, err)
	require.Equal(t, src.Meta, back.Meta)
	require.Equal(t, src.Models, back.Models)
	require.Equal(t, src.Linear, back.Linear)
	require.Equal(t, src.Pairs, back.Pairs)
	require.Len(t, back.Points, len(src.Points))
	for i, p := range back.Points {
		q := src.Points[i]
		require.Equal(t, q.LatencyMS, p.LatencyMS, "latency must read back bit for bit")
		require.Equal(t, math.IsNaN(q.L2), math.IsNaN(p.L2))
	}
	require.Equal(t, text, encode(t, back))
}

func TestDecodeCorrupt(t *testing.T) {
	good := encode(t, miniSource(t))
	ls := lines(good)
	find := func(prefix string) int {
		for i, l := range ls {
			if strings.HasPrefix(l, prefix) {
				return i + 1
			}
		}
		t.Fatalf("no line starts with %q", prefix)
		return 0
	}
	pt := find("point aa 2 20")
	pair := find("pair ")
	tests := []struct {
		name, input string
		line        int
		want        string
	}{
		{"empty", "", 1, "empty file"},
		{"wrong magic", withLine(good, 1, "gpuletd-refset 9"), 1, "first line is"},
		{"truncated", joinLines(ls[:len(ls)-1]), len(ls), "no end line (truncated file)"},
		{"cut mid-record", good[:strings.Index(good, "point aa 2 20")+12], pt, "point record has 3 fields, want 6"},
		{"count mismatch", withLine(good, len(ls), "end 11 0 2"), len(ls), "end line counts 11 point records, the file has 10"},
		{"data after end", good + "point aa 1 20 4 5 7\n", len(ls) + 1, "data after the end line"},
		{"header out of order", withLine(good, find("gpu "), "origin x"), find("gpu "), `header "origin" out of order, want "gpu"`},
		{"header missing", joinLines(append(append([]string{}, ls[:find("max_batch")-1]...), ls[find("max_batch"):]...)), find("max_batch"), `before the header is complete (missing max_batch)`},
		{"bad partitioning", withLine(good, find("partitioning"), "partitioning cores"), find("partitioning"), `partitioning "cores"`},
		{"sizes not ascending", withLine(good, find("sizes"), "sizes 20 80 40"), find("sizes"), "sizes must ascend"},
		{"unknown record", withLine(good, pt, "spot aa 2 20 6 6 8"), pt, `unknown record "spot"`},
		{"undeclared model", withLine(good, pt, "point cc 2 20 6 6 8"), pt, `model "cc" is not declared`},
		{"bad latency", withLine(good, pt, "point aa 2 20 six 6 8"), pt, `latency_ms "six" is not a finite number`},
		{"zero latency", withLine(good, pt, "point aa 2 20 0 6 8"), pt, "latency_ms 0 must be positive"},
		{"infinite latency", withLine(good, pt, "point aa 2 20 +Inf 6 8"), pt, "is not a finite number"},
		{"utilisation over 100", withLine(good, pt, "point aa 2 20 6 600 8"), pt, "l2_pct 600 is outside 0..100"},
		{"batch beyond max", withLine(good, pt, "point aa 64 20 6 6 8"), pt, `batch "64" is not an integer in 1..32`},
		{"short record", withLine(good, pt, "point aa 2 20 6"), pt, "point record has 4 fields, want 6"},
		{"oversubscribed pair", withLine(good, pair, "pair aa bb 2 2 60 80 6.6 5.5 0.1 0.2"), pair, "sizes 60 + 80 exceed the GPU"},
		{"negative deviation", withLine(good, pair, "pair aa bb 2 2 20 80 6.6 5.5 -0.1 0.2"), pair, "std1_ms -0.1 out of range"},
		{"duplicate model", withLine(good, find("model bb"), "model aa aa"), find("model bb"), "model aa declared twice"},
		{"model without label", withLine(good, find("model bb"), "model bb"), find("model bb"), "model bb has no label"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeSource(strings.NewReader(tc.input), "data/x.ref")
			require.ErrorIs(t, err, ErrFormat)
			require.Contains(t, err.Error(), "read data/x.ref line "+strconv.Itoa(tc.line)+": ")
			require.Contains(t, err.Error(), tc.want)
		})
	}
}

func FuzzDecodeSource(f *testing.F) {
	good := encode(f, miniSource(f))
	f.Add(good)
	f.Add(good[:len(good)/3])
	emb, err := Embedded(SetShepherdV100)
	require.NoError(f, err)
	f.Add(string(emb))
	f.Fuzz(func(t *testing.T, in string) {
		src, err := DecodeSource(strings.NewReader(in), "fuzz.ref")
		if err != nil {
			require.ErrorIs(t, err, ErrFormat)
			return
		}
		text := encode(t, src)
		back, err := DecodeSource(strings.NewReader(text), "fuzz.ref")
		require.NoError(t, err)
		require.Equal(t, text, encode(t, back))
		// Build may reject what decodes (a repeated point), but never panics.
		_, _ = Build(src)
	})
}
