package executor

import (
	"fmt"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/executor/tensor"
)

// fromProto decodes the tensors of a request, checking each against its
// declared type and shape (tensor.New never trusts the shape to size
// anything). Names must be unique.
func fromProto(ts []*pb.Tensor) ([]tensor.Tensor, error) {
	out := make([]tensor.Tensor, len(ts))
	seen := make(map[string]bool, len(ts))
	for i, t := range ts {
		if t == nil || t.Name == "" {
			return nil, fmt.Errorf("input %d has no name", i)
		}
		if seen[t.Name] {
			return nil, fmt.Errorf("input %q given twice", t.Name)
		}
		seen[t.Name] = true
		dt, err := tensor.ParseDataType(t.Datatype)
		if err != nil {
			return nil, fmt.Errorf("input %q: %w", t.Name, err)
		}
		x, err := tensor.New(t.Name, dt, t.Shape, t.Data)
		if err != nil {
			return nil, err
		}
		out[i] = x
	}
	return out, nil
}

// toProto encodes tensors for a response.
func toProto(ts []tensor.Tensor) []*pb.Tensor {
	out := make([]*pb.Tensor, len(ts))
	for i, t := range ts {
		out[i] = &pb.Tensor{Name: t.Name, Datatype: string(t.DataType), Shape: t.Shape, Data: t.Data}
	}
	return out
}

// rowsOf returns the batch dimension shared by every input of a request to a
// batching model.
func rowsOf(inputs []tensor.Tensor) (int64, error) {
	var n int64 = -1
	for _, t := range inputs {
		if len(t.Shape) == 0 {
			return 0, fmt.Errorf("input %q is a scalar but the model batches: dimension 0 is the batch", t.Name)
		}
		switch {
		case n == -1:
			n = t.Shape[0]
		case t.Shape[0] != n:
			return 0, fmt.Errorf("inputs disagree on the batch dimension: %q has %d rows, another has %d", t.Name, t.Shape[0], n)
		}
	}
	if n < 1 {
		return 0, fmt.Errorf("a request needs at least one row (dimension 0 is %d)", n)
	}
	return n, nil
}

// splitRows cuts every input of a request into single rows.
func splitRows(inputs []tensor.Tensor, rows int64) ([][]tensor.Tensor, error) {
	ones := make([]int64, rows)
	for i := range ones {
		ones[i] = 1
	}
	out := make([][]tensor.Tensor, rows)
	for i := range out {
		out[i] = make([]tensor.Tensor, len(inputs))
	}
	for j, t := range inputs {
		parts, err := tensor.Split(t, ones)
		if err != nil {
			return nil, err
		}
		for i, p := range parts {
			out[i][j] = p
		}
	}
	return out, nil
}

// joinRows concatenates per-row outputs back into one response.
func joinRows(rows [][]tensor.Tensor) ([]tensor.Tensor, error) {
	if len(rows) == 1 {
		return rows[0], nil
	}
	out := make([]tensor.Tensor, len(rows[0]))
	for j := range out {
		parts := make([]tensor.Tensor, len(rows))
		for i := range rows {
			parts[i] = rows[i][j]
		}
		t, err := tensor.Concat(rows[0][j].Name, parts)
		if err != nil {
			return nil, err
		}
		out[j] = t
	}
	return out, nil
}
