package engine

import (
	"fmt"
	"reflect"
	"slices"
	"unsafe"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/gpulet/gpuletd/executor/tensor"
)

// ortTypes maps KServe data types to ONNX Runtime element types.
var ortTypes = map[tensor.DataType]ort.TensorElementDataType{
	tensor.Bool:   ort.TensorElementDataTypeBool,
	tensor.Uint8:  ort.TensorElementDataTypeUint8,
	tensor.Uint16: ort.TensorElementDataTypeUint16,
	tensor.Uint32: ort.TensorElementDataTypeUint32,
	tensor.Uint64: ort.TensorElementDataTypeUint64,
	tensor.Int8:   ort.TensorElementDataTypeInt8,
	tensor.Int16:  ort.TensorElementDataTypeInt16,
	tensor.Int32:  ort.TensorElementDataTypeInt32,
	tensor.Int64:  ort.TensorElementDataTypeInt64,
	tensor.FP16:   ort.TensorElementDataTypeFloat16,
	tensor.FP32:   ort.TensorElementDataTypeFloat,
	tensor.FP64:   ort.TensorElementDataTypeDouble,
}

// newValue wraps t's bytes, without copying them unless they are not
// aligned to the element size, in an ONNX Runtime tensor. The value holds
// on to the bytes until it is destroyed.
func newValue(t tensor.Tensor) (*ort.CustomDataTensor, error) {
	dt, ok := ortTypes[t.DataType]
	if !ok {
		return nil, fmt.Errorf("tensor %q: %w: %s", t.Name, tensor.ErrUnsupported, t.DataType)
	}
	data := t.Data
	if len(data) > 0 && uintptr(unsafe.Pointer(&data[0]))%uintptr(t.DataType.Size()) != 0 {
		data = slices.Clone(data)
	}
	v, err := ort.NewCustomDataTensor(ort.NewShape(t.Shape...), data, dt)
	if err != nil {
		return nil, fmt.Errorf("tensor %q: %s", t.Name, oneLine(err))
	}
	return v, nil
}

// valueBytes returns the shape and little-endian bytes of a value
// onnxruntime_go allocated for an output. Its data is Go memory that
// outlives the value.
func valueBytes(v ort.Value) ([]int64, []byte, error) {
	shape := []int64(v.GetShape())
	var data []byte
	switch t := v.(type) {
	case *ort.CustomDataTensor:
		data = t.GetData()
	case *ort.Tensor[float32]:
		data = asBytes(t.GetData())
	case *ort.Tensor[float64]:
		data = asBytes(t.GetData())
	case *ort.Tensor[int8]:
		data = asBytes(t.GetData())
	case *ort.Tensor[uint8]:
		data = t.GetData()
	case *ort.Tensor[int16]:
		data = asBytes(t.GetData())
	case *ort.Tensor[uint16]:
		data = asBytes(t.GetData())
	case *ort.Tensor[int32]:
		data = asBytes(t.GetData())
	case *ort.Tensor[uint32]:
		data = asBytes(t.GetData())
	case *ort.Tensor[int64]:
		data = asBytes(t.GetData())
	case *ort.Tensor[uint64]:
		data = asBytes(t.GetData())
	case *ort.Tensor[bool]:
		data = asBytes(t.GetData())
	default:
		return nil, nil, fmt.Errorf("%w: output value %T", tensor.ErrUnsupported, v)
	}
	return shape, data, nil
}

// asBytes views a slice of fixed-size values as its bytes (the host is
// little-endian, which NewORT checks).
func asBytes[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(zero)))
}

// destroyAll releases runtime values, skipping nils. A failed run can
// leave a typed nil pointer in an output slot (onnxruntime_go stores the
// result of a failed conversion), so nil pointers are skipped too.
func destroyAll(vs []ort.Value) {
	for _, v := range vs {
		if v == nil {
			continue
		}
		if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && rv.IsNil() {
			continue
		}
		_ = v.Destroy()
	}
}
