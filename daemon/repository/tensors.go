package repository

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// resolveTensors fills Inputs and Outputs: from the model file (ONNX), checked
// against config.yaml when it lists them too, or from config.yaml alone when
// the file cannot be read for them (TorchScript).
func (m *Model) resolveTensors(read InfoReader, defaultMaxBatch int) error {
	if m.Platform == PlatformTorchScript {
		if m.Config.Sequence != nil {
			return errors.New("sequence_batching: a TorchScript model (model.pt) serves on emulated devices only, where no sequence carries state; export it to ONNX to serve its sequences")
		}
		if len(m.Config.Inputs) == 0 || len(m.Config.Outputs) == 0 {
			return errors.New("torchscript models must list inputs and outputs in config.yaml")
		}
		m.Inputs, m.Outputs = m.Config.Inputs, m.Config.Outputs
		m.Notes = append(m.Notes, ErrEmulatedOnly.Error())
		return nil
	}
	if read == nil {
		return errors.New("no reader for model files")
	}
	ins, outs, err := read(m.File)
	if err != nil {
		return err
	}
	if err := m.Config.Sequence.inFile(ins, outs); err != nil {
		return err
	}
	if m.autoBatch {
		m.autoMaxBatch(ins, outs, defaultMaxBatch)
	}
	if m.Inputs, err = m.perRequest("input", ins, m.Config.Inputs); err != nil {
		return err
	}
	if m.Outputs, err = m.perRequest("output", outs, m.Config.Outputs); err != nil {
		return err
	}
	return m.resolveSequence()
}

// perRequest strips the batch dimension from the file's shapes when the model
// batches, and checks the configured specs against the file.
func (m *Model) perRequest(kind string, file, configured []TensorSpec) ([]TensorSpec, error) {
	if len(file) == 0 {
		return nil, fmt.Errorf("the model has no %ss", kind)
	}
	out := make([]TensorSpec, 0, len(file))
	for _, t := range file {
		dims := t.Dims
		if m.Config.MaxBatchSize > 0 {
			if len(dims) == 0 {
				return nil, fmt.Errorf("%s %q is a scalar but max_batch_size is %d; a batching model needs a batch dimension", kind, t.Name, m.Config.MaxBatchSize)
			}
			if dims[0] != -1 && dims[0] < int64(m.Config.MaxBatchSize) {
				return nil, fmt.Errorf("%s %q has dimension 0 fixed at %d, below max_batch_size %d; export it with a dynamic batch dimension or set max_batch_size: 0", kind, t.Name, dims[0], m.Config.MaxBatchSize)
			}
			dims = dims[1:]
		}
		out = append(out, TensorSpec{Name: t.Name, DataType: t.DataType, Dims: slices.Clone(dims)})
	}
	if len(configured) == 0 {
		return out, nil
	}
	// A sequence's control and state tensors are the daemon's: the
	// configuration leaves them out of its inputs and outputs.
	filled := 0
	for _, t := range out {
		if m.Config.Sequence.Role(t.Name, kind == "input") != "" {
			filled++
		}
	}
	if len(configured) != len(out)-filled {
		also := ""
		if filled > 0 {
			also = fmt.Sprintf(" (%d besides the %d sequence_batching fills)", len(out)-filled, filled)
		}
		return nil, fmt.Errorf("the configuration lists %d %ss, the model file has %d%s", len(configured), kind, len(out), also)
	}
	for _, c := range configured {
		i := slices.IndexFunc(out, func(t TensorSpec) bool { return t.Name == c.Name })
		if i < 0 {
			return nil, fmt.Errorf("the configuration names %s %q, which the model file does not have (its %ss: %s)", kind, c.Name, kind, strings.Join(tensorNames(out), ", "))
		}
		f := out[i]
		if c.DataType != f.DataType {
			return nil, fmt.Errorf("%s %q: the configuration says %s, the model file says %s", kind, c.Name, c.DataType, f.DataType)
		}
		model := c.Dims // the shape the model file sees
		if c.Reshape != nil {
			model = c.Reshape
			pd, dd := fixedElements(c.Dims)
			pr, dr := fixedElements(c.Reshape)
			if dd > 1 || dr > 1 {
				return nil, fmt.Errorf("%s %q: dims %v and reshape %v may have one dynamic (-1) dimension each", kind, c.Name, c.Dims, c.Reshape)
			}
			// Both dynamic can hold the same elements; else the products agree.
			if dd != dr || (dd == 0 && pd != pr) {
				return nil, fmt.Errorf("%s %q: dims %v and reshape %v hold different numbers of elements", kind, c.Name, c.Dims, c.Reshape)
			}
		}
		if !dimsCompatible(model, f.Dims) {
			what := "dims"
			if c.Reshape != nil {
				what = "reshape"
			}
			hint := ""
			if m.Config.MaxBatchSize > 0 && len(model) == len(f.Dims)+1 && dimsCompatible(model[1:], f.Dims) {
				hint = fmt.Sprintf("; with max_batch_size %d the dims leave out the batch dimension: give %v", m.Config.MaxBatchSize, model[1:])
			}
			return nil, fmt.Errorf("%s %q: the configuration's %s %v do not match the model file's %v%s", kind, c.Name, what, model, f.Dims, hint)
		}
		out[i].Dims = slices.Clone(c.Dims)       // the configured dims may pin dynamic ones
		out[i].Reshape = slices.Clone(c.Reshape) // a scalar's empty reshape stays non-nil
	}
	return out, nil
}

func dimsCompatible(cfg, file []int64) bool {
	if len(cfg) != len(file) {
		return false
	}
	for i := range cfg {
		if file[i] != -1 && cfg[i] != file[i] {
			return false
		}
	}
	return true
}

// autoMaxBatch sets max_batch_size from the model file's tensors, as
// Triton auto-completes it: defaultMaxBatch (0: AutoMaxBatchSize) when
// every input and output has a dynamic first dimension (the batch
// dimension), else 0; a note says which and why.
func (m *Model) autoMaxBatch(ins, outs []TensorSpec, defaultMaxBatch int) {
	m.Config.MaxBatchSize = cmp.Or(defaultMaxBatch, AutoMaxBatchSize)
	why := "every input and output has a dynamic first dimension, so default_max_batch_size"
	for _, t := range append(slices.Clone(ins), outs...) {
		if len(t.Dims) == 0 || t.Dims[0] != -1 {
			m.Config.MaxBatchSize = 0
			why = fmt.Sprintf("%q has no dynamic first dimension", t.Name)
			break
		}
	}
	m.Notes = append(m.Notes, fmt.Sprintf("max_batch_size %d, from the model file: %s (as Triton auto-completes it); set max_batch_size to choose", m.Config.MaxBatchSize, why))
}
