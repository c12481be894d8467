package repository

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/stretchr/testify/require"
)

// tritonLenet is a config.pbtxt as Triton has it for the fake reader's
// LeNet-like file: no SLO.
const tritonLenet = `name: "bad"
platform: "onnxruntime_onnx"
max_batch_size: 8
input [ { name: "input", data_type: TYPE_FP32, dims: [ 1, 28, 28 ] } ]
output [ { name: "output", data_type: TYPE_FP32, dims: [ 10 ] } ]
`

// pbtxtEntry is a model folder with a config.pbtxt and the given files.
func pbtxtEntry(pbtxt string, files map[string]string) entry {
	f := map[string]string{"config.pbtxt": pbtxt}
	for k, v := range files {
		f[k] = v
	}
	return entry{files: f}
}

func TestTritonConfigServesWithDefaultSLO(t *testing.T) {
	root := writeRepo(t, map[string]entry{
		"lenet": pbtxtEntry(strings.Replace(tritonLenet, `"bad"`, `"lenet"`, 1), map[string]string{"1/model.onnx": "onnx"}),
	})
	ix, err := Scan(Roots{root}, Options{Read: fakeReader, DefaultSLO: 40 * time.Millisecond})
	require.NoError(t, err)
	require.Empty(t, ix.Broken)
	m, err := ix.Get("lenet")
	require.NoError(t, err)
	require.Equal(t, 40*time.Millisecond, m.Config.SLO.D())
	require.Equal(t, SLOFromDefault, m.SLOSource)
	require.Equal(t, []string{"config.pbtxt"}, m.ConfigFiles)
	require.Equal(t, 8, m.Config.MaxBatchSize)
	require.Equal(t, PlatformONNX, m.Platform)
	require.Equal(t, []TensorSpec{{Name: "input", DataType: tensor.FP32, Dims: []int64{1, 28, 28}}}, m.Inputs)
	require.Empty(t, m.Notes)

	ix, err = Scan(Roots{root}, Options{Read: fakeReader})
	require.NoError(t, err)
	require.Empty(t, ix.Names(), "without an SLO anywhere the model is not served")
	require.ErrorContains(t, ix.Broken["lenet"], filepath.Join(root, "lenet", "config.pbtxt")+": slo: missing")
	require.ErrorContains(t, ix.Broken["lenet"], "GPULETD_DEFAULT_SLO")
}

