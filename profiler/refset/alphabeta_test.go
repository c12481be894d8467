package refset

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// symphonyCSV rebuilds the published Symphony A100 table (same columns as
// ../shared/data/papers/symphony-a100.csv) from the embedded set, so the
// parser is tested without the shared folder.
func symphonyCSV(t testing.TB) string {
	t.Helper()
	b, err := Embedded(SetSymphonyA100)
	require.NoError(t, err)
	src, err := DecodeSource(bytes.NewReader(b), "embedded")
	require.NoError(t, err)
	var sb strings.Builder
	sb.WriteString("# Source: Symphony, Table 4\nmodel,alpha_ms,beta_ms,slo_ms\n")
	for i, l := range src.Linear {
		fmt.Fprintf(&sb, "%s,%s,%s,%s\n", src.Models[i].Label, num(l.AlphaMS), num(l.BetaMS), num(l.SLOMS))
	}
	return sb.String()
}

func TestParseAlphaBeta(t *testing.T) {
	in := symphonyCSV(t)
	src, err := ParseAlphaBeta(strings.NewReader(in), SetSymphonyA100)
	require.NoError(t, err)
	require.Len(t, src.Models, 37)
	require.Equal(t, ModelName{Name: "densenet121", Label: "DenseNet121"}, src.Models[0])
	require.Equal(t, LinearModel{Model: "densenet121", AlphaMS: 0.054, BetaMS: 10.546, SLOMS: 21}, src.Linear[0])
	require.Equal(t, PartitionNone, src.Meta.Partitioning)
	require.Equal(t, []int{100}, src.Meta.Sizes)

	// Converting the rebuilt table gives the embedded file back.
	var out bytes.Buffer
	require.NoError(t, ConvertAlphaBeta(strings.NewReader(in), &out, SetSymphonyA100))
	emb, err := Embedded(SetSymphonyA100)
	require.NoError(t, err)
	require.Equal(t, string(emb), out.String())
}

func TestParseAlphaBetaCorrupt(t *testing.T) {
	good := symphonyCSV(t)
	ls := lines(good)
	tests := []struct {
		name, input, line, want string
	}{
		{"truncated table", joinLines(ls[:len(ls)-1]), "line 38", "36 models, the published table has 37"},
		{"cut mid-row", good[:len(good)-8], "line 39", "wrong number of fields"},
		{"bad alpha", withLine(good, 5, "ResNet50V2,fast,5.560,20"), "line 5", `alpha_ms "fast" is not a positive number`},
		{"negative beta", withLine(good, 5, "ResNet50V2,0.135,-5.560,20"), "line 5", `beta_ms "-5.560" is not a number ≥ 0`},
		{"zero SLO", withLine(good, 5, "ResNet50V2,0.135,5.560,0"), "line 5", `slo_ms "0" is not a positive number`},
		{"duplicate model", withLine(good, 5, strings.Replace(ls[2], "DenseNet121", "densenet121", 1)), "line 5", `model "densenet121" given twice`},
		{"no alpha column", withLine(good, 2, "model,a,beta_ms,slo_ms"), "line 2", `header has no "alpha_ms" column`},
		{"empty", "", "line 1", "no header (empty file)"},
		{"stray quote", withLine(good, 6, `Efficient"NetB0,0.115,4.326,20`), "line 6", "bare \" in non-quoted-field"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseAlphaBeta(strings.NewReader(tc.input), SetSymphonyA100)
			require.ErrorIs(t, err, ErrFormat)
			require.Contains(t, err.Error(), tc.line+":")
			require.Contains(t, err.Error(), tc.want)
		})
	}
	for _, set := range []string{"nope", SetIgniterV100} {
		_, err := ParseAlphaBeta(strings.NewReader(good), set)
		require.ErrorIs(t, err, ErrUnknownSet)
	}
}

func FuzzParseAlphaBeta(f *testing.F) {
	good := symphonyCSV(f)
	f.Add(good)
	f.Add(good[:200])
	f.Add("model,alpha_ms,beta_ms\nx,1,2\n")
	f.Fuzz(func(t *testing.T, in string) {
		src, err := ParseAlphaBeta(strings.NewReader(in), SetSymphonyA100)
		if err != nil {
			require.ErrorIs(t, err, ErrFormat)
			return
		}
		require.Len(t, src.Linear, 37)
		_, err = Build(src)
		require.NoError(t, err)
	})
}
