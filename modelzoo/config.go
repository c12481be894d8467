package modelzoo

import (
	"fmt"
	"strings"
)

// ConfigYAML returns the commented config.yaml that WriteRepository writes
// for m: its SLO, largest batch and emulation profile.
func ConfigYAML(m Model, seed uint64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s: %s; weights are random (modelzoo seed %d).\n", m.Name, m.Description, seed)
	fmt.Fprintf(&b, "%-21s# latency SLO, Go duration; required\n", "slo: "+m.SLO.String())
	fmt.Fprintf(&b, "%-21s# largest batch; dimension 0 of every input is the batch dimension\n", fmt.Sprintf("max_batch_size: %d", m.MaxBatchSize))
	fmt.Fprintf(&b, "%-21s# curve name used on emulated devices (name in a reference profile set)\n", "profile: "+m.Profile)
	return b.String()
}

// ConfigPbtxt returns the config.pbtxt Triton would have for m: platform,
// max_batch_size, the input and output without the batch dimension, dynamic
// batching and one instance per GPU. It gives no SLO, as an unchanged
// Triton repository does not: gpuletd then serves it with the server's
// default_slo.
func ConfigPbtxt(m Model, seed uint64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s: %s; weights are random (modelzoo seed %d).\n", m.Name, m.Description, seed)
	fmt.Fprintf(&b, "name: %q\nplatform: \"onnxruntime_onnx\"\nmax_batch_size: %d\n", m.Name, m.MaxBatchSize)
	tensor := func(kind, name string, shape []int64) {
		dims := make([]string, 0, len(shape))
		for _, d := range shape[1:] { // dimension 0 is the batch
			dims = append(dims, fmt.Sprint(d))
		}
		fmt.Fprintf(&b, "%s [\n  {\n    name: %q\n    data_type: TYPE_FP32\n    dims: [ %s ]\n  }\n]\n", kind, name, strings.Join(dims, ", "))
	}
	tensor("input", m.InputName, m.InputShape)
	tensor("output", m.OutputName, m.OutputShape)
	b.WriteString("dynamic_batching { }\ninstance_group [ { count: 1, kind: KIND_GPU } ]\n")
	return b.String()
}