func TestTritonConfigEveryAcceptedField(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "everything.pbtxt"))
	require.NoError(t, err)
	files := map[string]string{"1/model.onnx": "onnx", "2/model.onnx": "onnx", "3/model.onnx": "onnx"}
	root := writeRepo(t, map[string]entry{"lenet": pbtxtEntry(string(data), files)})
	_, err = Load(Roots{root}, "lenet", Options{Read: fakeReader, DefaultSLO: time.Second})
	require.ErrorIs(t, err, ErrInvalidModel, "the label file is missing")
	require.ErrorContains(t, err, filepath.Join(root, "lenet", "labels.txt")+`: the label file of output "output": no such file or directory`)

	files["labels.txt"] = "zero\r\none\n\nthree\n"
	root = writeRepo(t, map[string]entry{"lenet": pbtxtEntry(string(data), files)})
	m, err := Load(Roots{root}, "lenet", Options{Read: fakeReader, DefaultSLO: time.Second})
	require.NoError(t, err)
	require.Equal(t, map[string][]string{"output": {"zero", "one", "", "three"}}, m.Labels)
	require.Equal(t, 25*time.Millisecond, m.Config.SLO.D())
	require.Equal(t, SLOFromPbtxt, m.SLOSource)
	require.Equal(t, "alexnet", m.Profile())
	require.Equal(t, 3, m.Version)
	// Every field that took no effect says so, by name.
	notes := strings.Join(m.Notes, "\n")
	for _, field := range []string{
		"version_policy selects versions [2 3]", "input[0].format",
		"dynamic_batching (preferred_batch_size, max_queue_delay_microseconds) ignored", "instance_group ignored", "model_warmup: gpuletd warms every copy", "optimization ignored",
		`parameters["intra_op_thread_count"] ignored: Triton's onnxruntime backend reads it, and gpuletd gives each run its threads`,
		`parameters["enable_mem_arena"] ignored: Triton's onnxruntime backend reads it, and gpuletd sets ONNX Runtime's memory itself`,
		`parameters["team"] ignored: gpuletd reads the parameters slo,`,
	} {
		require.Contains(t, notes, field)
	}
	require.Len(t, m.Notes, 9, notes)
	require.Nil(t, m.Config.ProfileShapes, "the warm-up's dims of an input without dynamic ones are no profile shape")
	require.True(t, m.Config.ResponseCache, "response_cache { enable: true } is honoured")
	require.Equal(t, map[string]string{"3/model.onnx": md5Hex("onnx")}, m.Config.Checksums, "the checksum agent is run")
	require.Equal(t, 16, m.Config.MaxQueue, "default_queue_policy's max_queue_size is honoured")
	require.Contains(t, notes, "max_queue_size is kept")

	// The queue policies are read (a DELAY said to refuse nothing) and the
	// priorities kept; a bound beyond the server's largest is refused.
	policy := strings.Replace(string(data), "default_queue_policy { max_queue_size: 16 }",
		"default_queue_policy { max_queue_size: 16, timeout_action: DELAY, default_timeout_microseconds: 5000 }\n  priority_levels: 2\n  default_priority_level: 2\n  priority_queue_policy { key: 1 value { max_queue_size: 4 } }", 1)
	root = writeRepo(t, map[string]entry{"lenet": pbtxtEntry(policy, files)})
	m, err = Load(Roots{root}, "lenet", Options{Read: fakeReader, DefaultSLO: time.Second})
	require.NoError(t, err)
	notes = strings.Join(m.Notes, "\n")
	require.Contains(t, notes, "default_queue_policy.timeout_action DELAY: a request past its timeout is not refused")
	require.Equal(t, QueuePolicy{Timeout: 5 * time.Millisecond, Delay: true}, m.Config.Queue)
	require.Equal(t, map[int]QueuePolicy{1: {MaxQueue: 4}}, m.Config.LevelQueues)
	require.Contains(t, notes, "its priority_queue_policy is kept")
	require.Contains(t, notes, "its priority levels are kept")
	require.Equal(t, 2, m.Config.PriorityLevels, "priority_levels is honoured")
	require.Equal(t, 2, m.Config.DefaultPriority)
	huge := strings.Replace(string(data), "max_queue_size: 16", "max_queue_size: 2000000", 1)
	root = writeRepo(t, map[string]entry{"lenet": pbtxtEntry(huge, files)})
	_, err = Load(Roots{root}, "lenet", Options{Read: fakeReader, DefaultSLO: time.Second})
	require.ErrorContains(t, err, "max_queue_size: 2000000 is not allowed")
}

