package repository

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/stretchr/testify/require"
)

// fakeReader answers a LeNet-like signature for any file whose content is
// "onnx" and fails for anything else, standing in for onnxruntime where the
// test is about the repository's own rules.
func fakeReader(path string) ([]TensorSpec, []TensorSpec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	switch string(b) {
	case "onnx":
		return []TensorSpec{{Name: "input", DataType: tensor.FP32, Dims: []int64{-1, 1, 28, 28}}},
			[]TensorSpec{{Name: "output", DataType: tensor.FP32, Dims: []int64{-1, 10}}}, nil
	case "text": // a text encoder: token ids and a mask of any length
		return []TensorSpec{{Name: "ids", DataType: tensor.Int64, Dims: []int64{-1, -1}}, {Name: "mask", DataType: tensor.Int64, Dims: []int64{-1, -1}}},
			[]TensorSpec{{Name: "pooled", DataType: tensor.FP32, Dims: []int64{-1, 8}}}, nil
	case "stateful": // a running sum: its input, a start control, a correlation ID and a state
		return []TensorSpec{{Name: "INPUT", DataType: tensor.FP32, Dims: []int64{-1, 4}}, {Name: "START", DataType: tensor.FP32, Dims: []int64{-1, 1}},
				{Name: "CORRID", DataType: tensor.Uint64, Dims: []int64{-1, 1}}, {Name: "ACC", DataType: tensor.FP32, Dims: []int64{-1, 4}}},
			[]TensorSpec{{Name: "OUTPUT", DataType: tensor.FP32, Dims: []int64{-1, 4}}, {Name: "ACC_NEXT", DataType: tensor.FP32, Dims: []int64{-1, 4}}}, nil
	case "bigstate": // the running sum's tensors with a state of 512 KiB
		return []TensorSpec{{Name: "INPUT", DataType: tensor.FP32, Dims: []int64{-1, 4}}, {Name: "START", DataType: tensor.FP32, Dims: []int64{-1, 1}},
				{Name: "CORRID", DataType: tensor.Uint64, Dims: []int64{-1, 1}}, {Name: "ACC", DataType: tensor.FP32, Dims: []int64{-1, 131072}}},
			[]TensorSpec{{Name: "OUTPUT", DataType: tensor.FP32, Dims: []int64{-1, 4}}, {Name: "ACC_NEXT", DataType: tensor.FP32, Dims: []int64{-1, 131072}}}, nil
	case "fixed":
		return []TensorSpec{{Name: "input", DataType: tensor.FP32, Dims: []int64{1, 4}}},
			[]TensorSpec{{Name: "output", DataType: tensor.FP32, Dims: []int64{1, 2}}}, nil
	}
	return nil, nil, errors.New("load model: protobuf parsing failed")
}

type entry struct {
	config string // "" writes no config.yaml
	files  map[string]string
}

func writeRepo(t *testing.T, entries map[string]entry) string {
	t.Helper()
	root := t.TempDir()
	for name, e := range entries {
		dir := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(dir, 0o755))
		if e.config != "" {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(e.config), 0o644))
		}
		for rel, body := range e.files {
			p := filepath.Join(dir, rel)
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		}
	}
	return root
}

const goodConfig = "slo: 20ms\nmax_batch_size: 8\n"

func TestScanGoodModel(t *testing.T) {
	root := writeRepo(t, map[string]entry{
		"lenet": {config: goodConfig + "profile: alexnet\n", files: map[string]string{"1/model.onnx": "old", "3/model.onnx": "onnx", "notes/readme": "x"}},
	})
	ix, err := Scan(Roots{root}, Options{Read: fakeReader})
	require.NoError(t, err)
	require.Empty(t, ix.Broken)
	m, err := ix.Get("lenet")
	require.NoError(t, err)
	require.Equal(t, 3, m.Version)
	require.Equal(t, PlatformONNX, m.Platform)
	require.Equal(t, "alexnet", m.Profile())
	// sha256("onnx")
	require.Equal(t, "87e93f89f2be0db364e8be052f79f389e6c2da239831922e24513288af522a43", m.SHA256)
	require.Equal(t, int64(4), m.Bytes)
	require.Equal(t, []TensorSpec{{Name: "input", DataType: tensor.FP32, Dims: []int64{1, 28, 28}}}, m.Inputs)
	require.Equal(t, []TensorSpec{{Name: "output", DataType: tensor.FP32, Dims: []int64{10}}}, m.Outputs)
	_, err = ix.Get("nope")
	require.ErrorIs(t, err, ErrNotFound)
}

