package repository

import (
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/kserve/tritonpb"
)

// maxIdle bounds max_sequence_idle_microseconds: a day.
const maxIdle = 24 * time.Hour

// tritonSequence reads a config.pbtxt's sequence_batching; nil when it has
// none. Field names the field in errors and notes.
func tritonSequence(pc *tritonpb.ModelConfig, c *ModelConfig, bad, note func(string, ...any)) *Sequence {
	sb := pc.GetSequenceBatching()
	if sb == nil {
		return nil
	}
	const f = "sequence_batching"
	if c.Platform == PlatformEnsemble {
		bad("%s: a pipeline has no sequences of its own; give its steps' models sequence_batching", f)
		return nil
	}
	s := &Sequence{Idle: DefaultIdle, MaxSequences: DefaultMaxSequences}
	if us := sb.MaxSequenceIdleMicroseconds; us > uint64(maxIdle.Microseconds()) {
		bad("%s.max_sequence_idle_microseconds: %d is above a day (%d)", f, us, maxIdle.Microseconds())
	} else if us > 0 {
		s.Idle = time.Duration(us) * time.Microsecond
	}
	if sb.IterativeSequence {
		bad("%s.iterative_sequence: iterative sequences (a model that schedules a request again) are not served", f)
	}
	switch st := sb.GetStrategyChoice().(type) {
	case *tritonpb.ModelSequenceBatching_Direct:
		note("%s.direct: a sequence keeps no batch slot of its own: gpuletd batches the requests of any sequences by their SLO, in order within each sequence", f)
	case *tritonpb.ModelSequenceBatching_Oldest:
		if n := st.Oldest.MaxCandidateSequences; n < 0 || n > 1<<20 {
			bad("%s.oldest.max_candidate_sequences: %d is not allowed; use 1 to %d", f, n, 1<<20)
		} else if n > 0 {
			s.MaxSequences, s.maxSet = int(n), true
		}
		if len(st.Oldest.PreferredBatchSize) > 0 || st.Oldest.MaxQueueDelayMicroseconds > 0 || st.Oldest.PreserveOrdering {
			note("%s.oldest: preferred_batch_size, max_queue_delay_microseconds and preserve_ordering ignored: gpuletd batches by the SLO, in order within each sequence", f)
		}
	}
	names := map[string]string{}
	taken := func(field, name string) bool {
		if name == "" {
			bad("%s.name: missing; give the model input it feeds", field)
			return true
		}
		if prev, dup := names[name]; dup {
			bad("%s: %q is also %s; each tensor has one role", field, name, prev)
			return true
		}
		if slices.ContainsFunc(c.Inputs, func(t TensorSpec) bool { return t.Name == name }) {
			bad("%s: %q is listed in input too; the daemon fills it, so leave it out of input", field, name)
			return true
		}
		names[name] = field
		return false
	}
	for i, ci := range sb.ControlInput {
		field := fmt.Sprintf("%s.control_input[%d]", f, i)
		if taken(field, ci.Name) {
			continue
		}
		if len(ci.Control) != 1 {
			bad("%s.control: %d controls; give one control a input", field, len(ci.Control))
			continue
		}
		if ctl, ok := tritonControl(field+".control[0]", ci.Control[0], bad); ok {
			ctl.Input = ci.Name
			s.Controls = append(s.Controls, ctl)
		}
	}
	for i, st := range sb.State {
		field := fmt.Sprintf("%s.state[%d]", f, i)
		if taken(field+".input_name", st.InputName) {
			continue
		}
		if st.OutputName == "" {
			bad("%s.output_name: missing; give the model output whose value the next request's %q takes", field, st.InputName)
			continue
		}
		if slices.ContainsFunc(c.Outputs, func(t TensorSpec) bool { return t.Name == st.OutputName }) {
			bad("%s.output_name: %q is listed in output too; the daemon keeps it, so leave it out of output", field, st.OutputName)
			continue
		}
		if slices.ContainsFunc(s.States, func(o SequenceState) bool { return o.Output == st.OutputName }) {
			bad("%s.output_name: %q is another state's output too", field, st.OutputName)
			continue
		}
		if s2, ok := tritonState(field, st, bad, note); ok {
			s.States = append(s.States, s2)
		}
	}
	if len(s.Controls) == 0 && len(s.States) == 0 {
		note("%s: no control_input or state: the requests of a sequence run in order, and nothing is carried between them", f)
	}
	return s
}

