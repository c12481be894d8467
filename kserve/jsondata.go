package kserve

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"unsafe"

	"github.com/gpulet/gpuletd/executor/tensor"
)

// MaxDataDepth bounds how deeply "data" arrays may nest. Tensors have at
// most MaxRank dimensions, so deeper nesting is malformed input.
const MaxDataDepth = MaxRank + 1

// MaxRank bounds the rank of a tensor.
const MaxRank = 16

// decodeData reads a JSON "data" value — a flat or nested array of numbers
// (true/false for BOOL, strings for BYTES) — into little-endian bytes of dt. It counts the
// values it actually finds and fails unless they are exactly want; it never
// allocates from the declared shape alone (capacity grows with the values
// present).
func decodeData(raw []byte, dt tensor.DataType, want int64) ([]byte, error) {
	size := dt.Size()
	if size == 0 {
		return decodeStrings(raw, want)
	}
	// At most one value per two bytes of JSON ("1,"), so this bounds the
	// allocation by the body, not by the shape.
	capHint := min(want, int64(len(raw)/2+1)) * int64(size)
	out := make([]byte, 0, capHint)
	var n int64
	depth := 0
	i := 0
	skipSpace := func() {
		for i < len(raw) && (raw[i] == ' ' || raw[i] == '\n' || raw[i] == '\t' || raw[i] == '\r') {
			i++
		}
	}
	skipSpace()
	if i >= len(raw) || raw[i] != '[' {
		return nil, fmt.Errorf("data must be an array")
	}
	expectValue := true // after '[' or ','
	for i < len(raw) {
		skipSpace()
		if i >= len(raw) {
			break
		}
		c := raw[i]
		switch {
		case c == '[':
			if !expectValue {
				return nil, fmt.Errorf("data: unexpected '[' at byte %d", i)
			}
			depth++
			if depth > MaxDataDepth {
				return nil, fmt.Errorf("data nests deeper than %d arrays", MaxDataDepth)
			}
			i++
		case c == ']':
			if depth == 0 {
				return nil, fmt.Errorf("data: unbalanced ']' at byte %d", i)
			}
			depth--
			i++
			expectValue = false
			if depth == 0 {
				skipSpace()
				if i != len(raw) {
					return nil, fmt.Errorf("data: unexpected content after the array at byte %d", i)
				}
			}
		case c == ',':
			if expectValue {
				return nil, fmt.Errorf("data: unexpected ',' at byte %d", i)
			}
			i++
			expectValue = true
		default:
			if !expectValue {
				return nil, fmt.Errorf("data: missing ',' at byte %d", i)
			}
			j := i
			for j < len(raw) && raw[j] != ',' && raw[j] != ']' && raw[j] != ' ' && raw[j] != '\n' && raw[j] != '\t' && raw[j] != '\r' {
				j++
			}
			n++
			if n > want {
				return nil, fmt.Errorf("data holds more than the %d values the shape asks for", want)
			}
			var err error
			if out, err = appendValue(out, dt, raw[i:j]); err != nil {
				return nil, fmt.Errorf("data value %d: %w", n-1, err)
			}
			i = j
			expectValue = false
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("data: unterminated array")
	}
	if n != want {
		return nil, fmt.Errorf("data holds %d values, the shape asks for %d", n, want)
	}
	return out, nil
}

// appendValue parses one JSON scalar as dt and appends its bytes.
func appendValue(out []byte, dt tensor.DataType, tok []byte) ([]byte, error) {
	// A view of tok, not a copy: the strconv parsers only read it during the
	// call, and it is copied (string(tok)) before it goes into an error.
	s := unsafe.String(unsafe.SliceData(tok), len(tok))
	switch dt {
	case tensor.Bool:
		switch s {
		case "true":
			return append(out, 1), nil
		case "false":
			return append(out, 0), nil
		}
		return nil, fmt.Errorf("%q is not true or false", string(tok))
	case tensor.FP32:
		if f, ok := fastFloat32(tok); ok {
			return binary.LittleEndian.AppendUint32(out, math.Float32bits(f)), nil
		}
		f, err := strconv.ParseFloat(s, 32)
		if err != nil || !isJSONNumber(tok) {
			return nil, fmt.Errorf("%q is not a number", string(tok))
		}
		return binary.LittleEndian.AppendUint32(out, math.Float32bits(float32(f))), nil
	case tensor.FP64:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || !isJSONNumber(tok) {
			return nil, fmt.Errorf("%q is not a number", string(tok))
		}
		return binary.LittleEndian.AppendUint64(out, math.Float64bits(f)), nil
	case tensor.FP16:
		f, err := strconv.ParseFloat(s, 32)
		if err != nil || !isJSONNumber(tok) {
			return nil, fmt.Errorf("%q is not a number", string(tok))
		}
		return binary.LittleEndian.AppendUint16(out, float32ToHalf(float32(f))), nil
	case tensor.BF16:
		f, err := strconv.ParseFloat(s, 32)
		if err != nil || !isJSONNumber(tok) {
			return nil, fmt.Errorf("%q is not a number", string(tok))
		}
		return binary.LittleEndian.AppendUint16(out, float32ToBF16(float32(f))), nil
	case tensor.Int8, tensor.Int16, tensor.Int32, tensor.Int64:
		bitsz := dt.Size() * 8
		v, err := strconv.ParseInt(s, 10, bitsz)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer that fits %s", string(tok), dt)
		}
		return appendUint(out, uint64(v), dt.Size()), nil
	case tensor.Uint8, tensor.Uint16, tensor.Uint32, tensor.Uint64:
		v, err := strconv.ParseUint(s, 10, dt.Size()*8)
		if err != nil {
			return nil, fmt.Errorf("%q is not an unsigned integer that fits %s", string(tok), dt)
		}
		return appendUint(out, v, dt.Size()), nil
	}
	return nil, fmt.Errorf("%w: %s", tensor.ErrUnsupported, dt)
}

