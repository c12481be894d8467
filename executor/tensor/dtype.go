// Package tensor holds the tensors the executor moves: element types,
// batching along dimension 0 and decoding of request payloads.
package tensor

import (
	"errors"
	"fmt"
	"strings"
)

// DataType is a tensor element type, named as in the KServe v2 inference
// protocol ("FP32", "INT64", …).
type DataType string

// The KServe v2 tensor data types.
const (
	Bool   DataType = "BOOL"
	Uint8  DataType = "UINT8"
	Uint16 DataType = "UINT16"
	Uint32 DataType = "UINT32"
	Uint64 DataType = "UINT64"
	Int8   DataType = "INT8"
	Int16  DataType = "INT16"
	Int32  DataType = "INT32"
	Int64  DataType = "INT64"
	FP16   DataType = "FP16"
	BF16   DataType = "BF16"
	FP32   DataType = "FP32"
	FP64   DataType = "FP64"
	Bytes  DataType = "BYTES"
)

// ErrInvalidDataType is returned for a name that is not a KServe v2 data type.
var ErrInvalidDataType = errors.New("invalid data type")

// elementSize maps every valid data type to its size in bytes; BYTES
// elements have no fixed size (see BytesElements).
var elementSize = map[DataType]int{
	Bool:   1,
	Uint8:  1,
	Uint16: 2,
	Uint32: 4,
	Uint64: 8,
	Int8:   1,
	Int16:  2,
	Int32:  4,
	Int64:  8,
	FP16:   2,
	BF16:   2,
	FP32:   4,
	FP64:   8,
	Bytes:  0,
}

// DataTypes returns every valid data type, in the order of the KServe v2
// protocol's table.
func DataTypes() []DataType {
	return []DataType{Bool, Uint8, Uint16, Uint32, Uint64, Int8, Int16, Int32, Int64, FP16, BF16, FP32, FP64, Bytes}
}

// Valid reports whether d is one of the KServe v2 data types.
func (d DataType) Valid() bool {
	_, ok := elementSize[d]
	return ok
}

// Size returns the size of one element in bytes: 0 for BYTES, whose
// elements vary in length, and for an invalid type.
func (d DataType) Size() int {
	return elementSize[d]
}

// String returns the KServe v2 name.
func (d DataType) String() string {
	return string(d)
}

// ParseDataType returns the data type named s. Names are matched exactly
// after trimming spaces, as the protocol spells them in upper case.
func ParseDataType(s string) (DataType, error) {
	d := DataType(strings.TrimSpace(s))
	if !d.Valid() {
		return "", fmt.Errorf("parse data type %q: %w", s, ErrInvalidDataType)
	}
	return d, nil
}

// dataTypeAliases are the names other tools give the protocol's data
// types (NumPy's and PyTorch's dtypes, ONNX's element types, C's), lower
// case.
var dataTypeAliases = map[string]DataType{
	"bool": Bool, "boolean": Bool,
	"uint8": Uint8, "uint16": Uint16, "uint32": Uint32, "uint64": Uint64,
	"int8": Int8, "int16": Int16, "int32": Int32, "int64": Int64, "int": Int64, "long": Int64,
	"float16": FP16, "half": FP16, "fp16": FP16,
	"bfloat16": BF16, "bf16": BF16,
	"float32": FP32, "float": FP32, "fp32": FP32,
	"float64": FP64, "double": FP64, "fp64": FP64,
	"string": Bytes, "str": Bytes, "bytes": Bytes, "object": Bytes,
}

// SuggestDataType is the protocol's data type that s most likely means
// when it is not one: a name NumPy, PyTorch or ONNX give it (float32,
// torch.int64, FLOAT), Triton's TYPE_FP32, or the right name in another
// case. ok is false when s means none.
func SuggestDataType(s string) (DataType, bool) {
	name := strings.ToLower(strings.TrimSpace(s))
	name = strings.TrimPrefix(name, "type_")
	for _, prefix := range []string{"torch.", "np.", "numpy."} {
		name = strings.TrimPrefix(name, prefix)
	}
	if d := DataType(strings.ToUpper(name)); d.Valid() {
		return d, true
	}
	d, ok := dataTypeAliases[name]
	return d, ok
}