func TestHashChangesWithFile(t *testing.T) {
	root := writeRepo(t, map[string]entry{"a": {config: goodConfig, files: map[string]string{"1/model.onnx": "onnx"}}})
	m1, err := Load(Roots{root}, "a", Options{Read: fakeReader})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, "a", "1", "model.onnx"), []byte("fixed"), 0o644))
	_, err = Load(Roots{root}, "a", Options{Read: fakeReader})
	require.Error(t, err, "a fixed batch dimension of 1 cannot serve max_batch_size 8")
	require.NoError(t, os.WriteFile(filepath.Join(root, "a", "config.yaml"), []byte("slo: 20ms\nmax_batch_size: 0\n"), 0o644))
	m2, err := Load(Roots{root}, "a", Options{Read: fakeReader})
	require.NoError(t, err)
	require.NotEqual(t, m1.SHA256, m2.SHA256)
	require.Equal(t, []int64{1, 4}, m2.Inputs[0].Dims, "without batching the file's dims are the request's")
}

// A folder with a model file and no configuration serves under the
// server's default_slo, as Triton auto-completes a configuration: the file
// says whether the model batches.
func TestAFolderWithoutConfiguration(t *testing.T) {
	root := writeRepo(t, map[string]entry{
		"dynamic": {files: map[string]string{"1/model.onnx": "onnx"}},
		"fixed":   {files: map[string]string{"1/model.onnx": "fixed"}},
	})
	ix, err := Scan(Roots{root}, Options{Read: fakeReader, DefaultSLO: 40 * time.Millisecond})
	require.NoError(t, err)
	require.Empty(t, ix.Broken)
	m, err := ix.Get("dynamic")
	require.NoError(t, err)
	require.Equal(t, AutoMaxBatchSize, m.Config.MaxBatchSize)
	require.Equal(t, 40*time.Millisecond, m.Config.SLO.D())
	require.Equal(t, SLOFromDefault, m.SLOSource)
	require.Empty(t, m.ConfigFiles)
	require.Equal(t, []int64{1, 28, 28}, m.Inputs[0].Dims)
	require.Len(t, m.Notes, 2)
	require.Contains(t, m.Notes[0], "no config.pbtxt or config.yaml: served with default_slo")
	require.Equal(t, "max_batch_size 4, from the model file: every input and output has a dynamic first dimension, so default_max_batch_size (as Triton auto-completes it); set max_batch_size to choose", m.Notes[1])
	m, err = ix.Get("fixed")
	require.NoError(t, err)
	require.Zero(t, m.Config.MaxBatchSize, "a fixed first dimension: no batching")
	require.Equal(t, []int64{1, 4}, m.Inputs[0].Dims)
	require.Contains(t, m.Notes[1], `max_batch_size 0, from the model file: "input" has no dynamic first dimension`)

	ix, err = Scan(Roots{root}, Options{Read: fakeReader})
	require.NoError(t, err)
	require.Len(t, ix.Broken, 2)
	require.ErrorContains(t, ix.Broken["dynamic"], "or a server-wide default_slo (GPULETD_DEFAULT_SLO) for folders with neither")
}

