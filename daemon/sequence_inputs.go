package daemon

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/kserve"
)

// sequenceInputs are a sequence request's inputs: the request's own, then
// each control input with its value for this request and each state input
// with the sequence's state (its initial value before the first answer),
// one row each when the model batches.
func sequenceInputs(m *repository.Model, ref kserve.SequenceRef, state []tensor.Tensor, ins []tensor.Tensor) ([]tensor.Tensor, error) {
	conf := m.Config.Sequence
	out := make([]tensor.Tensor, 0, len(ins)+len(conf.Controls)+len(conf.States))
	out = append(out, ins...)
	var row []int64
	if m.Config.MaxBatchSize > 0 {
		row = []int64{1}
	}
	for _, c := range conf.Controls {
		data, err := controlValue(c, ref)
		if err != nil {
			return nil, err
		}
		out = append(out, tensor.Tensor{Name: c.Input, DataType: c.DataType, Shape: append(append([]int64(nil), row...), 1), Data: data})
	}
	for i, st := range conf.States {
		shape := append(append([]int64(nil), row...), st.Dims...)
		if i < len(state) && state[i].Data != nil {
			out = append(out, tensor.Tensor{Name: st.Input, DataType: st.DataType, Shape: shape, Data: state[i].Data})
			continue
		}
		if st.Initial != nil {
			out = append(out, tensor.Tensor{Name: st.Input, DataType: st.DataType, Shape: shape, Data: st.Initial})
			continue
		}
		z, err := tensor.Zeros(st.Input, st.DataType, shape)
		if err != nil {
			return nil, fmt.Errorf("the initial state of %q: %w", st.Input, err)
		}
		out = append(out, z)
	}
	return out, nil
}

// controlValue is a control's one value for the request, little-endian in
// the control's type.
func controlValue(c repository.SequenceControl, ref kserve.SequenceRef) ([]byte, error) {
	if c.Kind == repository.ControlCorrID {
		if c.DataType == tensor.Bytes { // the ID as given: a number's digits, or the string
			return tensor.AppendBytesElement(nil, []byte(ref.ID)), nil
		}
		return packNumber(c.DataType, ref.Number), nil // a string ID is refused before
	}
	on := false
	switch c.Kind {
	case repository.ControlStart:
		on = ref.Start
	case repository.ControlEnd:
		on = ref.End
	case repository.ControlReady:
		on = true // every row holds a request
	}
	v := c.False
	if on {
		v = c.True
	}
	switch c.DataType {
	case tensor.FP32:
		return binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(v))), nil
	case tensor.Int32:
		return binary.LittleEndian.AppendUint32(nil, uint32(int32(v))), nil
	case tensor.Bool:
		if v != 0 {
			return []byte{1}, nil
		}
		return []byte{0}, nil
	}
	return nil, fmt.Errorf("control input %q: %s is not a control type", c.Input, c.DataType)
}

// packNumber writes a correlation ID in a 32- or 64-bit integer type; a
// 32-bit one keeps the ID's low 32 bits, as Triton does.
func packNumber(dt tensor.DataType, v uint64) []byte {
	switch dt {
	case tensor.Uint32, tensor.Int32:
		return binary.LittleEndian.AppendUint32(nil, uint32(v))
	}
	return binary.LittleEndian.AppendUint64(nil, v)
}

// withoutState is outs less the sequence's state outputs, which the daemon
// keeps and the client is not answered with.
func withoutState(m *repository.Model, outs []tensor.Tensor) []tensor.Tensor {
	kept := outs[:0:0]
	for _, o := range outs {
		if m.Config.Sequence.Role(o.Name, false) == "" {
			kept = append(kept, o)
		}
	}
	return kept
}

// sequenceRun runs a stateful model's request with every input filled,
// asking for the outputs named (all when none): node.dispatch for a
// request of the model, a pipeline's step dispatch for a step's.
type sequenceRun func(inputs []tensor.Tensor, names []string) (*executed, *inferError)

// executeInSequence runs a request of a stateful model in its sequence:
// after the sequence's requests before it, with the control and state
// inputs filled, keeping the state outputs for the next one.
func (n *node) executeInSequence(ctx context.Context, m *repository.Model, ref kserve.SequenceRef, inputs []tensor.Tensor, names []string, deadline time.Time, run sequenceRun) (*executed, *inferError) {
	if rows := requestRows(m, inputs); m.Config.MaxBatchSize > 0 && rows != 1 {
		return nil, badRequest("%s: a request of a sequence is one row (a batch of 1); this one has %d", m.Name, rows)
	}
	for _, c := range m.Config.Sequence.Controls {
		if c.Kind == repository.ControlCorrID && c.DataType != tensor.Bytes && ref.Given() && !ref.Numeric {
			return nil, badRequest("%s: sequence_id %s is a string, but the model's correlation ID input %q takes a number (%s)", m.Name, ref, c.Input, c.DataType)
		}
	}
	t, ierr := n.seqs.begin(ctx, m, ref, deadline, time.Now())
	turnTaken(ctx) // the stream's next request of the sequence may ask now
	if ierr != nil {
		return nil, ierr
	}
	conf := m.Config.Sequence
	// The turn is held: no other request writes the sequence's state.
	all, err := sequenceInputs(m, ref, t.s.state, inputs)
	if err != nil {
		n.seqs.done(t, conf, nil, time.Now())
		return nil, badRequest("%s: %v", m.Name, err)
	}
	if len(names) > 0 {
		names = slices.Clip(names)
		for _, st := range conf.States {
			names = append(names, st.Output)
		}
	}
	res, ierr := run(all, names)
	if ierr != nil {
		n.seqs.done(t, conf, nil, time.Now())
		return nil, ierr
	}
	n.seqs.done(t, conf, res.outs, time.Now())
	res.outs = withoutState(m, res.outs)
	return res, nil
}
