package repository

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/kserve/tritonpb"
)

// tritonRunningSum is a config.pbtxt of the fake reader's stateful file.
const tritonRunningSum = `name: "sum"
platform: "onnxruntime_onnx"
max_batch_size: 8
input [ { name: "INPUT", data_type: TYPE_FP32, dims: [ 4 ] } ]
output [ { name: "OUTPUT", data_type: TYPE_FP32, dims: [ 4 ] } ]
sequence_batching {
  max_sequence_idle_microseconds: 2500000
  direct { }
  control_input [
    { name: "START", control [ { kind: CONTROL_SEQUENCE_START, fp32_false_true: [ 0, 1 ] } ] },
    { name: "CORRID", control [ { kind: CONTROL_SEQUENCE_CORRID, data_type: TYPE_UINT64 } ] }
  ]
  state [ { input_name: "ACC", output_name: "ACC_NEXT", data_type: TYPE_FP32, dims: [ 4 ] } ]
}
`

func TestSequenceBatchingIsRead(t *testing.T) {
	root := writeRepo(t, map[string]entry{"sum": pbtxtEntry(tritonRunningSum, map[string]string{"1/model.onnx": "stateful"})})
	ix, err := Scan(Roots{root}, Options{Read: fakeReader, DefaultSLO: time.Second})
	require.NoError(t, err)
	require.Empty(t, ix.Broken)
	m, err := ix.Get("sum")
	require.NoError(t, err)
	s := m.Config.Sequence
	require.NotNil(t, s)
	require.Equal(t, 2500*time.Millisecond, s.Idle)
	require.Equal(t, DefaultMaxSequences, s.MaxSequences)
	require.Equal(t, []SequenceControl{
		{Input: "START", Kind: ControlStart, DataType: tensor.FP32, False: 0, True: 1},
		{Input: "CORRID", Kind: ControlCorrID, DataType: tensor.Uint64},
	}, s.Controls)
	require.Equal(t, []SequenceState{{Input: "ACC", Output: "ACC_NEXT", DataType: tensor.FP32, Dims: []int64{4}}}, s.States)

	// The file's tensors keep their roles; requests see the others alone.
	roles := map[string]string{}
	for _, t := range append(append([]TensorSpec{}, m.Inputs...), m.Outputs...) {
		roles[t.Name] = t.Sequence
	}
	require.Equal(t, map[string]string{"INPUT": "", "START": RoleControl, "CORRID": RoleControl, "ACC": RoleState, "OUTPUT": "", "ACC_NEXT": RoleState}, roles)
	require.Equal(t, []TensorSpec{{Name: "INPUT", DataType: tensor.FP32, Dims: []int64{4}}}, RequestTensors(m.Inputs))
	require.Equal(t, []TensorSpec{{Name: "OUTPUT", DataType: tensor.FP32, Dims: []int64{4}}}, RequestTensors(m.Outputs))
	require.Len(t, m.Notes, 1)
	require.Contains(t, m.Notes[0], "sequence_batching.direct: a sequence keeps no batch slot")

	// Written back as Triton's message, it reads as the same sequence.
	var pc tritonpb.ModelConfig
	require.NoError(t, prototext.Unmarshal([]byte(tritonRunningSum), &pc))
	back := proto.Clone(pc.GetSequenceBatching()).(*tritonpb.ModelSequenceBatching)
	back.StrategyChoice = nil // direct is the default, and gpuletd keeps no slots
	require.True(t, proto.Equal(back, s.Triton()), "%v\n%v", back, s.Triton())
}

func TestSequenceInitialStateFile(t *testing.T) {
	withFile := strings.Replace(tritonRunningSum, `dims: [ 4 ] } ]
}`, `dims: [ 4 ], initial_state [ { data_type: TYPE_FP32, dims: [ 4 ], data_file: "acc0" } ] } ]
  oldest { max_candidate_sequences: 3 }
}`, 1)
	withFile = strings.Replace(withFile, "  direct { }\n", "", 1)
	data := string([]byte{0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 64, 0, 0, 128, 64}) // 1, 2, 3, 4
	root := writeRepo(t, map[string]entry{"sum": pbtxtEntry(withFile, map[string]string{"1/model.onnx": "stateful", "initial_state/acc0": data})})
	ix, err := Scan(Roots{root}, Options{Read: fakeReader, DefaultSLO: time.Second})
	require.NoError(t, err)
	require.Empty(t, ix.Broken)
	m, err := ix.Get("sum")
	require.NoError(t, err)
	require.Equal(t, []byte(data), m.Config.Sequence.States[0].Initial)
	require.Equal(t, 3, m.Config.Sequence.MaxSequences)
	require.Equal(t, "acc0", m.Config.Sequence.Triton().State[0].InitialState[0].GetDataFile())
	require.Equal(t, int32(3), m.Config.Sequence.Triton().GetOldest().GetMaxCandidateSequences())

	root = writeRepo(t, map[string]entry{"sum": pbtxtEntry(withFile, map[string]string{"1/model.onnx": "stateful", "initial_state/acc0": data[:8]})})
	ix, err = Scan(Roots{root}, Options{Read: fakeReader, DefaultSLO: time.Second})
	require.NoError(t, err)
	require.ErrorContains(t, ix.Broken["sum"], filepath.Join(root, "sum", "initial_state", "acc0"))
	require.ErrorContains(t, ix.Broken["sum"], `the initial state of "ACC": 8 bytes, but FP32 [4] holds 16`)
}

