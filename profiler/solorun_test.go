package profiler

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/gpulet/gpuletd/executor/engine"
	"github.com/gpulet/gpuletd/modelzoo"
	"github.com/stretchr/testify/require"
)

func TestRunSolo(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "models")
	require.NoError(t, modelzoo.WriteRepository(dir, []string{"lenet5"}, 7))
	lenet := filepath.Join(dir, "lenet5", "1", "model.onnx")
	broken := filepath.Join(t.TempDir(), "broken.onnx")
	require.NoError(t, os.WriteFile(broken, []byte("not a model"), 0o644))
	tests := []struct {
		name    string
		run     SoloRun
		wantErr error
	}{
		{"lenet on the cpu", SoloRun{Path: lenet, Batch: 4, Runs: 2, MaxBatchSize: 32, Provider: engine.ProviderCPU}, nil},
		{"broken file", SoloRun{Path: broken, Batch: 1, Runs: 1, MaxBatchSize: 1, Provider: engine.ProviderCPU}, ErrModelLoad},
		{"no runs", SoloRun{Path: lenet, Batch: 1}, ErrBadJob},
		{"batch of a model without batch dimension", SoloRun{Path: lenet, Batch: 2, Runs: 1}, ErrBadJob},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := RunSolo(context.Background(), tt.run)
			if tt.wantErr == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tt.wantErr)
		})
	}
}