func TestTritonConfigSources(t *testing.T) {
	withSLO := strings.Replace(tritonLenet, `"bad"`, `"m"`, 1) + `parameters { key: "slo" value { string_value: "30ms" } }` + "\n"
	tests := []struct {
		name     string
		files    map[string]string
		slo      time.Duration
		from     string
		maxBatch int
		configs  []string
	}{
		{"pbtxt parameter", map[string]string{"config.pbtxt": withSLO}, 30 * time.Millisecond, SLOFromPbtxt, 8, []string{"config.pbtxt"}},
		{"yaml alone", map[string]string{"config.yaml": "slo: 20ms\nmax_batch_size: 4\n"}, 20 * time.Millisecond, SLOFromYAML, 4, []string{"config.yaml"}},
		{"yaml adds the slo", map[string]string{"config.pbtxt": strings.Replace(tritonLenet, `"bad"`, `"m"`, 1), "config.yaml": "slo: 15ms\n"}, 15 * time.Millisecond, SLOFromYAML, 8, []string{"config.pbtxt", "config.yaml"}},
		{"yaml wins where it sets", map[string]string{"config.pbtxt": withSLO, "config.yaml": "slo: 15ms\nmax_batch_size: 2\n"}, 15 * time.Millisecond, SLOFromYAML, 2, []string{"config.pbtxt", "config.yaml"}},
		{"pbtxt slo beside yaml without one", map[string]string{"config.pbtxt": withSLO, "config.yaml": "max_batch_size: 2\n"}, 30 * time.Millisecond, SLOFromPbtxt, 2, []string{"config.pbtxt", "config.yaml"}},
		{"yaml slo 0 leaves the pbtxt's", map[string]string{"config.pbtxt": withSLO, "config.yaml": "slo: 0s\n"}, 30 * time.Millisecond, SLOFromPbtxt, 8, []string{"config.pbtxt", "config.yaml"}},
		{"default beside both", map[string]string{"config.pbtxt": strings.Replace(tritonLenet, `"bad"`, `"m"`, 1), "config.yaml": "profile: alexnet\n"}, time.Second, SLOFromDefault, 8, []string{"config.pbtxt", "config.yaml"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"1/model.onnx": "onnx"}
			for k, v := range tc.files {
				files[k] = v
			}
			root := writeRepo(t, map[string]entry{"m": {files: files}})
			m, err := Load(Roots{root}, "m", Options{Read: fakeReader, DefaultSLO: time.Second})
			require.NoError(t, err)
			require.Equal(t, tc.slo, m.Config.SLO.D())
			require.Equal(t, tc.from, m.SLOSource)
			require.Equal(t, tc.maxBatch, m.Config.MaxBatchSize)
			require.Equal(t, tc.configs, m.ConfigFiles)
			if len(tc.configs) == 2 {
				require.Contains(t, strings.Join(m.Notes, "\n"), "config.yaml wins for the fields it sets")
			}
		})
	}
}

