package tensor

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// ErrInvalid is wrapped by every error about a tensor that does not hold
// together: a bad shape, a byte length that does not match it, mixed types
// in a batch.
var ErrInvalid = errors.New("invalid tensor")

// ErrUnsupported is returned for a data type or a value an engine cannot
// run.
var ErrUnsupported = errors.New("unsupported data type")

// MaxElements bounds the elements of one tensor (2^31), so that a declared
// shape can never ask for more memory than a request body could carry.
const MaxElements = 1 << 31

// Tensor is a dense, row-major tensor whose elements are stored little-endian
// in Data.
type Tensor struct {
	Name     string
	DataType DataType
	Shape    []int64
	Data     []byte
}

// New checks that data holds exactly the elements shape asks for and returns
// the tensor. It never trusts the shape to size an allocation.
func New(name string, dt DataType, shape []int64, data []byte) (Tensor, error) {
	t := Tensor{Name: name, DataType: dt, Shape: shape, Data: data}
	return t, t.Check()
}

// Check validates the tensor: a valid data type, non-negative dims whose
// product stays within MaxElements, and data that holds exactly that many
// elements.
func (t Tensor) Check() error {
	if !t.DataType.Valid() {
		return fmt.Errorf("check tensor %q: %w: %q", t.Name, ErrInvalidDataType, t.DataType)
	}
	n, err := NumElements(t.Shape)
	if err != nil {
		return fmt.Errorf("check tensor %q: %w", t.Name, err)
	}
	size := t.DataType.Size()
	if size == 0 {
		got, err := countBytesElements(t.Data)
		if err != nil {
			return fmt.Errorf("check tensor %q: %w", t.Name, err)
		}
		if got != n {
			return fmt.Errorf("check tensor %q: %w: shape %v needs %d BYTES elements, got %d", t.Name, ErrInvalid, t.Shape, n, got)
		}
		return nil
	}
	if want := n * int64(size); int64(len(t.Data)) != want {
		return fmt.Errorf("check tensor %q: %w: shape %v of %s needs %d bytes, got %d", t.Name, ErrInvalid, t.Shape, t.DataType, want, len(t.Data))
	}
	return nil
}

// NumElements returns the product of the dims, refusing negative dims and
// products above MaxElements.
func NumElements(shape []int64) (int64, error) {
	n := uint64(1)
	for i, d := range shape {
		if d < 0 {
			return 0, fmt.Errorf("%w: dimension %d is %d", ErrInvalid, i, d)
		}
		hi, lo := bits.Mul64(n, uint64(d))
		if hi != 0 || lo > MaxElements {
			return 0, fmt.Errorf("%w: shape %v has more than %d elements", ErrInvalid, shape, int64(MaxElements))
		}
		n = lo
	}
	return int64(n), nil
}

// Concat joins tensors along dimension 0. All parts must share the data type
// and the dims after the first.
func Concat(name string, parts []Tensor) (Tensor, error) {
	if len(parts) == 0 {
		return Tensor{}, fmt.Errorf("concat %q: %w: no parts", name, ErrInvalid)
	}
	first := parts[0]
	if len(first.Shape) == 0 {
		return Tensor{}, fmt.Errorf("concat %q: %w: a scalar has no batch dimension", name, ErrInvalid)
	}
	var rows int64
	total := 0
	for i, p := range parts {
		if p.DataType != first.DataType {
			return Tensor{}, fmt.Errorf("concat %q: %w: part %d is %s, part 0 is %s", name, ErrInvalid, i, p.DataType, first.DataType)
		}
		if len(p.Shape) != len(first.Shape) || !slices.Equal(p.Shape[1:], first.Shape[1:]) {
			return Tensor{}, fmt.Errorf("concat %q: %w: part %d has shape %v, part 0 has %v", name, ErrInvalid, i, p.Shape, first.Shape)
		}
		rows += p.Shape[0]
		total += len(p.Data)
	}
	data := make([]byte, 0, total)
	for _, p := range parts {
		data = append(data, p.Data...)
	}
	shape := slices.Clone(first.Shape)
	shape[0] = rows
	return New(name, first.DataType, shape, data)
}

