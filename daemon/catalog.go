package daemon

import (
	"context"
	"fmt"
	"os"

	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/executor/onnxrt"
	"github.com/gpulet/gpuletd/profiler/store"
	"go.uber.org/zap"
)

// readONNXInfo reads a model file's inputs and outputs through ONNX Runtime
// for the repository scanner.
func readONNXInfo(path string) (ins, outs []repository.TensorSpec, err error) {
	info, err := onnxrt.ReadModelInfo(path)
	if err != nil {
		return nil, nil, err
	}
	conv := func(ts []onnxrt.TensorInfo) []repository.TensorSpec {
		out := make([]repository.TensorSpec, len(ts))
		for i, t := range ts {
			out[i] = repository.TensorSpec{Name: t.Name, DataType: t.DataType, Dims: t.Shape}
		}
		return out
	}
	return conv(info.Inputs), conv(info.Outputs), nil
}

// checkRepository fails with what to do when the model repository folder is
// missing, before anything else is started.
func checkRepository(root string) error {
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		return fmt.Errorf("model repository %s does not exist: create it, point model_repository (GPULETD_MODEL_REPOSITORY) at yours, or write a demo one with: gpuletd models synth %s", root, root)
	}
	return nil
}

// scanRepository reads the model repository, logs every broken entry and
// records the good ones in the store.
func scanRepository(ctx context.Context, root string, st *store.Store, log *zap.Logger) (*repository.Index, error) {
	ix, err := repository.Scan(root, readONNXInfo)
	if err != nil {
		return nil, err
	}
	for _, p := range ix.Problems {
		log.Warn("model repository entry skipped", zap.Error(p))
		if _, err := st.AppendEvent(ctx, store.Event{Kind: "model_invalid", Severity: store.SeverityWarning, Message: p.Error()}); err != nil {
			log.Warn("record event", zap.Error(err))
		}
	}
	for _, name := range ix.Names() {
		m := ix.Models[name]
		rec := store.ModelRecord{
			Name: m.Name, Version: m.Version, SHA256: m.SHA256, Path: m.File,
			SLOMS: float64(m.Config.SLO.D().Microseconds()) / 1000, MaxBatchSize: m.Config.MaxBatchSize,
			Platform: m.Platform,
		}
		if _, err := st.UpsertModel(ctx, rec); err != nil {
			return nil, fmt.Errorf("record model %s: %w", name, err)
		}
		log.Info("model found", zap.String("model", name), zap.Int("version", m.Version),
			zap.Duration("slo", m.Config.SLO.D()), zap.Int("max_batch_size", m.Config.MaxBatchSize))
	}
	return ix, nil
}