func TestTritonBadConfigsNameModelFieldAndValue(t *testing.T) {
	lenet := func(old, repl string) string { return strings.Replace(tritonLenet, old, repl, 1) }
	v1 := map[string]string{"1/model.onnx": "onnx"}
	tests := []struct {
		name  string
		e     entry
		wants []string
	}{
		{"unknown field", pbtxtEntry(tritonLenet+"max_batch: 4\n", v1), []string{"line 6:1", `unknown field "max_batch" (did you mean max_batch_size?)`}},
		{"misspelt nested field", pbtxtEntry(lenet(`dims: [ 10 ]`, `dims: [ 10 ] data_typ: TYPE_FP32`), v1), []string{"line 5", `unknown field "data_typ" (did you mean data_type?)`}},
		{"unknown nested field", pbtxtEntry(lenet(`dims: [ 10 ]`, `dims: [ 10 ] shape: [ 10 ]`), v1), []string{"line 5", `unknown field "shape"`}},
		{"not served field", pbtxtEntry(tritonLenet+"batch_input [ { } ]\n", v1), []string{"batch_input", "does not serve", "batch inputs"}},
		{"wrong type name", pbtxtEntry(lenet("TYPE_FP32", "TYPE_FLOAT"), v1), []string{"line 4", "TYPE_FLOAT is not a value"}},
		{"missing type", pbtxtEntry(lenet("data_type: TYPE_FP32, ", ""), v1), []string{"input[0].data_type: missing"}},
		{"dims contradict the file", pbtxtEntry(lenet("dims: [ 1, 28, 28 ]", "dims: [ 3, 28, 28 ]"), v1), []string{`input "input"`, "dims [3 28 28]", "model file's [1 28 28]"}},
		{"dims with the batch dimension", pbtxtEntry(lenet("dims: [ 1, 28, 28 ]", "dims: [ -1, 1, 28, 28 ]"), v1),
			[]string{"dims [-1 1 28 28]", "with max_batch_size 8 the dims leave out the batch dimension: give [1 28 28]"}},
		{"an input the file has not", pbtxtEntry(lenet(`name: "input"`, `name: "images"`), v1), []string{`names input "images"`, "(its inputs: input)"}},
		{"dtype contradicts the file", pbtxtEntry(lenet("TYPE_FP32", "TYPE_INT64"), v1), []string{`input "input"`, "INT64", "FP32"}},
		{"missing version", pbtxtEntry(tritonLenet+"version_policy: { specific: { versions: [ 1, 2 ] } }\n", v1), []string{"version_policy.specific.versions: 2", "no version folder"}},
		{"latest zero", pbtxtEntry(tritonLenet+"version_policy: { latest: { num_versions: 0 } }\n", v1), []string{"num_versions: 0"}},
		{"name differs", pbtxtEntry(lenet(`"bad"`, `"other"`), v1), []string{`name: "other"`, `folder "bad"`}},
		{"platform not served", pbtxtEntry(lenet("onnxruntime_onnx", "tensorrt_plan"), v1), []string{`platform: "tensorrt_plan"`, "onnxruntime_onnx", "TensorRT provider"}},
		{"backend not served", pbtxtEntry(lenet(`platform: "onnxruntime_onnx"`, `backend: "python"`), v1), []string{`backend: "python"`, "a Python model's code does not run in gpuletd"}},
		{"ensemble without steps", pbtxtEntry(lenet("onnxruntime_onnx", "ensemble"), v1), []string{`platform: "ensemble"`, "ensemble_scheduling"}},
		{"decoupled", pbtxtEntry(tritonLenet+"model_transaction_policy { decoupled: true }\n", v1), []string{"decoupled"}},
		{"bad slo", pbtxtEntry(tritonLenet+`parameters { key: "slo" value { string_value: "fast" } }`+"\n", v1), []string{`parameters["slo"]`, `"fast"`}},
		{"negative batch", pbtxtEntry(lenet("max_batch_size: 8", "max_batch_size: -1"), v1), []string{"max_batch_size: -1"}},
		{"file name missing", pbtxtEntry(tritonLenet+`default_model_filename: "net.onnx"`+"\n", v1), []string{"net.onnx", "default_model_filename"}},
		{"file name escapes", pbtxtEntry(tritonLenet+`default_model_filename: "../x.onnx"`+"\n", v1), []string{"default_model_filename", "../x.onnx"}},
		{"reshape holds other elements", pbtxtEntry(lenet("dims: [ 10 ]", "dims: [ 10 ] reshape: { shape: [ 5 ] }"), v1), []string{`output "output"`, "reshape [5]"}},
		{"bf16 contradicts the file", pbtxtEntry(lenet("TYPE_FP32", "TYPE_BF16"), v1), []string{`input "input"`, "BF16", "FP32"}},
		{"label file escapes", pbtxtEntry(lenet("dims: [ 10 ]", `dims: [ 10 ] label_filename: "../labels.txt"`), v1), []string{"output[0].label_filename", "not a file in the model folder"}},
		{"label file missing", pbtxtEntry(lenet("dims: [ 10 ]", `dims: [ 10 ] label_filename: "labels.txt"`), v1), []string{"labels.txt", `label file of output "output"`}},
		{"ragged", pbtxtEntry(lenet("dims: [ 1, 28, 28 ]", "dims: [ 1, 28, 28 ] allow_ragged_batch: true"), v1), []string{"input[0].allow_ragged_batch"}},
		{"not text format", pbtxtEntry("{\"name\": \"bad\"}", v1), []string{"config.pbtxt", "line 1"}},
		{"no default priority level", pbtxtEntry(tritonLenet+"dynamic_batching { priority_levels: 3 }\n", v1),
			[]string{"dynamic_batching.default_priority_level: 0 is not allowed; use 1 (the highest) to 3 (priority_levels)"}},
		{"default priority past the levels", pbtxtEntry(tritonLenet+"dynamic_batching { priority_levels: 3 default_priority_level: 4 }\n", v1),
			[]string{"default_priority_level: 4 is not allowed"}},
		{"too many priority levels", pbtxtEntry(tritonLenet+"dynamic_batching { priority_levels: 1000 default_priority_level: 1 }\n", v1),
			[]string{"dynamic_batching.priority_levels: 1000 is not allowed; use 0 (every request alike) to 100"}},
		{"a queue policy of no level", pbtxtEntry(tritonLenet+"dynamic_batching { priority_levels: 2 default_priority_level: 1 priority_queue_policy { key: 3 value { } } }\n", v1),
			[]string{"dynamic_batching.priority_queue_policy: level 3 is not one of the priority levels, 1 to 2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			good := pbtxtEntry(strings.Replace(tritonLenet, `"bad"`, `"good"`, 1), v1)
			root := writeRepo(t, map[string]entry{"bad": tc.e, "good": good})
			ix, err := Scan(Roots{root}, Options{Read: fakeReader, DefaultSLO: time.Second})
			require.NoError(t, err)
			require.Equal(t, []string{"good"}, ix.Names(), "a broken entry must not hide the others")
			require.Len(t, ix.Broken, 1)
			perr := onlyProblem(ix)
			require.ErrorIs(t, perr, ErrInvalidModel)
			require.Contains(t, perr.Error(), filepath.Join(root, "bad"), "the error names the model")
			for _, w := range tc.wants {
				require.Contains(t, perr.Error(), w)
			}
		})
	}
}

