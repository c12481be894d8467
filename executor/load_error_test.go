package executor

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// A failed load names its model once: an engine's errors name it already.
func TestNamedLoadError(t *testing.T) {
	tests := []struct{ err, want string }{
		{"load model lenet5 from /m/1/model.onnx: load failed: bad graph", "load model lenet5 from /m/1/model.onnx: load failed: bad graph"},
		{"load model lenet5: invalid spec: no model file", "load model lenet5: invalid spec: no model file"},
		{"warm up lenet5: out of memory", "load model lenet5: warm up lenet5: out of memory"},
		{"load model lenet5x: gone", "load model lenet5: load model lenet5x: gone"},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, namedLoadError("lenet5", errors.New(tc.err)))
	}
}
