package kserve

import (
	"strconv"
	"strings"

	"github.com/gpulet/gpuletd/executor/tensor"
)

// TensorText writes a tensor's values as Triton's trace files hold a
// traced tensor's data: comma-separated in row-major order, floats in the
// fewest digits that read back the same value (NaN and ±Inf as such),
// BOOL as 0 and 1, and BYTES elements as text (bytes that are not UTF-8
// replaced).
func TensorText(t tensor.Tensor) (string, error) {
	if t.DataType == tensor.Bytes {
		elems, err := tensor.BytesElements(t.Data)
		if err != nil {
			return "", err
		}
		parts := make([]string, len(elems))
		for i, e := range elems {
			parts[i] = strings.ToValidUTF8(string(e), "\uFFFD")
		}
		return strings.Join(parts, ","), nil
	}
	vals, err := elements(t)
	if err != nil {
		return "", err
	}
	var b []byte
	sep := func(i int) {
		if i > 0 {
			b = append(b, ',')
		}
	}
	switch v := vals.(type) {
	case []bool:
		for i, x := range v {
			sep(i)
			b = append(b, byte('0'+boolInt(x)))
		}
	case []float32:
		for i, x := range v {
			sep(i)
			b = strconv.AppendFloat(b, float64(x), 'g', -1, 32)
		}
	case []float64:
		for i, x := range v {
			sep(i)
			b = strconv.AppendFloat(b, x, 'g', -1, 64)
		}
	case []int64:
		for i, x := range v {
			sep(i)
			b = strconv.AppendInt(b, x, 10)
		}
	case []uint64:
		for i, x := range v {
			sep(i)
			b = strconv.AppendUint(b, x, 10)
		}
	}
	return string(b), nil
}

// ShapeText writes a shape as Triton's trace files do: "1,16".
func ShapeText(shape []int64) string {
	parts := make([]string, len(shape))
	for i, d := range shape {
		parts[i] = strconv.FormatInt(d, 10)
	}
	return strings.Join(parts, ",")
}
