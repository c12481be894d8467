package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestWriteAnswer(t *testing.T) {
	for _, tc := range []struct {
		name, answer string
		want         []string
	}{
		{"a few values", `{"model_name":"m","model_version":"2","outputs":[{"name":"y","datatype":"INT64","shape":[1,3],"data":[1,2,3]}]}`,
			[]string{"model  m (version 2), answered in 1.50ms", "y      INT64 [1 3]  1 2 3\n"}},
		{"more than are shown", `{"model_name":"m","model_version":"1","outputs":[{"name":"y","datatype":"FP32","shape":[2,5],"data":[0,1,2,3,4,5,6,7,8,9]}]}`,
			[]string{"y      FP32 [2 5]  0 1 2 3 4 5 6 7 … (10 values)"}},
		{"classes by row", `{"model_name":"m","model_version":"1","outputs":[{"name":"y","datatype":"BYTES","shape":[2,2],"data":["0.9:3","0.1:1","0.7:0","0.2:2"]}]}`,
			[]string{"y      BYTES [2 2]\n", "row 0: 0.9:3, 0.1:1\n", "row 1: 0.7:0, 0.2:2\n"}},
		{"binary outputs carry no values", `{"model_name":"m","model_version":"1","outputs":[{"name":"y","datatype":"FP32","shape":[1,10],"parameters":{"binary_data_size":40}}]}`,
			[]string{"y      FP32 [1 10]  (no values: sent as binary data)\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			require.NoError(t, writeAnswer(&b, []byte(tc.answer), 1500*time.Microsecond))
			for _, w := range tc.want {
				require.Contains(t, b.String(), w)
			}
		})
	}
	require.ErrorContains(t, writeAnswer(&strings.Builder{}, []byte(`not json`), 0), "decode answer")
}
