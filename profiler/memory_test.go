package profiler

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The run keeps the executor whose peak holds the most of the model, as
// the store does: its peak less the executor's own memory, a known own
// winning over an unknown one.
func TestMoreModelMemory(t *testing.T) {
	tests := []struct {
		name                        string
		mb, own, resident, executor float64
		want                        bool
	}{
		{"the first", 70, 52, 0, 0, true},
		{"a larger peak holding less of the model", 70.5625, 53, 70.546875, 52, false},
		{"more of the model", 80, 52, 70, 52, true},
		{"a known own over an unknown", 60, 52, 70, 0, true},
		{"an unknown own counts as the one kept", 71, 0, 70, 52, true},
		{"an unknown own, less", 69, 0, 70, 52, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, moreModelMemory(tt.mb, tt.own, tt.resident, tt.executor))
		})
	}
}