// Split cuts a tensor along dimension 0 into parts of the given row counts,
// which must add up to its first dimension. The parts share t's memory.
func Split(t Tensor, rows []int64) ([]Tensor, error) {
	if len(t.Shape) == 0 {
		return nil, fmt.Errorf("split %q: %w: a scalar has no batch dimension", t.Name, ErrInvalid)
	}
	var sum int64
	for _, r := range rows {
		if r < 0 {
			return nil, fmt.Errorf("split %q: %w: negative row count %d", t.Name, ErrInvalid, r)
		}
		sum += r
	}
	if sum != t.Shape[0] {
		return nil, fmt.Errorf("split %q: %w: rows add up to %d, dimension 0 is %d", t.Name, ErrInvalid, sum, t.Shape[0])
	}
	if sum == 0 {
		out := make([]Tensor, len(rows))
		for i := range out {
			out[i] = Tensor{Name: t.Name, DataType: t.DataType, Shape: slices.Clone(t.Shape), Data: nil}
		}
		return out, nil
	}
	rowBytes := int64(len(t.Data)) / t.Shape[0]
	rowElems := int64(1)
	if t.DataType.Size() == 0 {
		if err := t.Check(); err != nil {
			return nil, fmt.Errorf("split %q: %w", t.Name, err)
		}
		n, _ := NumElements(t.Shape)
		rowElems = n / t.Shape[0]
	}
	out := make([]Tensor, len(rows))
	var off int64
	for i, r := range rows {
		shape := slices.Clone(t.Shape)
		shape[0] = r
		end := off + r*rowBytes
		if t.DataType.Size() == 0 { // BYTES: rows differ in length
			end = off + int64(bytesOffset(t.Data[off:], r*rowElems))
		}
		out[i] = Tensor{Name: t.Name, DataType: t.DataType, Shape: shape, Data: t.Data[off:end:end]}
		off = end
	}
	return out, nil
}

// Zeros returns a zero-filled tensor of the given type and shape.
func Zeros(name string, dt DataType, shape []int64) (Tensor, error) {
	n, err := NumElements(shape)
	if err != nil {
		return Tensor{}, fmt.Errorf("zeros %q: %w", name, err)
	}
	if dt.Size() == 0 { // BYTES: n empty elements, each a zero length
		return New(name, dt, slices.Clone(shape), make([]byte, 4*n))
	}
	return New(name, dt, slices.Clone(shape), make([]byte, n*int64(dt.Size())))
}

// MatchShape checks a request's shape against a spec's dims, where -1 in the
// spec accepts any size.
func MatchShape(shape, spec []int64) bool {
	if len(shape) != len(spec) {
		return false
	}
	for i := range spec {
		if spec[i] != -1 && spec[i] != shape[i] {
			return false
		}
	}
	return true
}

// Float32s views FP32 data as float32 values (a copy, for tests and tools).
func (t Tensor) Float32s() ([]float32, error) {
	if t.DataType != FP32 {
		return nil, fmt.Errorf("read %q as float32: %w: it is %s", t.Name, ErrInvalid, t.DataType)
	}
	out := make([]float32, len(t.Data)/4)
	for i := range out {
		b := t.Data[4*i:]
		out[i] = math.Float32frombits(uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24)
	}
	return out, nil
}

// FromFloat32s builds an FP32 tensor from values.
func FromFloat32s(name string, shape []int64, vals []float32) (Tensor, error) {
	data := make([]byte, 4*len(vals))
	for i, v := range vals {
		u := math.Float32bits(v)
		data[4*i], data[4*i+1], data[4*i+2], data[4*i+3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
	}
	return New(name, FP32, slices.Clone(shape), data)
}