func TestTritonVersionPolicy(t *testing.T) {
	files := map[string]string{"1/model.onnx": "onnx", "2/model.onnx": "onnx", "3/model.onnx": "onnx", "10/model.onnx": "onnx"}
	tests := []struct {
		policy   string
		versions []int // served, newest first
		note     string
	}{
		{"", []int{10}, ""},
		{"version_policy: { latest: { num_versions: 1 } }", []int{10}, ""},
		{"version_policy: { latest: { num_versions: 2 } }", []int{10, 3}, "[3 10]"},
		{"version_policy: { all: { } }", []int{10, 3, 2, 1}, "[1 2 3 10]"},
		{"version_policy: { specific: { versions: [ 2 ] } }", []int{2}, ""},
		{"version_policy: { specific: { versions: [ 3, 1, 3 ] } }", []int{3, 1}, "[1 3]"},
	}
	for _, tc := range tests {
		t.Run(tc.policy, func(t *testing.T) {
			root := writeRepo(t, map[string]entry{"m": pbtxtEntry(strings.Replace(tritonLenet, `"bad"`, `"m"`, 1)+tc.policy+"\n", files)})
			ms, err := LoadVersions(Roots{root}, "m", Options{Read: fakeReader, DefaultSLO: time.Second})
			require.NoError(t, err)
			require.Len(t, ms, len(tc.versions))
			for i, m := range ms {
				require.Equal(t, tc.versions[i], m.Version)
				require.Equal(t, "m", m.Family)
				require.Equal(t, filepath.Join(root, "m", strconv.Itoa(m.Version), "model.onnx"), m.File)
				if i == 0 {
					require.Equal(t, "m", m.Name, "the newest answers under the folder's name")
				} else {
					require.Equal(t, "m:"+strconv.Itoa(m.Version), m.Name)
				}
				if tc.note == "" {
					require.Empty(t, m.Notes)
				} else {
					require.Len(t, m.Notes, 1)
					require.Contains(t, m.Notes[0], tc.note)
					require.Contains(t, m.Notes[0], "side by side")
				}
			}
			ix, err := Scan(Roots{root}, Options{Read: fakeReader, DefaultSLO: time.Second})
			require.NoError(t, err)
			require.Len(t, ix.Names(), len(tc.versions), "every version is a servable of the index")
		})
	}
}

