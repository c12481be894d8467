package repository

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gpulet/gpuletd/executor/tensor"
)

// maxInitialState bounds an initial_state file: a state is held per live
// sequence, so one this size is already a lot.
const maxInitialState = 64 << 20

// inFile checks that the model file has every control input and state the
// sequence names (ins and outs are the file's); nil for none.
func (s *Sequence) inFile(ins, outs []TensorSpec) error {
	if s == nil {
		return nil
	}
	for _, c := range s.Controls {
		if _, err := findSpec(ins, "input", c.Input, "control input"); err != nil {
			return err
		}
	}
	for _, st := range s.States {
		if _, err := findSpec(ins, "input", st.Input, "state input"); err != nil {
			return err
		}
		if _, err := findSpec(outs, "output", st.Output, "state output"); err != nil {
			return err
		}
	}
	return nil
}

// findSpec is the index of the model file's tensor name, what the
// sequence's configuration names it.
func findSpec(specs []TensorSpec, kind, name, what string) (int, error) {
	i := slices.IndexFunc(specs, func(t TensorSpec) bool { return t.Name == name })
	if i < 0 {
		return -1, fmt.Errorf("sequence_batching: %s %q is not an %s of the model file (its %ss: %s)", what, name, kind, kind, strings.Join(tensorNames(specs), ", "))
	}
	return i, nil
}

// resolveSequence checks that the model file has every control input and
// state the configuration's sequence_batching names, of its type and
// shape, marks them with their roles (TensorSpec.Sequence), and reads the
// states' initial_state files.
func (m *Model) resolveSequence() error {
	s := m.Config.Sequence
	if s == nil {
		return nil
	}
	if m.Config.ResponseCache { // from config.pbtxt, or a config.yaml beside it
		return errors.New("response_cache: a stateful model's answers depend on its sequence's state, which the cache cannot see; remove one or the other")
	}
	for _, c := range s.Controls {
		i, err := findSpec(m.Inputs, "input", c.Input, "control input")
		if err != nil {
			return err
		}
		t := m.Inputs[i]
		if t.DataType != c.DataType {
			return fmt.Errorf("sequence_batching: control input %q is %s in the model file, but its %s control gives %s", c.Input, t.DataType, c.Kind, c.DataType)
		}
		if !dimsCompatible([]int64{1}, t.Dims) {
			return fmt.Errorf("sequence_batching: control input %q has shape %v in the model file (after any batch dimension); a control is one value: [1]", c.Input, t.Dims)
		}
		m.Inputs[i].Sequence, m.Inputs[i].Dims = RoleControl, []int64{1}
	}
	if err := m.boundSequences(); err != nil {
		return err
	}
	for k, st := range s.States {
		for _, side := range []struct {
			specs      []TensorSpec
			kind, name string
		}{{m.Inputs, "input", st.Input}, {m.Outputs, "output", st.Output}} {
			i, err := findSpec(side.specs, side.kind, side.name, "state "+side.kind)
			if err != nil {
				return err
			}
			t := side.specs[i]
			if t.DataType != st.DataType || !dimsCompatible(st.Dims, t.Dims) {
				return fmt.Errorf("sequence_batching: state %s %q is %s %v in the model file; the state is %s %v", side.kind, side.name, t.DataType, t.Dims, st.DataType, st.Dims)
			}
			side.specs[i].Sequence, side.specs[i].Dims = RoleState, slices.Clone(st.Dims)
		}
		if st.InitialFile != "" {
			data, err := readInitialState(m.Dir, st)
			if err != nil {
				return err
			}
			s.States[k].Initial = data
		}
	}
	return nil
}

// boundSequences keeps the state of the model's live sequences within
// MaxStateBytes: a bound the configuration gives above it is refused, the
// default lowered to fit, with a note.
func (m *Model) boundSequences() error {
	s := m.Config.Sequence
	per := s.StateBytes()
	if per == 0 {
		return nil
	}
	fit := max(1, MaxStateBytes/per)
	switch {
	case s.maxSet && int64(s.MaxSequences) > fit:
		return fmt.Errorf("sequence_batching.oldest.max_candidate_sequences: %d sequences of %d bytes of state each would hold %d bytes, above %d; give at most %d",
			s.MaxSequences, per, int64(s.MaxSequences)*per, int64(MaxStateBytes), fit)
	case !s.maxSet && int64(s.MaxSequences) > fit:
		s.MaxSequences = int(fit)
		m.Notes = append(m.Notes, fmt.Sprintf("sequence_batching: at most %d sequences live at once, whose %d bytes of state each hold %d bytes together (oldest.max_candidate_sequences sets another bound)",
			fit, per, fit*per))
	}
	return nil
}

// readInitialState reads a state's initial_state file, which holds its
// elements in row-major order.
func readInitialState(dir string, st SequenceState) ([]byte, error) {
	f := filepath.Join(dir, "initial_state", st.InitialFile)
	n, _ := tensor.NumElements(st.Dims)
	want := n * int64(st.DataType.Size())
	fi, err := os.Stat(f)
	if err == nil && fi.Size() != want {
		err = fmt.Errorf("%d bytes, but %s %v holds %d", fi.Size(), st.DataType, st.Dims, want)
	}
	if err == nil && want > maxInitialState {
		err = fmt.Errorf("%d bytes, above %d", want, maxInitialState)
	}
	var data []byte
	if err == nil {
		data, err = os.ReadFile(f)
	}
	if err != nil {
		return nil, invalidFile(f, fmt.Sprintf("the initial state of %q", st.Input), err)
	}
	return data, nil
}