// tritonControl reads one control of a control input.
func tritonControl(field string, ctl *tritonpb.ModelSequenceBatching_Control, bad func(string, ...any)) (SequenceControl, bool) {
	out := SequenceControl{}
	given := 0
	for _, n := range []int{len(ctl.Int32FalseTrue), len(ctl.Fp32FalseTrue), len(ctl.BoolFalseTrue)} {
		if n > 0 {
			given++
		}
	}
	switch ctl.Kind {
	case tritonpb.ModelSequenceBatching_Control_CONTROL_SEQUENCE_CORRID:
		out.Kind = ControlCorrID
		if given > 0 {
			bad("%s: a correlation ID control takes data_type, not false/true values", field)
			return out, false
		}
		dt := tritonTypes[ctl.DataType]
		if !slices.Contains([]tensor.DataType{tensor.Uint64, tensor.Int64, tensor.Uint32, tensor.Int32, tensor.Bytes}, dt) {
			bad("%s.data_type: %s; a correlation ID is TYPE_UINT64, TYPE_INT64, TYPE_UINT32, TYPE_INT32 or TYPE_STRING", field, ctl.DataType)
			return out, false
		}
		out.DataType = dt
		return out, true
	case tritonpb.ModelSequenceBatching_Control_CONTROL_SEQUENCE_START:
		out.Kind = ControlStart
	case tritonpb.ModelSequenceBatching_Control_CONTROL_SEQUENCE_READY:
		out.Kind = ControlReady
	case tritonpb.ModelSequenceBatching_Control_CONTROL_SEQUENCE_END:
		out.Kind = ControlEnd
	default:
		bad("%s.kind: %s is not a control kind gpuletd knows", field, ctl.Kind)
		return out, false
	}
	if given != 1 {
		bad("%s: give the false and true values once, as int32_false_true, fp32_false_true or bool_false_true", field)
		return out, false
	}
	switch {
	case len(ctl.Int32FalseTrue) == 2:
		out.DataType, out.False, out.True = tensor.Int32, float64(ctl.Int32FalseTrue[0]), float64(ctl.Int32FalseTrue[1])
	case len(ctl.Fp32FalseTrue) == 2:
		out.DataType, out.False, out.True = tensor.FP32, float64(ctl.Fp32FalseTrue[0]), float64(ctl.Fp32FalseTrue[1])
	case len(ctl.BoolFalseTrue) == 2:
		out.DataType = tensor.Bool
		out.False, out.True = boolValue(ctl.BoolFalseTrue[0]), boolValue(ctl.BoolFalseTrue[1])
	default:
		bad("%s: the false/true values are two: the false value, then the true one", field)
		return out, false
	}
	if ctl.DataType != tritonpb.DataType_TYPE_INVALID && tritonTypes[ctl.DataType] != out.DataType {
		bad("%s.data_type: %s, but the values given are %s", field, ctl.DataType, out.DataType)
		return out, false
	}
	return out, true
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// tritonState reads one implicit state.
func tritonState(field string, st *tritonpb.ModelSequenceBatching_State, bad, note func(string, ...any)) (SequenceState, bool) {
	out := SequenceState{Input: st.InputName, Output: st.OutputName, DataType: tritonType(field, st.DataType, bad), Dims: slices.Clone(st.Dims)}
	if out.DataType == "" {
		return out, false
	}
	if out.DataType == tensor.Bytes {
		bad("%s.data_type: TYPE_STRING states are not served; give a numeric type", field)
		return out, false
	}
	if slices.ContainsFunc(st.Dims, func(d int64) bool { return d < 1 }) {
		bad("%s.dims: %v; a state has a fixed shape (no -1)", field, st.Dims)
		return out, false
	}
	if st.UseSameBufferForInputOutput || st.UseGrowableMemory {
		note("%s: use_same_buffer_for_input_output and use_growable_memory ignored: the daemon keeps a state between requests", field)
	}
	switch len(st.InitialState) {
	case 0:
	case 1:
		is := st.InitialState[0]
		if is.DataType != st.DataType || !slices.Equal(is.Dims, st.Dims) {
			bad("%s.initial_state: %s %v differs from the state's %s %v", field, is.DataType, is.Dims, st.DataType, st.Dims)
			return out, false
		}
		if file := is.GetDataFile(); file != "" {
			if !filepath.IsLocal(file) {
				bad("%s.initial_state.data_file: %q is not a file in the model folder's initial_state folder", field, file)
				return out, false
			}
			out.InitialFile = file
		}
	default:
		bad("%s.initial_state: %d given; give one", field, len(st.InitialState))
		return out, false
	}
	return out, true
}

// Triton is the sequence batching as a config.pbtxt gives it.
func (s *Sequence) Triton() *tritonpb.ModelSequenceBatching {
	out := &tritonpb.ModelSequenceBatching{MaxSequenceIdleMicroseconds: uint64(s.Idle.Microseconds())}
	if s.maxSet {
		out.StrategyChoice = &tritonpb.ModelSequenceBatching_Oldest{Oldest: &tritonpb.ModelSequenceBatching_StrategyOldest{MaxCandidateSequences: int32(s.MaxSequences)}}
	}
	for _, c := range s.Controls {
		ctl := &tritonpb.ModelSequenceBatching_Control{Kind: tritonpb.ModelSequenceBatching_Control_Kind(c.Kind)}
		switch {
		case c.Kind == ControlCorrID:
			ctl.DataType = TritonDataType(c.DataType)
		case c.DataType == tensor.Int32:
			ctl.Int32FalseTrue = []int32{int32(c.False), int32(c.True)}
		case c.DataType == tensor.FP32:
			ctl.Fp32FalseTrue = []float32{float32(c.False), float32(c.True)}
		default:
			ctl.BoolFalseTrue = []bool{c.False != 0, c.True != 0}
		}
		out.ControlInput = append(out.ControlInput, &tritonpb.ModelSequenceBatching_ControlInput{Name: c.Input, Control: []*tritonpb.ModelSequenceBatching_Control{ctl}})
	}
	for _, st := range s.States {
		ts := &tritonpb.ModelSequenceBatching_State{InputName: st.Input, OutputName: st.Output, DataType: TritonDataType(st.DataType), Dims: st.Dims}
		if st.InitialFile != "" {
			ts.InitialState = []*tritonpb.ModelSequenceBatching_InitialState{{DataType: ts.DataType, Dims: st.Dims,
				StateData: &tritonpb.ModelSequenceBatching_InitialState_DataFile{DataFile: st.InitialFile}}}
		}
		out.State = append(out.State, ts)
	}
	return out
}