// A config.pbtxt that leaves max_batch_size and the tensors out gets the
// batch size Triton's auto-completion gives; one that sets it, even to 0,
// or lists the tensors keeps its own.
func TestTritonMaxBatchSizeLeftOut(t *testing.T) {
	cases := []struct {
		name, pbtxt string
		want        int
	}{
		{"left out", `backend: "onnxruntime"`, AutoMaxBatchSize},
		{"in a comment only", "# max_batch_size: 8\nplatform: \"onnxruntime_onnx\"", AutoMaxBatchSize},
		{"a parameter's key only", `platform: "onnxruntime_onnx" parameters { key: "max_batch_size" value { string_value: "8" } }`, AutoMaxBatchSize},
		{"set across lines", "platform: \"onnxruntime_onnx\" max_batch_size\n  :\n 2", 2},
		{"set", `platform: "onnxruntime_onnx" max_batch_size: 8`, 8},
		{"set to 0", "platform: \"onnxruntime_onnx\"\nmax_batch_size : 0", 0},
		{"inputs and outputs listed", `platform: "onnxruntime_onnx" input [ { name: "input" data_type: TYPE_FP32 dims: [ -1, 1, 28, 28 ] } ] output [ { name: "output" data_type: TYPE_FP32 dims: [ -1, 10 ] } ]`, 0},
		{"inputs listed alone", `platform: "onnxruntime_onnx" input [ { name: "input" data_type: TYPE_FP32 dims: [ 1, 28, 28 ] } ]`, AutoMaxBatchSize},
		{"outputs listed alone", `platform: "onnxruntime_onnx" output [ { name: "output" data_type: TYPE_FP32 dims: [ 10 ] } ]`, AutoMaxBatchSize},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := writeRepo(t, map[string]entry{"m": {files: map[string]string{"1/model.onnx": "onnx", "config.pbtxt": tc.pbtxt}}})
			m, err := Load(Roots{root}, "m", Options{Read: fakeReader, DefaultSLO: time.Second})
			require.NoError(t, err)
			require.Equal(t, tc.want, m.Config.MaxBatchSize)
		})
	}
	// The same for a load request's configuration (JSON).
	root := writeRepo(t, map[string]entry{"m": {files: map[string]string{"1/model.onnx": "onnx"}}})
	for override, want := range map[string]int{`{"backend": "onnxruntime"}`: AutoMaxBatchSize, `{"max_batch_size": 0}`: 0, `{"maxBatchSize": 2}`: 2} {
		m, err := Load(Roots{root}, "m", Options{Read: fakeReader, DefaultSLO: time.Second, Override: []byte(override)})
		require.NoError(t, err, override)
		require.Equal(t, want, m.Config.MaxBatchSize, override)
	}
	// default_max_batch_size (Triton's default-max-batch-size) in place of
	// 4, for a file that batches only; a configuration that sets it wins.
	fixed := writeRepo(t, map[string]entry{"m": {files: map[string]string{"1/model.onnx": "fixed"}}})
	for _, tc := range []struct {
		root, override string
		want           int
	}{
		{root, "", 32}, {root, `{"max_batch_size": 2}`, 2}, {root, `{"max_batch_size": 0}`, 0}, {fixed, "", 0},
	} {
		m, err := Load(Roots{tc.root}, "m", Options{Read: fakeReader, DefaultSLO: time.Second, DefaultMaxBatchSize: 32, Override: []byte(tc.override)})
		require.NoError(t, err, tc.override)
		require.Equal(t, tc.want, m.Config.MaxBatchSize, "%s %s", tc.root, tc.override)
	}
}

