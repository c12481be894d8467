package kserve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/gpulet/gpuletd/executor/tensor"
)

// Output is one output tensor to send and how it travels: as JSON, as
// binary data, or (Shm) already written into a shared-memory region, the
// answer carrying only its place.
type Output struct {
	Tensor tensor.Tensor
	Binary bool
	Shm    *ShmRef
}

// Response is an inference response ready to be written: its JSON with
// the data of the outputs sent as JSON still to be formatted (an answer of
// millions of values is formatted as it is written, not held whole as
// text), then the binary parts, which are the outputs' own bytes.
type Response struct {
	// JSONLen is the JSON part's length, the value of the
	// Inference-Header-Content-Length header, when the response has binary
	// parts; -1 when it is JSON alone.
	JSONLen int64
	pieces  []responsePiece
	values  int64
	// few holds the pieces of an answer of one output sent as JSON.
	few [3]responsePiece
}

// responsePiece is bytes to write as they are, or, with values set, the
// count elements of that tensor formatted as JSON numbers or booleans.
type responsePiece struct {
	bytes  []byte
	values *tensor.Tensor
	count  int
}

// EncodeResponse prepares an inference response of head and outs. It fails
// with ErrNotJSON when an output asked for as JSON holds what JSON cannot
// carry (NaN or infinity, text that is not UTF-8).
func EncodeResponse(head InferResponseJSON, outs []Output) (*Response, error) {
	head.Outputs = []ResponseOutput{}
	js, err := json.Marshal(head)
	if err != nil {
		return nil, fmt.Errorf("encode response: %w", err)
	}
	// Outputs comes last and is never omitted: the head ends with it.
	const outputsTail = `"outputs":[]}`
	if !bytes.HasSuffix(js, []byte(outputsTail)) {
		return nil, fmt.Errorf("encode response: unexpected JSON %.80q", js)
	}
	r := &Response{JSONLen: -1}
	r.pieces = r.few[:0]
	// The text between the values, in one buffer: a piece is a slice of
	// it, capped, which keeps its bytes should the buffer move as it grows.
	text := append(make([]byte, 0, len(js)+outputText*len(outs)), js[:len(js)-2]...) // up to "outputs":[
	start := 0
	var binary [][]byte
	var strs []string // a BYTES output's elements
	for i, o := range outs {
		t := o.Tensor
		ro := ResponseOutput{Name: t.Name, Shape: t.Shape, DataType: string(t.DataType)}
		if ro.Shape == nil {
			ro.Shape = []int64{}
		}
		switch {
		case o.Shm != nil:
			written := *o.Shm
			written.Size = int64(len(t.Data))
			ro.Parameters = written.Parameters()
		case o.Binary:
			ro.Parameters = map[string]any{"binary_data_size": len(t.Data)}
			binary = append(binary, t.Data)
		case t.DataType == tensor.Bytes:
			if strs, err = encodeStrings(t); err != nil {
				return nil, fmt.Errorf("encode output %q: %w", t.Name, err)
			}
		default:
			if err := checkJSONValues(t); err != nil {
				return nil, fmt.Errorf("encode output %q: %w", t.Name, err)
			}
		}
		// Data is left out here (omitempty) and written after the
		// output's other fields, the last of them.
		one, err := json.Marshal(ro)
		if err != nil {
			return nil, fmt.Errorf("encode output %q: %w", t.Name, err)
		}
		if i > 0 {
			text = append(text, ',')
		}
		if o.Shm != nil || o.Binary {
			text = append(text, one...)
			continue
		}
		text = append(append(text, one[:len(one)-1]...), `,"data":`...)
		if t.DataType == tensor.Bytes {
			// Text elements are few and short: formatted now.
			data, err := json.Marshal(strs)
			if err != nil {
				return nil, fmt.Errorf("encode output %q: %w", t.Name, err)
			}
			text = append(append(text, data...), '}')
			continue
		}
		text = append(text, '[')
		count := len(t.Data) / t.DataType.Size()
		r.pieces = append(r.pieces, responsePiece{bytes: text[start:len(text):len(text)]}, responsePiece{values: &outs[i].Tensor, count: count})
		r.values += int64(count)
		start = len(text)
		text = append(text, "]}"...)
	}
	text = append(text, "]}"...)
	r.pieces = append(r.pieces, responsePiece{bytes: text[start:]})
	if len(binary) == 0 {
		return r, nil
	}
	// The JSON part's length goes in a header before the body: it is
	// formatted now, with whatever data it holds.
	js = r.Bytes()
	r.JSONLen = int64(len(js))
	r.values = 0
	r.pieces = []responsePiece{{bytes: js}}
	for _, b := range binary {
		r.pieces = append(r.pieces, responsePiece{bytes: b})
	}
	return r, nil
}

// Size is about how many bytes the whole response takes: those it holds
// and its JSON data still to be formatted.
func (r *Response) Size() int64 {
	n := r.values * bytesPerValue
	for _, p := range r.pieces {
		n += int64(len(p.bytes))
	}
	return n
}

// WriteTo writes the response to w, formatting its JSON data a slice at a
// time.
func (r *Response) WriteTo(w io.Writer) (int64, error) {
	var n int64
	var buf []byte
	for _, p := range r.pieces {
		if p.values == nil {
			k, err := w.Write(p.bytes)
			n += int64(k)
			if err != nil {
				return n, err
			}
			continue
		}
		if buf == nil {
			buf = make([]byte, 0, min(p.count, valuesPerWrite)*bytesPerValue)
		}
		for from := 0; from < p.count; from += valuesPerWrite {
			buf = appendJSONValues(buf[:0], *p.values, from, min(from+valuesPerWrite, p.count))
			k, err := w.Write(buf)
			n += int64(k)
			if err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// outputText is about what an output's JSON takes beside its data.
const outputText = 160

const (
	// valuesPerWrite is how many values WriteTo formats before it writes
	// them: some 100 KB of text.
	valuesPerWrite = 8 << 10
	// bytesPerValue is about what a value takes as text with its comma
	// (a float32 with its shortest digits takes 10 to 15 bytes).
	bytesPerValue = 12
)

// Bytes is the whole response in memory.
func (r *Response) Bytes() []byte {
	out := make([]byte, 0, r.Size()+r.Size()/8)
	for _, p := range r.pieces {
		if p.values == nil {
			out = append(out, p.bytes...)
			continue
		}
		out = appendJSONValues(out, *p.values, 0, p.count)
	}
	return out
}