func TestSequenceBatchingRefusals(t *testing.T) {
	sum := func(old, repl string) string {
		require.Contains(t, tritonRunningSum, old)
		return strings.Replace(tritonRunningSum, old, repl, 1)
	}
	start := `{ kind: CONTROL_SEQUENCE_START, fp32_false_true: [ 0, 1 ] }`
	corrid := `{ kind: CONTROL_SEQUENCE_CORRID, data_type: TYPE_UINT64 }`
	tests := []struct {
		name, pbtxt string
		wants       []string
	}{
		{"iterative", sum("direct { }", "iterative_sequence: true"), []string{"sequence_batching.iterative_sequence", "not served"}},
		{"two controls in one input", sum(start, start+", "+start), []string{"control_input[0].control: 2 controls"}},
		{"no false/true values", sum("fp32_false_true: [ 0, 1 ]", ""), []string{"control_input[0].control[0]", "int32_false_true, fp32_false_true or bool_false_true"}},
		{"three values", sum("[ 0, 1 ]", "[ 0, 1, 2 ]"), []string{"control_input[0].control[0]", "two"}},
		{"a float correlation ID", sum("TYPE_UINT64", "TYPE_FP32"), []string{"control_input[1].control[0].data_type: TYPE_FP32", "TYPE_UINT64, TYPE_INT64, TYPE_UINT32, TYPE_INT32 or TYPE_STRING"}},
		{"a correlation ID with values", sum(corrid, `{ kind: CONTROL_SEQUENCE_CORRID, data_type: TYPE_UINT64, int32_false_true: [ 0, 1 ] }`), []string{"correlation ID control takes data_type"}},
		{"a control listed as input", sum(`input [ { name: "INPUT", data_type: TYPE_FP32, dims: [ 4 ] } ]`,
			`input [ { name: "INPUT", data_type: TYPE_FP32, dims: [ 4 ] }, { name: "START", data_type: TYPE_FP32, dims: [ 1 ] } ]`),
			[]string{`"START" is listed in input too`}},
		{"a state output listed as output", sum(`output [ { name: "OUTPUT", data_type: TYPE_FP32, dims: [ 4 ] } ]`,
			`output [ { name: "OUTPUT", data_type: TYPE_FP32, dims: [ 4 ] }, { name: "ACC_NEXT", data_type: TYPE_FP32, dims: [ 4 ] } ]`),
			[]string{`state[0].output_name: "ACC_NEXT" is listed in output too`}},
		{"a tensor with two roles", sum(`name: "CORRID"`, `name: "START"`), []string{`control_input[1]: "START" is also`}},
		{"a control the file lacks", sum(`name: "START"`, `name: "BEGIN"`), []string{`control input "BEGIN" is not an input of the model file`, "START"}},
		{"a control of another type", sum("fp32_false_true", "int32_false_true"), []string{`control input "START" is FP32 in the model file`, "CONTROL_SEQUENCE_START control gives INT32"}},
		{"a state without output", sum(`output_name: "ACC_NEXT", `, ""), []string{"state[0].output_name: missing"}},
		{"a dynamic state", sum("TYPE_FP32, dims: [ 4 ] } ]\n}", "TYPE_FP32, dims: [ -1 ] } ]\n}"), []string{"state[0].dims: [-1]", "fixed shape"}},
		{"a state of another shape", sum("TYPE_FP32, dims: [ 4 ] } ]\n}", "TYPE_FP32, dims: [ 5 ] } ]\n}"), []string{`state input "ACC" is FP32 [4] in the model file; the state is FP32 [5]`}},
		{"a state the file lacks", sum(`input_name: "ACC"`, `input_name: "MEMORY"`), []string{`state input "MEMORY" is not an input of the model file`}},
		{"an idle of more than a day", sum("2500000", "90000000000"), []string{"max_sequence_idle_microseconds: 90000000000"}},
		{"with the response cache", tritonRunningSum + "response_cache { enable: true }\n", []string{"response_cache: a stateful model's answers depend on its sequence's state"}},
		{"a missing initial state file", sum("dims: [ 4 ] } ]\n}", `dims: [ 4 ], initial_state [ { data_type: TYPE_FP32, dims: [ 4 ], data_file: "acc0" } ] } ]`+"\n}"),
			[]string{filepath.Join("initial_state", "acc0"), "no such file"}},
		{"an initial state escaping", sum("dims: [ 4 ] } ]\n}", `dims: [ 4 ], initial_state [ { data_type: TYPE_FP32, dims: [ 4 ], data_file: "../acc0" } ] } ]`+"\n}"),
			[]string{"initial_state.data_file", "not a file in the model folder's initial_state folder"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := writeRepo(t, map[string]entry{"sum": pbtxtEntry(tc.pbtxt, map[string]string{"1/model.onnx": "stateful"})})
			ix, err := Scan(Roots{root}, Options{Read: fakeReader, DefaultSLO: time.Second})
			require.NoError(t, err)
			require.Empty(t, ix.Names())
			perr := onlyProblem(ix)
			require.ErrorIs(t, perr, ErrInvalidModel)
			for _, w := range tc.wants {
				require.Contains(t, perr.Error(), w)
			}
		})
	}
}