func TestBrokenEntriesNameFileAndProblem(t *testing.T) {
	tests := []struct {
		name  string
		e     entry
		wants []string
	}{
		{"no config", entry{files: map[string]string{"1/model.onnx": "onnx"}}, []string{"config.yaml", "missing"}},
		{"empty config", entry{config: "\n", files: map[string]string{"1/model.onnx": "onnx"}}, []string{"config.yaml", "empty"}},
		{"unknown field", entry{config: goodConfig + "slos: 1s\n", files: map[string]string{"1/model.onnx": "onnx"}}, []string{"config.yaml", "slos"}},
		{"misspelt field", entry{config: "slo: 20ms\nmax_batch: 8\n", files: map[string]string{"1/model.onnx": "onnx"}}, []string{`line 2: unknown field "max_batch" at the top level (did you mean max_batch_size?)`}},
		{"misspelt tensor field", entry{config: goodConfig + "inputs: [{name: input, datatyp: FP32, dims: [1, 28, 28]}]\n", files: map[string]string{"1/model.onnx": "onnx"}}, []string{`line 3: unknown field "datatyp" in an inputs entry (did you mean datatype?)`}},
		{"no slo", entry{config: "max_batch_size: 4\n", files: map[string]string{"1/model.onnx": "onnx"}}, []string{"config.yaml", "slo: missing"}},
		{"bad slo", entry{config: "slo: fast\nmax_batch_size: 4\n", files: map[string]string{"1/model.onnx": "onnx"}}, []string{"config.yaml", "fast"}},
		{"negative batch", entry{config: "slo: 1s\nmax_batch_size: -2\n", files: map[string]string{"1/model.onnx": "onnx"}}, []string{"max_batch_size", "-2"}},
		{"bad platform", entry{config: goodConfig + "platform: tensorflow\n", files: map[string]string{"1/model.onnx": "onnx"}}, []string{"platform", "tensorflow"}},
		{"bad dtype", entry{config: goodConfig + "inputs: [{name: input, datatype: FLOAT, dims: [1, 28, 28]}]\n", files: map[string]string{"1/model.onnx": "onnx"}}, []string{"inputs[0].datatype", "FLOAT"}},
		{"zero dim", entry{config: goodConfig + "inputs: [{name: input, datatype: FP32, dims: [0]}]\n", files: map[string]string{"1/model.onnx": "onnx"}}, []string{"inputs[0].dims[0]"}},
		{"no version", entry{config: goodConfig, files: map[string]string{"model.onnx": "onnx"}}, []string{"no version folder"}},
		{"no model file", entry{config: goodConfig, files: map[string]string{"1/weights.bin": "x"}}, []string{"1", "no model file"}},
		{"a NumPy data type", entry{config: goodConfig + "inputs:\n  - {name: input, datatype: float32, dims: [1, 28, 28]}\n", files: map[string]string{"1/model.onnx": "onnx"}},
			[]string{`inputs[0].datatype: "float32" is not a KServe v2 data type; write FP32`}},
		{"version folders not numbered", entry{config: goodConfig, files: map[string]string{"v1/model.onnx": "onnx", "0/model.onnx": "onnx"}},
			[]string{"no version folder (0, v1: a version folder is named by a whole number from 1"}},
		{"a model file of another name", entry{config: goodConfig, files: map[string]string{"1/resnet50.onnx": "onnx", "1/model.onnx.data": "w"}},
			[]string{"no model file", "(found resnet50.onnx: rename it, or name it in config.pbtxt's default_model_filename)"}},
		{"corrupt onnx", entry{config: goodConfig, files: map[string]string{"1/model.onnx": "garbage"}}, []string{"model.onnx", "protobuf parsing failed"}},
		{"config names missing input", entry{config: goodConfig + "inputs: [{name: image, datatype: FP32, dims: [1, 28, 28]}]\n", files: map[string]string{"1/model.onnx": "onnx"}}, []string{"image", "does not have"}},
		{"config dtype differs", entry{config: goodConfig + "inputs: [{name: input, datatype: INT64, dims: [1, 28, 28]}]\n", files: map[string]string{"1/model.onnx": "onnx"}}, []string{"INT64", "FP32"}},
		{"torchscript without io", entry{config: goodConfig, files: map[string]string{"1/model.pt": "pt"}}, []string{"model.pt", "must list inputs and outputs"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := writeRepo(t, map[string]entry{"bad": tc.e, "good": {config: goodConfig, files: map[string]string{"1/model.onnx": "onnx"}}})
			ix, err := Scan(Roots{root}, Options{Read: fakeReader})
			require.NoError(t, err)
			require.Equal(t, []string{"good"}, ix.Names(), "a broken entry must not hide the others")
			require.Len(t, ix.Broken, 1)
			perr := onlyProblem(ix)
			require.ErrorIs(t, perr, ErrInvalidModel)
			require.Contains(t, perr.Error(), filepath.Join(root, "bad"))
			for _, w := range tc.wants {
				require.Contains(t, perr.Error(), w)
			}
		})
	}
}

var errBadONNX = errors.New("invalid onnx model")

func TestAReaderThatNamesTheFileIsNotRepeated(t *testing.T) {
	root := writeRepo(t, map[string]entry{"bad": {config: goodConfig, files: map[string]string{"1/model.onnx": "garbage"}}})
	naming := func(path string) ([]TensorSpec, []TensorSpec, error) { // as ONNX Runtime's reader words it
		return nil, nil, fmt.Errorf("read model info %s: %w: protobuf parsing failed", path, errBadONNX)
	}
	ix, err := Scan(Roots{root}, Options{Read: naming})
	require.NoError(t, err)
	require.Len(t, ix.Broken, 1)
	file := filepath.Join(root, "bad", "1", "model.onnx")
	require.Equal(t, "invalid model: "+file+": invalid onnx model: protobuf parsing failed", onlyProblem(ix).Error())
	require.ErrorIs(t, onlyProblem(ix), errBadONNX, "the reader's error is still there to match")
}

