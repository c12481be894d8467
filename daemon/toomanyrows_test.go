package daemon

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/daemon/repository"
	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/mps"
)

// A request within the model's max_batch_size but larger than its gpu-let
// runs (the largest batch measured at the gpu-let's size) is refused as a
// deadline that cannot be met, not as a client error: the executor would
// call it invalid.
func TestTooManyRows(t *testing.T) {
	m := &repository.Model{Name: "resnet", Config: repository.ModelConfig{MaxBatchSize: 32}}
	single := &repository.Model{Name: "vad", Config: repository.ModelConfig{MaxBatchSize: 0}}
	g := &gpuletRun{id: "cpu-50-1", size: 50, device: mps.Device{ID: "cpu"}, models: map[string]*pb.LoadModelRequest{
		"resnet": {Name: "resnet", MaxBatchSize: 16}, "vad": {Name: "vad"}}}
	rows := func(n int64) []tensor.Tensor { return []tensor.Tensor{{Shape: []int64{n, 3}}} }
	tests := []struct {
		name  string
		m     *repository.Model
		rows  int64
		wants string // "" passes
	}{
		{name: "within what the gpu-let runs", m: m, rows: 16},
		{name: "more than the gpu-let runs", m: m, rows: 17,
			wants: "resnet: the deadline cannot be met: a request of 17 rows, and its gpu-let cpu-50-1 runs at most 16 within the SLO (the largest batch measured at 50% of cpu)"},
		{name: "a model that does not batch", m: single, rows: 5},
		{name: "a model not loaded there", m: &repository.Model{Name: "other", Config: repository.ModelConfig{MaxBatchSize: 8}}, rows: 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ierr := tooManyRows(tt.m, g, rows(tt.rows))
			if tt.wants == "" {
				require.Nil(t, ierr)
				return
			}
			require.NotNil(t, ierr)
			require.Equal(t, http.StatusServiceUnavailable, ierr.code)
			require.Equal(t, reasonDeadline, ierr.reason)
			require.Equal(t, tt.wants, ierr.msg)
		})
	}
}
