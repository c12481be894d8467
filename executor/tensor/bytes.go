package tensor

import (
	"encoding/binary"
	"fmt"
	"math"
)

// A BYTES tensor's Data is its elements in the protocol's binary form: each
// element is a 4-byte little-endian length followed by that many bytes, in
// row-major order. Joining tensors along dimension 0 is then joining their
// Data, as for the fixed-size types.

// AppendBytesElement appends one BYTES element to dst.
func AppendBytesElement(dst, elem []byte) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(elem)))
	return append(dst, elem...)
}

// BytesElements splits a BYTES tensor's data into its elements, views of
// data.
func BytesElements(data []byte) ([][]byte, error) {
	n, err := countBytesElements(data)
	if err != nil {
		return nil, err
	}
	out := make([][]byte, 0, n)
	for len(data) > 0 {
		l := int(binary.LittleEndian.Uint32(data))
		out = append(out, data[4:4+l:4+l])
		data = data[4+l:]
	}
	return out, nil
}

// countBytesElements counts the elements in BYTES data, refusing data that
// ends inside an element.
func countBytesElements(data []byte) (int64, error) {
	var n int64
	for off := 0; off < len(data); n++ {
		if len(data)-off < 4 {
			return 0, fmt.Errorf("%w: BYTES element %d: %d bytes left, its 4-byte length needs 4", ErrInvalid, n, len(data)-off)
		}
		l := uint64(binary.LittleEndian.Uint32(data[off:]))
		if l > uint64(len(data)-off-4) || l > math.MaxInt32 {
			return 0, fmt.Errorf("%w: BYTES element %d is %d bytes long, only %d follow", ErrInvalid, n, l, len(data)-off-4)
		}
		off += 4 + int(l)
	}
	return n, nil
}

// bytesOffset returns the byte offset of element k of BYTES data that holds
// at least k elements.
func bytesOffset(data []byte, k int64) int {
	off := 0
	for range k {
		off += 4 + int(binary.LittleEndian.Uint32(data[off:]))
	}
	return off
}