func TestTorchScriptWithConfiguredTensors(t *testing.T) {
	root := writeRepo(t, map[string]entry{"r50": {
		config: goodConfig + "inputs: [{name: x, datatype: FP32, dims: [3, 224, 224]}]\noutputs: [{name: y, datatype: FP32, dims: [1000]}]\n",
		files:  map[string]string{"2/model.pt": "pt"},
	}})
	m, err := Load(Roots{root}, "r50", Options{})
	require.NoError(t, err)
	require.Equal(t, PlatformTorchScript, m.Platform)
	require.Equal(t, 2, m.Version)
	require.Equal(t, []int64{3, 224, 224}, m.Inputs[0].Dims)
	require.Contains(t, m.Notes, ErrEmulatedOnly.Error(), "models check and models list say where it serves")
}

func TestScanMissingRoot(t *testing.T) {
	_, err := Scan(Roots{filepath.Join(t.TempDir(), "absent")}, Options{Read: fakeReader})
	require.Error(t, err)
	require.Contains(t, err.Error(), "absent")
}

func TestLoadRejectsBadNames(t *testing.T) {
	_, err := Load(Roots{t.TempDir()}, "../etc", Options{Read: fakeReader})
	require.ErrorIs(t, err, ErrInvalidModel)
	_, err = Load(Roots{t.TempDir()}, "ghost", Options{Read: fakeReader})
	require.ErrorIs(t, err, ErrNotFound)
}

// Model and version folders linked from elsewhere are read as folders, as
// Triton reads them; they used to be passed over without a word.
func TestScanFollowsLinkedFolders(t *testing.T) {
	elsewhere := writeRepo(t, map[string]entry{
		"lenet": {config: goodConfig, files: map[string]string{"1/model.onnx": "onnx"}},
		"mlp":   {config: goodConfig, files: map[string]string{"9/model.onnx": "onnx"}},
	})
	root := writeRepo(t, map[string]entry{"digits": {config: goodConfig}})
	require.NoError(t, os.Symlink(filepath.Join(elsewhere, "lenet"), filepath.Join(root, "lenet")))
	require.NoError(t, os.Symlink(filepath.Join(elsewhere, "mlp", "9"), filepath.Join(root, "digits", "2")))
	require.NoError(t, os.Symlink(filepath.Join(elsewhere, "nowhere"), filepath.Join(root, "dangling")))
	ix, err := Scan(Roots{root}, Options{Read: fakeReader})
	require.NoError(t, err)
	require.Equal(t, []string{"digits", "lenet"}, ix.Names())
	d, err := ix.Get("digits")
	require.NoError(t, err)
	require.Equal(t, 2, d.Version, "a linked version folder")
	require.Len(t, ix.Broken, 1)
	require.ErrorIs(t, ix.Broken["dangling"], ErrInvalidModel)
	require.ErrorContains(t, ix.Broken["dangling"], "a link to "+filepath.Join(elsewhere, "nowhere")+", which does not exist")
}

// onlyProblem is the error of an index's one broken entry.
func onlyProblem(ix *Index) error {
	for _, err := range ix.Broken {
		return err
	}
	return nil
}