func appendUint(out []byte, v uint64, size int) []byte {
	for k := 0; k < size; k++ {
		out = append(out, byte(v>>(8*k)))
	}
	return out
}

// isJSONNumber rejects what strconv accepts but JSON does not (Inf, NaN,
// hex, underscores, a leading '+').
func isJSONNumber(tok []byte) bool {
	for _, c := range tok {
		if !(c >= '0' && c <= '9' || c == '-' || c == '.' || c == 'e' || c == 'E' || c == '+') {
			return false
		}
	}
	return len(tok) > 0 && tok[0] != '+'
}

// checkJSONValues says whether t's values (not BYTES: encodeStrings checks
// those) can be sent as JSON: not NaN or infinity.
func checkJSONValues(t tensor.Tensor) error {
	// A value is NaN or infinite when its exponent bits are all set.
	var exp uint64
	switch t.DataType {
	case tensor.FP32:
		exp = 0x7f800000
	case tensor.FP64:
		exp = 0x7ff0000000000000
	case tensor.FP16:
		exp = 0x7c00
	case tensor.BF16:
		exp = 0x7f80
	default:
		return nil
	}
	size := t.DataType.Size()
	for i := range len(t.Data) / size {
		if uintAt(t.Data, i, size)&exp == exp {
			return fmt.Errorf(`%w: it holds NaN or infinity; ask for it as binary data (output parameters {"binary_data": true})`, ErrNotJSON)
		}
	}
	return nil
}

// appendJSONValues appends t's values from..to-1 (not BYTES) to out as
// JSON, comma-separated, with a comma first unless from is 0: booleans,
// integers, and floats written as encoding/json writes them (the fewest
// digits that read back the same value; exponent form below 1e-6 and from
// 1e21, its exponent without a leading zero), FP16 and BF16 as the float32
// they widen to.
func appendJSONValues(out []byte, t tensor.Tensor, from, to int) []byte {
	size := t.DataType.Size()
	d := t.Data
	for i := from; i < to; i++ {
		if i > 0 {
			out = append(out, ',')
		}
		switch t.DataType {
		case tensor.Bool:
			if d[i] != 0 {
				out = append(out, "true"...)
			} else {
				out = append(out, "false"...)
			}
		case tensor.FP64:
			out = appendJSONFloat(out, math.Float64frombits(binary.LittleEndian.Uint64(d[8*i:])), 64)
		case tensor.FP32, tensor.FP16, tensor.BF16:
			out = appendJSONFloat(out, float64(float32At(t, i)), 32)
		case tensor.Int8, tensor.Int16, tensor.Int32, tensor.Int64:
			out = strconv.AppendInt(out, intAt(d, i, size), 10)
		default: // unsigned
			out = strconv.AppendUint(out, uintAt(d, i, size), 10)
		}
	}
	return out
}

// float32At is element i of t, an FP32, FP16 or BF16 tensor, as a float32
// (the halves widened exactly).
func float32At(t tensor.Tensor, i int) float32 {
	switch t.DataType {
	case tensor.FP16:
		return halfToFloat32(binary.LittleEndian.Uint16(t.Data[2*i:]))
	case tensor.BF16:
		return math.Float32frombits(uint32(binary.LittleEndian.Uint16(t.Data[2*i:])) << 16)
	}
	return math.Float32frombits(binary.LittleEndian.Uint32(t.Data[4*i:]))
}