func TestSequenceRefusesTheCacheFromConfigYAML(t *testing.T) {
	root := writeRepo(t, map[string]entry{"sum": {config: "response_cache: true\n", files: map[string]string{"config.pbtxt": tritonRunningSum, "1/model.onnx": "stateful"}}})
	ix, err := Scan(Roots{root}, Options{Read: fakeReader, DefaultSLO: time.Second})
	require.NoError(t, err)
	require.Empty(t, ix.Names())
	require.ErrorContains(t, onlyProblem(ix), "response_cache: a stateful model's answers depend on its sequence's state")
}

func TestSequenceStateIsBounded(t *testing.T) {
	// A state of 512 KiB a sequence: 2048 of them hold a GiB.
	big := func(name, extra string) string {
		c := strings.Replace(tritonRunningSum, "dims: [ 4 ] } ]\n}", "dims: [ 131072 ] } ]\n"+extra+"}", 1)
		return strings.Replace(strings.Replace(c, "  direct { }\n", "", 1), `"sum"`, `"`+name+`"`, 1)
	}
	file := map[string]string{"1/model.onnx": "bigstate"}
	root := writeRepo(t, map[string]entry{
		"over":    pbtxtEntry(big("over", "  oldest { max_candidate_sequences: 3000 }\n"), file),
		"fits":    pbtxtEntry(big("fits", "  oldest { max_candidate_sequences: 2048 }\n"), file),
		"default": pbtxtEntry(big("default", ""), file),
	})
	ix, err := Scan(Roots{root}, Options{Read: fakeReader, DefaultSLO: time.Second})
	require.NoError(t, err)
	require.Equal(t, []string{"default", "fits"}, ix.Names())
	require.ErrorContains(t, ix.Broken["over"], "max_candidate_sequences: 3000 sequences of 524288 bytes of state each would hold 1572864000 bytes, above 1073741824; give at most 2048")
	m, err := ix.Get("default")
	require.NoError(t, err)
	require.Equal(t, 2048, m.Config.Sequence.MaxSequences)
	require.Contains(t, strings.Join(m.Notes, "\n"), "sequence_batching: at most 2048 sequences live at once, whose 524288 bytes of state each hold 1073741824 bytes together")
	require.Nil(t, m.Config.Sequence.Triton().GetOldest(), "the bound was not configured")
	m, err = ix.Get("fits")
	require.NoError(t, err)
	require.Equal(t, int32(2048), m.Config.Sequence.Triton().GetOldest().GetMaxCandidateSequences())
}

func TestSequenceOfATorchScriptModelIsRefused(t *testing.T) {
	pt := strings.Replace(tritonRunningSum, `platform: "onnxruntime_onnx"`, `platform: "pytorch_libtorch"`, 1)
	root := writeRepo(t, map[string]entry{"sum": pbtxtEntry(pt, map[string]string{"1/model.pt": "pt"})})
	ix, err := Scan(Roots{root}, Options{Read: fakeReader, DefaultSLO: time.Second})
	require.NoError(t, err)
	require.Empty(t, ix.Names())
	require.ErrorContains(t, onlyProblem(ix), "sequence_batching: a TorchScript model (model.pt) serves on emulated devices only")
}