// A text model's dynamic sequence dimension is profiled at the size its
// profile_shapes gives, from config.yaml or config.pbtxt; without it the
// model notes that it is profiled at 1 there. Shapes that do not fit the
// inputs are refused, naming the input.
func TestProfileShapes(t *testing.T) {
	pbtxt := func(shapes string) string {
		return "max_batch_size: 8\n" + `parameters { key: "profile_shapes" value { string_value: "` + shapes + `" } }` + "\n"
	}
	// A warm-up request of 128 tokens whose mask is given with its batch
	// dimension, which does not fit: that one is left out with a note.
	warmup := `model_warmup [ { name: "w", batch_size: 1, inputs { key: "ids" value { data_type: TYPE_INT64, dims: [ 128 ], zero_data: true } }` +
		` inputs { key: "mask" value { data_type: TYPE_INT64, dims: [ 1, 128 ], zero_data: true } } } ]` + "\n"
	tests := []struct {
		name   string
		yaml   string
		pbtxt  string
		shapes map[string][]int64
		note   string // a note that contains it, "" none about shapes
		also   string // another note the model has
		err    string
	}{
		{name: "both given in config.yaml", yaml: goodConfig + "profile_shapes: {ids: [128], mask: [128]}\n",
			shapes: map[string][]int64{"ids": {128}, "mask": {128}}},
		{name: "in config.pbtxt", pbtxt: pbtxt("ids:64 mask:64"), shapes: map[string][]int64{"ids": {64}, "mask": {64}}},
		{name: "one left open", yaml: goodConfig + "profile_shapes: {ids: [128]}\n", shapes: map[string][]int64{"ids": {128}},
			note: "dynamic dimensions profiled at 1: mask [-1]; requests larger there run longer than the model's plan counts"},
		{name: "none given", yaml: goodConfig, note: "dynamic dimensions profiled at 1: ids [-1], mask [-1]; requests larger there run longer than the model's plan counts; " +
			"give the size requests bring in profile_shapes (config.yaml; config.pbtxt: the parameter profile_shapes), and the next start or load of m measures it there"},
		{name: "not an input", yaml: goodConfig + "profile_shapes: {tokens: [128]}\n",
			err: `profile_shapes: "tokens" is not an input of the model (inputs: ids, mask)`},
		{name: "the batch dimension given", yaml: goodConfig + "profile_shapes: {ids: [8, 128]}\n",
			err: `profile_shapes: input "ids" (dims [-1]): 2 dims given where the input has 1 (leave the batch dimension out)`},
		{name: "not a size", yaml: goodConfig + "profile_shapes: {ids: [0]}\n", err: "profile_shapes.ids[0]: 0 is not allowed"},
		{name: "not perf_analyzer's form", pbtxt: pbtxt("ids=128"), err: `"ids=128" is not NAME:DIMS`},
		{name: "Triton's model_warmup", pbtxt: "max_batch_size: 8\n" + warmup, shapes: map[string][]int64{"ids": {128}},
			note: "model_warmup: its dims of mask not used: input \"mask\" (dims [-1]): 2 dims given where the input has 1",
			also: "model_warmup: dynamic dimensions profiled at ids:128, its first request's dims (the parameter profile_shapes sets others)"},
		{name: "the parameter over model_warmup", pbtxt: pbtxt("ids:64 mask:64") + warmup, shapes: map[string][]int64{"ids": {64}, "mask": {64}}},
		{name: "config.yaml over model_warmup", yaml: "profile_shapes: {ids: [16], mask: [16]}\n", pbtxt: "max_batch_size: 8\n" + warmup,
			shapes: map[string][]int64{"ids": {16}, "mask": {16}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := loadM(t, tt.yaml, tt.pbtxt, "text")
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.shapes, m.Config.ProfileShapes)
			var noted []string
			for _, n := range m.Notes {
				if strings.Contains(n, "profiled at 1") || strings.Contains(n, "not used") {
					noted = append(noted, n)
				}
			}
			if tt.note == "" {
				require.Empty(t, noted)
				return
			}
			require.NotEmpty(t, noted)
			require.Contains(t, noted[0], tt.note)
			if tt.also != "" {
				require.Contains(t, m.Notes, tt.also)
			}
		})
	}
}

// The versions a folder serves side by side share its configuration: each
// takes the model_warmup's dims against its own inputs and says which it
// left out, the older one as the newer.
func TestWarmupShapesOfEveryVersion(t *testing.T) {
	pbtxt := "max_batch_size: 8\nversion_policy: { all: {} }\n" +
		`model_warmup [ { name: "w", batch_size: 1, inputs { key: "ids" value { data_type: TYPE_INT64, dims: [ 128 ], zero_data: true } }` +
		` inputs { key: "mask" value { data_type: TYPE_INT64, dims: [ 1, 128 ], zero_data: true } } } ]` + "\n"
	root := writeRepo(t, map[string]entry{"m": pbtxtEntry(pbtxt, map[string]string{"1/model.onnx": "text", "2/model.onnx": "text"})})
	ms, err := LoadVersions(Roots{root}, "m", Options{Read: fakeReader, DefaultSLO: time.Second})
	require.NoError(t, err)
	require.Len(t, ms, 2)
	for _, m := range ms {
		require.Equal(t, map[string][]int64{"ids": {128}}, m.Config.ProfileShapes, "version %d", m.Version)
		require.Contains(t, strings.Join(m.Notes, "\n"), "model_warmup: its dims of mask not used", "version %d", m.Version)
	}
}