// uintAt is element i of d, little-endian unsigned integers of size bytes.
func uintAt(d []byte, i, size int) uint64 {
	var u uint64
	for k := 0; k < size; k++ {
		u |= uint64(d[size*i+k]) << (8 * k)
	}
	return u
}

// intAt is element i of d, little-endian signed integers of size bytes.
func intAt(d []byte, i, size int) int64 {
	shift := 64 - 8*size
	return int64(uintAt(d, i, size)<<shift) >> shift // sign-extended
}

// appendJSONFloat appends finite f, a float of bits bits, as encoding/json
// writes it.
func appendJSONFloat(out []byte, f float64, bits int) []byte {
	format := byte('f')
	if a := math.Abs(f); a != 0 {
		// A float32 is compared with the bounds as float32 values.
		if bits == 64 && (a < 1e-6 || a >= 1e21) || bits == 32 && (float32(a) < 1e-6 || float32(a) >= 1e21) {
			format = 'e'
		}
	}
	out = strconv.AppendFloat(out, f, format, -1, bits)
	if n := len(out); format == 'e' && n >= 4 && out[n-4] == 'e' && out[n-3] == '-' && out[n-2] == '0' {
		// e-07 is written e-7.
		out[n-2] = out[n-1]
		out = out[:n-1]
	}
	return out
}

// elements turns a tensor's bytes into a flat slice of its values: bool,
// float32 (FP32, FP16, BF16), float64, int64, uint64 or string.
func elements(t tensor.Tensor) (any, error) {
	size := t.DataType.Size()
	if size == 0 {
		return encodeStrings(t)
	}
	n := len(t.Data) / size
	d := t.Data
	switch t.DataType {
	case tensor.Bool:
		out := make([]bool, n)
		for i := range out {
			out[i] = d[i] != 0
		}
		return out, nil
	case tensor.FP64:
		out := make([]float64, n)
		for i := range out {
			out[i] = math.Float64frombits(binary.LittleEndian.Uint64(d[8*i:]))
		}
		return out, nil
	case tensor.FP32, tensor.FP16, tensor.BF16:
		out := make([]float32, n)
		for i := range out {
			out[i] = float32At(t, i)
		}
		return out, nil
	case tensor.Int8, tensor.Int16, tensor.Int32, tensor.Int64:
		out := make([]int64, n)
		for i := range out {
			out[i] = intAt(d, i, size)
		}
		return out, nil
	default: // unsigned
		out := make([]uint64, n)
		for i := range out {
			out[i] = uintAt(d, i, size)
		}
		return out, nil
	}
}

// float32pow10 are the powers of ten a float32 holds exactly.
var float32pow10 = [...]float32{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10}

// fastFloat32 parses the common short decimals ("-0.123456", "42", "1.5")
// without strconv: when the digits form an integer m < 2^24 and the decimal
// exponent is at most 10, m and 10^k are exact float32 values and one
// division (or multiplication) rounds correctly, which is the exact result
// strconv would give. Anything else (exponents, long mantissas) reports
// false and goes to strconv.
func fastFloat32(tok []byte) (float32, bool) {
	i, neg := 0, false
	if len(tok) > 0 && tok[0] == '-' {
		neg, i = true, 1
	}
	if i == len(tok) {
		return 0, false
	}
	var m uint32
	digits, frac, dot := 0, 0, false
	for ; i < len(tok); i++ {
		c := tok[i]
		switch {
		case c >= '0' && c <= '9':
			if digits > 0 || c != '0' {
				digits++
			}
			if digits > 7 {
				return 0, false
			}
			m = m*10 + uint32(c-'0')
			if dot {
				frac++
			}
		case c == '.' && !dot:
			dot = true
		default:
			return 0, false
		}
	}
	if m >= 1<<24 || frac > 10 || (dot && tok[len(tok)-1] == '.') || tok[boolInt(neg)] == '.' {
		return 0, false
	}
	// JSON forbids leading zeros such as "01"; leave those to strconv, which
	// the caller's isJSONNumber check then refuses.
	if len(tok) > 1+boolInt(neg) && tok[boolInt(neg)] == '0' && tok[1+boolInt(neg)] != '.' {
		return 0, false
	}
	f := float32(m) / float32pow10[frac]
	if neg {
		f = -f
	}
	return f, true
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