func TestTritonModelFilename(t *testing.T) {
	pb := strings.Replace(tritonLenet, `"bad"`, `"m"`, 1)
	root := writeRepo(t, map[string]entry{"m": pbtxtEntry(pb+`default_model_filename: "net.onnx"`+"\n", map[string]string{"1/net.onnx": "onnx"})})
	m, err := Load(Roots{root}, "m", Options{Read: fakeReader, DefaultSLO: time.Second})
	require.NoError(t, err)
	require.Equal(t, filepath.Join(root, "m", "1", "net.onnx"), m.File)

	// Without platform or backend the file name's extension says it.
	pb = strings.Replace(pb, `platform: "onnxruntime_onnx"`+"\n", "", 1)
	root = writeRepo(t, map[string]entry{"m": pbtxtEntry(pb+`default_model_filename: "net.onnx"`+"\n", map[string]string{"1/net.onnx": "onnx"})})
	m, err = Load(Roots{root}, "m", Options{Read: fakeReader, DefaultSLO: time.Second})
	require.NoError(t, err)
	require.Equal(t, PlatformONNX, m.Platform)
}

func TestTritonReshapeIsKept(t *testing.T) {
	pb := `max_batch_size: 0
input [ { name: "input", data_type: TYPE_FP32, dims: [ 784 ], reshape: { shape: [ 1, 4 ] } } ]
`
	// the fake's "fixed" file takes input [1, 4]: 784 elements are not 4.
	root := writeRepo(t, map[string]entry{"m": pbtxtEntry(pb, map[string]string{"1/model.onnx": "fixed"})})
	_, err := Load(Roots{root}, "m", Options{Read: fakeReader, DefaultSLO: time.Second})
	require.ErrorContains(t, err, "dims [784] and reshape [1 4] hold different numbers of elements")

	pb = strings.Replace(pb, "dims: [ 784 ]", "dims: [ 4 ]", 1)
	root = writeRepo(t, map[string]entry{"m": pbtxtEntry(pb, map[string]string{"1/model.onnx": "fixed"})})
	m, err := Load(Roots{root}, "m", Options{Read: fakeReader, DefaultSLO: time.Second})
	require.NoError(t, err)
	require.Equal(t, []TensorSpec{{Name: "input", DataType: tensor.FP32, Dims: []int64{4}, Reshape: []int64{1, 4}}}, m.Inputs)
}

// TestOverlayCoversEveryYAMLField fails when config.yaml gains a field that
// does not win over config.pbtxt.
func TestOverlayCoversEveryYAMLField(t *testing.T) {
	full := ModelConfig{
		SLO: config.Duration(time.Second), MaxBatchSize: 3, Platform: PlatformONNX, Profile: "p", MemoryMB: 5,
		Inputs: []TensorSpec{{Name: "i"}}, Outputs: []TensorSpec{{Name: "o"}}, VariantOf: "v", Accuracy: 0.5,
		ResponseCache: true, ProfileShapes: map[string][]int64{"i": {128}}, MaxQueue: 9, PriorityLevels: 3, DefaultPriority: 2,
	}
	set := map[string]bool{}
	rt := reflect.TypeFor[ModelConfig]()
	for i := range rt.NumField() {
		tag, _, _ := strings.Cut(rt.Field(i).Tag.Get("yaml"), ",")
		if tag == "-" {
			continue
		}
		set[tag] = true
		require.False(t, reflect.ValueOf(full).Field(i).IsZero(), "the test sets %s", tag)
	}
	require.Equal(t, full, overlay(ModelConfig{}, full, set))
}

