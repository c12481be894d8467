package loadgen

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/kserve"
)

// InputData is a file of request data in perf_analyzer's --input-data
// JSON: {"data": [{"INPUT": values, …}, …]}, each entry one request, sent
// in turn. An input's values are a list (nested or flat) of the
// model's shape for one request, {"content": list, "shape": dims} for
// other dims (a dynamic input), or {"b64": base64} for its bytes as they
// lie in memory (little-endian; a BYTES input's one element). For a
// stateful model "data" may hold streams instead, each a list of such
// entries: a sequence's requests in order, a new sequence taking the next
// stream (perf_analyzer's streams).
type InputData struct {
	entries []map[string]json.RawMessage
	// streams, when the file holds them, are its streams' entries.
	streams [][]map[string]json.RawMessage
	// dir, when set, is perf_analyzer's --input-data DIR instead
	// (ReadInputDir): one request, read for the model's inputs.
	dir string
}

// MaxDataEntries bounds the requests one data file holds: each is built
// and held for the run.
const MaxDataEntries = MaxInputs

// ParseInputData reads a perf_analyzer data file. IsInputData tells one
// from a KServe v2 request.
func ParseInputData(b []byte) (*InputData, error) {
	var f struct {
		Data       []json.RawMessage `json:"data"`
		Validation json.RawMessage   `json:"validation_data"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%w: read input data: %v", ErrConfig, err)
	}
	switch {
	case len(f.Validation) > 0:
		return nil, fmt.Errorf("%w: input data: validation_data is not checked by gpuletd load; leave it out (gpuletd infer --request prints an answer to compare)", ErrConfig)
	case len(f.Data) == 0:
		return nil, fmt.Errorf("%w: input data: \"data\" holds no request", ErrConfig)
	case len(f.Data) > MaxDataEntries:
		return nil, fmt.Errorf("%w: input data: %d requests; at most %d are held", ErrConfig, len(f.Data), MaxDataEntries)
	}
	d := &InputData{}
	total := 0
	for i, raw := range f.Data {
		t := bytes.TrimSpace(raw)
		stream := len(t) > 0 && t[0] == '['
		switch {
		case stream && len(d.entries) > 0, !stream && len(d.streams) > 0:
			return nil, fmt.Errorf("%w: input data: entry %d: \"data\" holds requests or streams of them (lists, a stateful model's sequences), not both", ErrConfig, i+1)
		case !stream:
			e, err := dataEntry(raw, fmt.Sprintf("entry %d", i+1))
			if err != nil {
				return nil, err
			}
			d.entries = append(d.entries, e)
			continue
		}
		var raws []json.RawMessage
		if err := json.Unmarshal(raw, &raws); err != nil || len(raws) == 0 {
			return nil, fmt.Errorf("%w: input data: stream %d is not a list of requests", ErrConfig, i+1)
		}
		if total += len(raws); total > MaxDataEntries {
			return nil, fmt.Errorf("%w: input data: more than %d requests in its streams; at most %d are held", ErrConfig, MaxDataEntries, MaxDataEntries)
		}
		s := make([]map[string]json.RawMessage, len(raws))
		for k, r := range raws {
			var err error
			if s[k], err = dataEntry(r, fmt.Sprintf("stream %d, request %d", i+1, k+1)); err != nil {
				return nil, err
			}
		}
		d.streams = append(d.streams, s)
	}
	return d, nil
}

// dataEntry reads one request's entry, an object of inputs; where names it
// in an error.
func dataEntry(raw json.RawMessage, where string) (map[string]json.RawMessage, error) {
	var e map[string]json.RawMessage
	if err := json.Unmarshal(raw, &e); err != nil || len(e) == 0 {
		return nil, fmt.Errorf("%w: input data: %s is not an object of inputs", ErrConfig, where)
	}
	return e, nil
}

// IsInputData says b is a perf_analyzer data file (a "data" list) rather
// than one KServe v2 request (an "inputs" list).
func IsInputData(b []byte) bool {
	var f struct {
		Data   json.RawMessage `json:"data"`
		Inputs json.RawMessage `json:"inputs"`
	}
	return json.Unmarshal(b, &f) == nil && len(f.Data) > 0 && len(f.Inputs) == 0
}

// Append adds o's requests after d's, as perf_analyzer appends the
// requests of its data files given one after another; neither may be a
// folder, and together they hold at most MaxDataEntries.
func (d *InputData) Append(o *InputData) error {
	switch {
	case d.dir != "" || o.dir != "":
		return fmt.Errorf("%w: input data: a folder's request is one; it takes no other file's", ErrConfig)
	case (len(d.streams) > 0) != (len(o.streams) > 0):
		return fmt.Errorf("%w: input data: one file holds streams (a stateful model's sequences) and another requests: give files of one kind", ErrConfig)
	case d.Len()+o.Len() > MaxDataEntries:
		return fmt.Errorf("%w: input data: %d requests; at most %d are held", ErrConfig, d.Len()+o.Len(), MaxDataEntries)
	}
	d.entries = append(d.entries, o.entries...)
	d.streams = append(d.streams, o.streams...)
	return nil
}

// Streams is how many streams the file holds (a stateful model's
// sequences), 0 when it holds requests.
func (d *InputData) Streams() int { return len(d.streams) }

// Len is how many requests the file holds (in all its streams, when it
// holds streams).
func (d *InputData) Len() int {
	if d.dir != "" {
		return 1
	}
	n := len(d.entries)
	for _, s := range d.streams {
		n += len(s)
	}
	return n
}

// First is the file's first request for m: gpuletd infer sends one.
func (d *InputData) First(m *Model) (*Payload, error) { return d.request(m, 0) }

// request is entry i's request for m.
func (d *InputData) request(m *Model, i int) (*Payload, error) {
	if d.dir != "" {
		p, err := dirPayload(m, d.dir)
		if err != nil {
			return nil, fmt.Errorf("%w: input data %s: %w", ErrPayload, d.dir, err)
		}
		return p, nil
	}
	if len(d.streams) > 0 {
		return d.streamRequest(m, 0, i) // the first stream's (gpuletd infer sends the first)
	}
	p, err := entryPayload(m, d.entries[i])
	if err != nil {
		return nil, fmt.Errorf("%w: input data, entry %d: %w", ErrPayload, i+1, err)
	}
	return p, nil
}

// streamRequest is request k of stream s for m.
func (d *InputData) streamRequest(m *Model, s, k int) (*Payload, error) {
	p, err := entryPayload(m, d.streams[s][k])
	if err != nil {
		return nil, fmt.Errorf("%w: input data, stream %d, request %d: %w", ErrPayload, s+1, k+1, err)
	}
	return p, nil
}

// streamPayloads builds every stream's requests for m, in order.
func (d *InputData) streamPayloads(m *Model) ([][]*Payload, error) {
	out := make([][]*Payload, len(d.streams))
	for s, reqs := range d.streams {
		out[s] = make([]*Payload, len(reqs))
		for k := range reqs {
			var err error
			if out[s][k], err = d.streamRequest(m, s, k); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// payloads builds each entry's request for m: a JSON body, with the inputs
// given in base64 as binary tensors after it.
func (d *InputData) payloads(m *Model) ([]*Payload, error) {
	out := make([]*Payload, d.Len())
	for i := range out {
		var err error
		if out[i], err = d.request(m, i); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func entryPayload(m *Model, e map[string]json.RawMessage) (*Payload, error) {
	req, raw, err := requestInputs(m, func(in kserve.TensorMetadata) (kserve.RequestInput, []byte, error) {
		v, ok := e[in.Name]
		if !ok {
			return kserve.RequestInput{}, nil, fmt.Errorf("no values for input %q", in.Name)
		}
		ri, data, err := inputOf(m, in.Name, in.DataType, in.Shape, v)
		if err != nil {
			return ri, nil, fmt.Errorf("input %q: %w", in.Name, err)
		}
		return ri, data, nil
	})
	if err != nil {
		return nil, err
	}
	for name := range e {
		if !slices.ContainsFunc(m.Metadata.Inputs, func(t kserve.TensorMetadata) bool { return t.Name == name }) {
			return nil, fmt.Errorf("%q is not an input of the model", name)
		}
	}
	return requestPayload(req, raw)
}

// requestInputs builds each of m's inputs with input, in order: the
// request's inputs, and the data of those sent as binary tensors.
func requestInputs(m *Model, input func(kserve.TensorMetadata) (kserve.RequestInput, []byte, error)) (kserve.InferRequestJSON, []byte, error) {
	req := kserve.InferRequestJSON{}
	var raw []byte
	for _, in := range m.Metadata.Inputs {
		ri, data, err := input(in)
		if err != nil {
			return req, nil, err
		}
		raw = append(raw, data...)
		req.Inputs = append(req.Inputs, ri)
	}
	return req, raw, nil
}

// requestPayload is req with raw, the data of its binary inputs in order,
// after it, checked as the server decodes it.
func requestPayload(req kserve.InferRequestJSON, raw []byte) (*Payload, error) {
	head, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	p := &Payload{Body: head, JSONLen: -1}
	if len(raw) > 0 {
		p = &Payload{Body: append(head, raw...), JSONLen: int64(len(head))}
	}
	// Checked as the server decodes it: values of the wrong type (text for
	// FP32, a fraction for INT64) say so here, not in every answer.
	if _, err := kserve.DecodeRequest(p.Body, p.JSONLen); err != nil {
		return nil, err
	}
	return p, nil
}

// inputOf reads one input's values: the request input, and its binary
// data when they came in base64.
func inputOf(m *Model, name, dataType string, declared []int64, v json.RawMessage) (kserve.RequestInput, []byte, error) {
	var given struct {
		Content json.RawMessage `json:"content"`
		Shape   []int64         `json:"shape"`
		B64     *string         `json:"b64"`
	}
	values := v
	if t := bytes.TrimSpace(v); len(t) > 0 && t[0] == '{' {
		if err := json.Unmarshal(t, &given); err != nil {
			return kserve.RequestInput{Name: name, DataType: dataType}, nil, err
		}
		values = given.Content
	}
	ri, dt, n, err := requestInput(m, name, dataType, declared, given.Shape)
	if err != nil {
		return ri, nil, err
	}
	if given.B64 != nil {
		data, err := base64.StdEncoding.DecodeString(*given.B64)
		if err != nil {
			return ri, nil, fmt.Errorf("b64: %w", err)
		}
		if dt == tensor.Bytes { // one element: the bytes, in each
			data = slices.Repeat(tensor.AppendBytesElement(nil, data), int(n))
		} else if data, err = fixedRows(m, ri, dt, n, data, "b64"); err != nil {
			return ri, nil, err
		}
		return binaryInput(ri, data)
	}
	if len(values) == 0 {
		return ri, nil, errors.New(`give its values: a list, {"content": list, "shape": dims} or {"b64": bytes}`)
	}
	dec := json.NewDecoder(bytes.NewReader(values))
	dec.UseNumber() // integers past 2^53 as written
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return ri, nil, err
	}
	flat := flatten(tree, nil)
	if rows := int64(max(m.Rows, 1)); rows > 1 && int64(len(flat))*rows == n {
		flat = slices.Repeat(flat, int(rows)) // one row's values, for each row
	}
	if int64(len(flat)) != n {
		return ri, nil, fmt.Errorf("%d values; shape %v holds %d (give \"shape\" with \"content\" for other dims)", len(flat), ri.Shape, n)
	}
	b, err := json.Marshal(flat)
	if err != nil {
		return ri, nil, err
	}
	ri.Data = jsontext.Value(b)
	return ri, nil, nil
}

// requestInput starts input name's request input: its data type, and the
// shape one request of m sends (of given, one request's dims without the
// batch dimension, as perf_analyzer's "shape", when not nil) with its
// element count.
func requestInput(m *Model, name, dataType string, declared, given []int64) (kserve.RequestInput, tensor.DataType, int64, error) {
	ri := kserve.RequestInput{Name: name, DataType: dataType}
	dt, err := tensor.ParseDataType(dataType)
	if err != nil {
		return ri, "", 0, fmt.Errorf("data type %q is not the protocol's", dataType)
	}
	if ri.Shape, err = m.requestShape(name, declared); err != nil {
		return ri, "", 0, err
	}
	if given != nil {
		ri.Shape = slices.Clone(given)
		if m.MaxBatchSize > 0 {
			ri.Shape = append([]int64{int64(max(m.Rows, 1))}, ri.Shape...)
		}
	}
	n, err := tensor.NumElements(ri.Shape)
	if err != nil || n > maxPayloadElements {
		return ri, "", 0, fmt.Errorf("shape %v is not one to send", ri.Shape)
	}
	return ri, dt, n, nil
}

// fixedRows is data, one request's bytes of input ri (of a fixed-size type
// dt, n elements) as from says them: as they are, or one row's, repeated
// for each of m's rows.
func fixedRows(m *Model, ri kserve.RequestInput, dt tensor.DataType, n int64, data []byte, from string) ([]byte, error) {
	rows := int64(max(m.Rows, 1))
	switch want := n * int64(dt.Size()); {
	case int64(len(data))*rows == want && rows > 1:
		return slices.Repeat(data, int(rows)), nil // one row's bytes, for each row
	case int64(len(data)) != want:
		return nil, fmt.Errorf("%s holds %d bytes; shape %v of %s takes %d", from, len(data), ri.Shape, ri.DataType, want)
	}
	return data, nil
}

// binaryInput is ri sent as the binary data given, after the request's
// JSON.
func binaryInput(ri kserve.RequestInput, data []byte) (kserve.RequestInput, []byte, error) {
	ri.Parameters = kserve.Parameters{"binary_data_size": jsontext.Value(strconv.Itoa(len(data)))}
	return ri, data, nil
}

// flatten appends tree's leaves, in order, to out.
func flatten(tree any, out []any) []any {
	if l, ok := tree.([]any); ok {
		for _, v := range l {
			out = flatten(v, out)
		}
		return out
	}
	return append(out, tree)
}
