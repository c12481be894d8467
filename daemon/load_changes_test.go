package daemon

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/executor/tensor"
)

// What a load changes of what serves, in words: the tensors its clients
// send and read are named when they change, since a request of the old
// form is refused once the load serves.
func TestLoadChangesNameWhatClientsMustChange(t *testing.T) {
	image := repository.TensorSpec{Name: "input", DataType: tensor.FP32, Dims: []int64{1, 28, 28}}
	scores := repository.TensorSpec{Name: "output", DataType: tensor.FP32, Dims: []int64{10}}
	model := func(version int, slo time.Duration, batch int, sha string, in, out []repository.TensorSpec) *repository.Model {
		m := &repository.Model{Name: "m", Family: "m", Version: version, SHA256: sha, SLOSource: "config.yaml", Inputs: in, Outputs: out}
		m.Config.SLO = config.Duration(slo)
		m.Config.MaxBatchSize = batch
		return m
	}
	served := []*repository.Model{model(1, 50*time.Millisecond, 8, "aaaa", []repository.TensorSpec{image}, []repository.TensorSpec{scores})}
	for _, tc := range []struct {
		name string
		next []*repository.Model
		want []string
	}{{
		name: "the same folder changes nothing",
		next: []*repository.Model{model(1, 50*time.Millisecond, 8, "aaaa", []repository.TensorSpec{image}, []repository.TensorSpec{scores})},
	}, {
		name: "a retrained file with other inputs and outputs",
		next: []*repository.Model{model(1, 50*time.Millisecond, 8, "bbbb",
			[]repository.TensorSpec{{Name: "input", DataType: tensor.FP16, Dims: []int64{3, 28, 28}}, {Name: "mask", DataType: tensor.Int64, Dims: []int64{28}}},
			[]repository.TensorSpec{{Name: "logits", DataType: tensor.FP32, Dims: []int64{10}}})},
		want: []string{
			`version 1: input "input": FP32 [1,28,28] → FP16 [3,28,28]`,
			`version 1: input "mask" added (INT64 [28])`,
			`version 1: output "logits" added (FP32 [10])`,
			`version 1: output "output" removed (was FP32 [10])`,
			"version 1: a new model file (sha256 bbbb, was aaaa)",
		},
	}, {
		name: "a tighter SLO, a smaller batch and a new version in place of the old",
		next: []*repository.Model{
			model(2, 20*time.Millisecond, 4, "cccc", []repository.TensorSpec{image}, []repository.TensorSpec{scores}),
		},
		want: []string{"version 2 added", "version 1 no longer served"},
	}, {
		name: "the SLO and batch of the served version",
		next: []*repository.Model{model(1, 20*time.Millisecond, 4, "aaaa", []repository.TensorSpec{image}, []repository.TensorSpec{scores})},
		want: []string{"version 1: SLO 50ms → 20ms (config.yaml)", "version 1: max_batch_size 8 → 4"},
	}, {
		name: "a queue bound of its own",
		next: func() []*repository.Model {
			m := model(1, 50*time.Millisecond, 8, "aaaa", []repository.TensorSpec{image}, []repository.TensorSpec{scores})
			m.Config.MaxQueue = 16
			return []*repository.Model{m}
		}(),
		want: []string{"version 1: max_queue none → 16"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, loadChanges(served, tc.next))
		})
	}
	require.Nil(t, loadChanges(nil, served), "a model that did not serve changes nothing of what served")
}