// A model may bound its own queue (config.yaml max_queue, or Triton's
// default_queue_policy.max_queue_size, config.yaml winning); a bound below
// 0 or beyond the server's largest is refused.
func TestModelMaxQueue(t *testing.T) {
	pbtxt := "max_batch_size: 8\ndynamic_batching { default_queue_policy { max_queue_size: 32 } }\n"
	for _, tc := range []struct {
		name, yaml, pbtxt string
		want              int
		err               string
	}{
		{name: "none", yaml: goodConfig},
		{name: "config.yaml", yaml: goodConfig + "max_queue: 16\n", want: 16},
		{name: "config.pbtxt", pbtxt: pbtxt, want: 32},
		{name: "config.yaml over config.pbtxt", yaml: "max_queue: 4\n", pbtxt: pbtxt, want: 4},
		{name: "negative", yaml: goodConfig + "max_queue: -1\n", err: "max_queue: -1 is not allowed"},
		{name: "too many", yaml: goodConfig + "max_queue: 2000000\n", err: "max_queue: 2000000 is not allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := loadM(t, tc.yaml, tc.pbtxt, "onnx")
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, m.Config.MaxQueue)
			require.NotContains(t, strings.Join(m.Notes, "\n"), "dynamic_batching", "a queue bound takes full effect: no note")
		})
	}
}

// A model's priority levels come from config.yaml as from config.pbtxt,
// config.yaml winning; levels without a default among them, a default
// without levels, or too many levels are refused.
func TestModelPriorityLevels(t *testing.T) {
	pbtxt := "max_batch_size: 8\ndynamic_batching { priority_levels: 4 default_priority_level: 4 }\n"
	for _, tc := range []struct {
		name, yaml, pbtxt string
		levels, def       int
		err               string
	}{
		{name: "none", yaml: goodConfig},
		{name: "config.yaml", yaml: goodConfig + "priority_levels: 3\ndefault_priority_level: 2\n", levels: 3, def: 2},
		{name: "config.pbtxt", pbtxt: pbtxt, levels: 4, def: 4},
		{name: "config.yaml over config.pbtxt", yaml: "priority_levels: 2\ndefault_priority_level: 1\n", pbtxt: pbtxt, levels: 2, def: 1},
		{name: "no default", yaml: goodConfig + "priority_levels: 3\n", err: "default_priority_level: 0 is not allowed; use 1 (the highest) to 3 (priority_levels)"},
		{name: "default past the levels", yaml: goodConfig + "priority_levels: 3\ndefault_priority_level: 5\n", err: "default_priority_level: 5 is not allowed"},
		{name: "default without levels", yaml: goodConfig + "default_priority_level: 1\n", err: "default_priority_level: 1 names a level, and priority_levels sets none"},
		{name: "too many", yaml: goodConfig + "priority_levels: 101\ndefault_priority_level: 1\n", err: "priority_levels: 101 is not allowed; use 0 (every request alike) to 100"},
		{name: "over a stateful model", yaml: "priority_levels: 2\ndefault_priority_level: 2\n", pbtxt: strings.Replace(tritonRunningSum, `"sum"`, `"m"`, 1),
			err: "priority_levels: a stateful model (sequence_batching) takes none; remove it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := loadM(t, tc.yaml, tc.pbtxt, "onnx")
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.levels, m.Config.PriorityLevels)
			require.Equal(t, tc.def, m.Config.DefaultPriority)
			require.NotContains(t, strings.Join(m.Notes, "\n"), "dynamic_batching", "priority levels take full effect: no note")
		})
	}
}

// loadM loads a model folder "m" of the fake reader's file (a kind
// fakeReader knows) with a config.yaml and, unless "", a config.pbtxt.
func loadM(t *testing.T, yaml, pbtxt, file string) (*Model, error) {
	t.Helper()
	files := map[string]string{"1/model.onnx": file}
	if pbtxt != "" {
		files[TritonConfigFile] = pbtxt
	}
	root := writeRepo(t, map[string]entry{"m": {config: yaml, files: files}})
	return Load(Roots{root}, "m", Options{Read: fakeReader, DefaultSLO: time.Second})
}
