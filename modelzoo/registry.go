package modelzoo

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// ErrUnknownModel is returned for a name that is not in the zoo.
var ErrUnknownModel = errors.New("unknown model")

// Model describes one zoo model: its tensors and how the demo repository
// serves it. Every model has one FP32 input named InputName and one FP32
// output named OutputName; dimension 0 of both is the batch (-1 in the
// shapes, dim_param "N" in the file).
type Model struct {
	// Name is the registry key, e.g. "resnet18".
	Name string
	// Description is one line saying what the network is.
	Description string
	// InputName and InputShape describe the input tensor.
	InputName  string
	InputShape []int64
	// OutputName and OutputShape describe the output tensor.
	OutputName  string
	OutputShape []int64
	// Profile is the curve used for this model on emulated devices: a model
	// name in a reference profile set.
	Profile string
	// CPULatencyBatch8 is the model's measured ONNX Runtime CPU latency at
	// batch 8 on the development machine, which SLO derives from.
	CPULatencyBatch8 time.Duration
	// SLO is the latency objective written to the demo repository, derived
	// from CPULatencyBatch8 by the rule described at zoo.
	SLO time.Duration
	// MaxBatchSize is the largest batch written to the demo repository.
	MaxBatchSize int

	build func(g *graph, input string) string
}

// Each SLO below follows one rule (sloFromBatch8): twice the model's ONNX
// Runtime CPU latency at batch 8 using both cores of the development
// machine (2 vCPU, 2 intra-op threads), rounded up to a 1-2-5 step and
// never below 5 ms. The latencies are the best of several runs of
// BenchmarkInferCPU on a machine shared with concurrent builds (best of N is
// the closest to solo); the runs, medians and command are in
// docs/BENCHMARKS.md, "Model zoo".
var zoo = []Model{
	{
		Name:             "lenet5",
		Description:      "LeNet-5 CNN on 28x28 grey images, [N,1,28,28] -> [N,10]",
		InputName:        "input",
		InputShape:       []int64{-1, 1, 28, 28},
		OutputName:       "output",
		OutputShape:      []int64{-1, 10},
		Profile:          "alexnet",
		CPULatencyBatch8: 291 * time.Microsecond,
		MaxBatchSize:     32,
		build:            lenet5,
	},
	{
		Name:             "resnet18",
		Description:      "ResNet-18-style CNN with batch normalization, [N,3,224,224] -> [N,1000]",
		InputName:        "input",
		InputShape:       []int64{-1, 3, 224, 224},
		OutputName:       "output",
		OutputShape:      []int64{-1, 1000},
		Profile:          "resnet50",
		CPULatencyBatch8: 131 * time.Millisecond,
		MaxBatchSize:     32,
		build:            resnet18,
	},
	{
		Name:             "vgg",
		Description:      "VGG-16-style CNN at half width with a 256-wide classifier, [N,3,224,224] -> [N,1000]",
		InputName:        "input",
		InputShape:       []int64{-1, 3, 224, 224},
		OutputName:       "output",
		OutputShape:      []int64{-1, 1000},
		Profile:          "vgg19",
		CPULatencyBatch8: 330 * time.Millisecond,
		MaxBatchSize:     32,
		build:            vgg,
	},
	{
		Name:             "mlp",
		Description:      "MLP 784-512-256-10 with Relu, [N,784] -> [N,10]",
		InputName:        "input",
		InputShape:       []int64{-1, 784},
		OutputName:       "output",
		OutputShape:      []int64{-1, 10},
		Profile:          "alexnet",
		CPULatencyBatch8: 154 * time.Microsecond,
		MaxBatchSize:     32,
		build:            mlp,
	},
}

// Names returns the names of every zoo model, sorted.
func Names() []string {
	names := make([]string, len(zoo))
	for i, m := range zoo {
		names[i] = m.Name
	}
	slices.Sort(names)
	return names
}

// DemoModels returns the models WriteRepository writes when given none.
func DemoModels() []string {
	return []string{"lenet5", "resnet18", "vgg", "mlp"}
}

// Lookup returns the description of the named model.
func Lookup(name string) (Model, error) {
	for _, m := range zoo {
		if m.Name == name {
			m.SLO = sloFromBatch8(m.CPULatencyBatch8)
			m.InputShape = slices.Clone(m.InputShape)
			m.OutputShape = slices.Clone(m.OutputShape)
			return m, nil
		}
	}
	return Model{}, fmt.Errorf("look up model %q: %w (have %v)", name, ErrUnknownModel, Names())
}
