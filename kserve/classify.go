package kserve

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/gpulet/gpuletd/executor/tensor"
)

// ParamClassification is the output parameter of Triton's classification
// extension: the number of classes to answer with instead of the tensor.
const ParamClassification = "classification"

// ErrNotClassifiable is an output that classification cannot read: not
// numeric, or without elements.
var ErrNotClassifiable = errors.New("output cannot be classified")

// Classify answers an output with its k highest-valued elements of every
// row (Triton's classification extension): a BYTES tensor of shape
// [rows, k] for a batched model, [k] otherwise, each element
// "<value>:<index>" or "<value>:<index>:<label>" when labels (the output's
// label file, line by line) has one for the index. Elements compare by the
// output's own data type, equal values by index; a row of fewer than k
// elements answers with all of them, highest first. Every element after
// the batch dimension is one class.
func Classify(t tensor.Tensor, k int, batched bool, labels []string) (tensor.Tensor, error) {
	if k < 1 {
		return tensor.Tensor{}, fmt.Errorf("%w: %s must be at least 1, not %d", ErrBadRequest, ParamClassification, k)
	}
	size := t.DataType.Size()
	if size == 0 || t.DataType == tensor.Bool {
		return tensor.Tensor{}, fmt.Errorf("%w: %q is %s; classes are read from numbers", ErrNotClassifiable, t.Name, t.DataType)
	}
	n, err := tensor.NumElements(t.Shape)
	if err != nil {
		return tensor.Tensor{}, err
	}
	rows := int64(1)
	if batched && len(t.Shape) > 0 {
		rows = t.Shape[0]
	}
	if rows == 0 {
		return tensor.New(t.Name, tensor.Bytes, []int64{0, int64(k)}, nil)
	}
	per := n / rows
	if per == 0 {
		return tensor.Tensor{}, fmt.Errorf("%w: %q has no elements per row", ErrNotClassifiable, t.Name)
	}
	keep := min(int64(k), per)
	var data []byte
	rowBytes := per * int64(size)
	for r := range rows {
		top, text := classifyRow(t.DataType, t.Data[r*rowBytes:(r+1)*rowBytes])
		for _, i := range top[:keep] {
			elem := text(i) + ":" + strconv.Itoa(i)
			if i < len(labels) && labels[i] != "" {
				elem += ":" + labels[i]
			}
			data = tensor.AppendBytesElement(data, []byte(elem))
		}
	}
	shape := []int64{keep}
	if batched {
		shape = []int64{rows, keep}
	}
	return tensor.New(t.Name, tensor.Bytes, shape, data)
}

// classifyRow orders a row's element indexes from the highest value down
// and says how each value is written.
func classifyRow(dt tensor.DataType, row []byte) (order []int, text func(int) string) {
	le := binary.LittleEndian
	switch dt {
	case tensor.Uint8:
		return ranked(decode(row, 1, func(b []byte) uint64 { return uint64(b[0]) }), formatUint)
	case tensor.Uint16:
		return ranked(decode(row, 2, func(b []byte) uint64 { return uint64(le.Uint16(b)) }), formatUint)
	case tensor.Uint32:
		return ranked(decode(row, 4, func(b []byte) uint64 { return uint64(le.Uint32(b)) }), formatUint)
	case tensor.Uint64:
		return ranked(decode(row, 8, le.Uint64), formatUint)
	case tensor.Int8:
		return ranked(decode(row, 1, func(b []byte) int64 { return int64(int8(b[0])) }), formatInt)
	case tensor.Int16:
		return ranked(decode(row, 2, func(b []byte) int64 { return int64(int16(le.Uint16(b))) }), formatInt)
	case tensor.Int32:
		return ranked(decode(row, 4, func(b []byte) int64 { return int64(int32(le.Uint32(b))) }), formatInt)
	case tensor.Int64:
		return ranked(decode(row, 8, func(b []byte) int64 { return int64(le.Uint64(b)) }), formatInt)
	case tensor.FP16:
		return ranked(decode(row, 2, func(b []byte) float64 { return float64(halfToFloat32(le.Uint16(b))) }), formatFloat)
	case tensor.BF16:
		return ranked(decode(row, 2, func(b []byte) float64 {
			return float64(math.Float32frombits(uint32(le.Uint16(b)) << 16))
		}), formatFloat)
	case tensor.FP32:
		return ranked(decode(row, 4, func(b []byte) float64 { return float64(math.Float32frombits(le.Uint32(b))) }), formatFloat)
	default: // FP64; Classify refuses the others
		return ranked(decode(row, 8, func(b []byte) float64 { return math.Float64frombits(le.Uint64(b)) }), formatFloat)
	}
}

// decode reads a row's elements of size bytes each.
func decode[T any](row []byte, size int, read func([]byte) T) []T {
	out := make([]T, len(row)/size)
	for i := range out {
		out[i] = read(row[i*size:])
	}
	return out
}

// ranked orders vals' indexes by value, highest first (NaN last), equal
// values by index, and writes a value with format.
func ranked[T cmp.Ordered](vals []T, format func(T) string) ([]int, func(int) string) {
	order := make([]int, len(vals))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(vals[b], vals[a]) })
	return order, func(i int) string { return format(vals[i]) }
}

func formatUint(v uint64) string { return strconv.FormatUint(v, 10) }

func formatInt(v int64) string { return strconv.FormatInt(v, 10) }

// formatFloat writes six decimals, as Triton's classification strings do.
func formatFloat(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }
