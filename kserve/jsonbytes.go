package kserve

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/gpulet/gpuletd/executor/tensor"
)

// decodeStrings reads a JSON "data" value of a BYTES tensor — a flat or
// nested array of strings — into the tensor's length-prefixed elements,
// failing unless it holds exactly want of them.
func decodeStrings(raw []byte, want int64) ([]byte, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(raw))
	out := make([]byte, 0, len(raw)) // the elements take at most the JSON's bytes plus 4 per element
	var n int64
	depth := 0
	for {
		tok, err := dec.ReadToken()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("data: %s", jsonErr(err))
		}
		switch tok.Kind() {
		case '[':
			depth++
			if depth > MaxDataDepth {
				return nil, fmt.Errorf("data nests deeper than %d arrays", MaxDataDepth)
			}
		case ']':
			depth--
		case '"':
			if depth == 0 {
				return nil, fmt.Errorf("data must be an array")
			}
			n++
			if n > want {
				return nil, fmt.Errorf("data holds more than the %d values the shape asks for", want)
			}
			out = tensor.AppendBytesElement(out, []byte(tok.String()))
		default:
			if depth == 0 {
				return nil, fmt.Errorf("data must be an array")
			}
			return nil, fmt.Errorf("data value %d is %s, BYTES data holds strings", n, tok.Kind())
		}
	}
	if n != want {
		return nil, fmt.Errorf("data holds %d values, the shape asks for %d", n, want)
	}
	return out, nil
}

// encodeStrings turns a BYTES tensor's elements into JSON strings. JSON
// strings are UTF-8, so an element that is not must be asked for as binary
// data.
func encodeStrings(t tensor.Tensor) ([]string, error) {
	elems, err := tensor.BytesElements(t.Data)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(elems))
	for i, e := range elems {
		if !utf8.Valid(e) {
			return nil, fmt.Errorf(`%w: element %d is not UTF-8 text; ask for it as binary data (output parameters {"binary_data": true})`, ErrNotJSON, i)
		}
		out[i] = string(e)
	}
	return out, nil
}