func TestLoadOverride(t *testing.T) {
	root := writeRepo(t, map[string]entry{"m": pbtxtEntry(strings.Replace(tritonLenet, `"bad"`, `"m"`, 1), map[string]string{"1/model.onnx": "onnx"})})
	tests := []struct {
		name     string
		override string
		slo      time.Duration
		from     string
		err      []string
	}{
		{"slo and batch", `{"name": "m", "platform": "onnxruntime_onnx", "max_batch_size": 4, "parameters": {"slo": {"string_value": "12ms"}}}`, 12 * time.Millisecond, SLOFromOverride, nil},
		{"typed inputs", `{"max_batch_size": 4, "input": [{"name": "input", "data_type": "TYPE_FP32", "dims": [1, 28, 28]}]}`, time.Second, SLOFromDefault, nil},
		{"unknown field", `{"max_batch": 4}`, 0, "", []string{OverrideSource + " of m", `unknown field "max_batch" (did you mean max_batch_size?)`}},
		{"not served field", `{"batch_input": [{}]}`, 0, "", []string{"batch_input", "does not serve"}},
		{"dims contradict the file", `{"max_batch_size": 4, "input": [{"name": "input", "data_type": "TYPE_FP32", "dims": [2, 28, 28]}]}`, 0, "", []string{`input "input"`, "[2 28 28]"}},
		{"not json", `max_batch_size: 4`, 0, "", []string{OverrideSource}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Load(Roots{root}, "m", Options{Read: fakeReader, DefaultSLO: time.Second, Override: []byte(tc.override)})
			if tc.err != nil {
				require.ErrorIs(t, err, ErrInvalidModel)
				for _, w := range tc.err {
					require.ErrorContains(t, err, w)
				}
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.slo, m.Config.SLO.D())
			require.Equal(t, tc.from, m.SLOSource)
			require.Equal(t, 4, m.Config.MaxBatchSize)
			require.Equal(t, []string{OverrideSource}, m.ConfigFiles)
		})
	}
}

// Priority levels take effect: a dynamic_batching block of them alone, or
// with a queue bound, is no note; default_priority_level without levels
// is.
func TestTritonPriorityLevels(t *testing.T) {
	v1 := map[string]string{"1/model.onnx": "onnx"}
	for _, tc := range []struct {
		name        string
		block       string
		levels, def int
		notes       []string
	}{
		{"levels alone", "dynamic_batching { priority_levels: 3 default_priority_level: 3 }", 3, 3, nil},
		{"levels and a bound", "dynamic_batching { priority_levels: 2 default_priority_level: 1 default_queue_policy { max_queue_size: 8 } }", 2, 1, nil},
		{"levels and a delay", "dynamic_batching { priority_levels: 2 default_priority_level: 1 max_queue_delay_microseconds: 100 }", 2, 1,
			[]string{"dynamic_batching (max_queue_delay_microseconds) ignored: gpuletd forms batches itself, as large as the SLO allows, waiting only while every queued request still meets its SLO (max_batch_size still bounds them); its priority levels are kept: at overload the lower ones give way"}},
		{"a default and no levels", "dynamic_batching { default_priority_level: 2 default_queue_policy { max_queue_size: 8 } }", 0, 0,
			[]string{"dynamic_batching.default_priority_level ignored: priority_levels sets no levels"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := writeRepo(t, map[string]entry{"lenet": pbtxtEntry(strings.Replace(tritonLenet, `"bad"`, `"lenet"`, 1)+tc.block+"\n", v1)})
			m, err := Load(Roots{root}, "lenet", Options{Read: fakeReader, DefaultSLO: time.Second})
			require.NoError(t, err)
			require.Equal(t, tc.levels, m.Config.PriorityLevels)
			require.Equal(t, tc.def, m.Config.DefaultPriority)
			require.Equal(t, tc.notes, m.Notes)
		})
	}
}
