package kserve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// Triton's generate extension (POST /v2/models/{m}/generate and
// /generate_stream): a flat JSON object instead of the inference
// protocol's tensors. Every key but "id" and "parameters" that names one of
// the model's inputs is that input, a value or a list of values whose
// shape the model's metadata completes; any other key is a request
// parameter; the keys of "parameters" are read the same way. The answer
// gives each output under its name, one value bare and several as a list,
// beside "id", "model_name", "model_version" and the answer's parameters.
// Translated to and from the inference protocol's JSON, a request takes the
// path of every other.

// GenerateToInfer translates a generate request's body into an inference
// request's JSON body for a model of the given inputs (its metadata: the
// batch dimension first, -1, when it batches).
func GenerateToInfer(body []byte, inputs []TensorMetadata) ([]byte, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return nil, fmt.Errorf("%w: a generate request is a JSON object of inputs and parameters, such as {\"text_input\": \"…\"}", ErrBadRequest)
	}
	out := generateInfer{Parameters: Parameters{}}
	if raw, ok := fields["id"]; ok {
		if err := json.Unmarshal(raw, &out.ID); err != nil {
			return nil, fmt.Errorf("%w: id must be a string", ErrBadRequest)
		}
	}
	if raw, ok := fields["parameters"]; ok {
		var nested map[string]json.RawMessage
		if err := json.Unmarshal(raw, &nested); err != nil {
			return nil, fmt.Errorf("%w: parameters must be an object", ErrBadRequest)
		}
		if err := out.take(nested, inputs, "parameters."); err != nil {
			return nil, err
		}
	}
	delete(fields, "id")
	delete(fields, "parameters")
	if err := out.take(fields, inputs, ""); err != nil {
		return nil, err
	}
	if len(out.Inputs) == 0 && len(inputs) > 0 {
		names := make([]string, len(inputs))
		for i, t := range inputs {
			names[i] = t.Name
		}
		return nil, fmt.Errorf("%w: no key names one of the model's inputs (%s); the other keys are parameters", ErrBadRequest, strings.Join(names, ", "))
	}
	return json.Marshal(out)
}

// generateInfer is the inference request a generate request becomes.
type generateInfer InferRequestJSON

// take reads fields (at where in the request, for errors) as inputs where
// they name one and as parameters where they do not, in name order.
func (g *generateInfer) take(fields map[string]json.RawMessage, inputs []TensorMetadata, where string) error {
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		raw := bytes.TrimSpace(fields[name])
		i := slices.IndexFunc(inputs, func(t TensorMetadata) bool { return t.Name == name })
		if i < 0 {
			if len(raw) == 0 || raw[0] == '{' || raw[0] == '[' || string(raw) == "null" {
				return fmt.Errorf("%w: %s%s: the model has no input of that name, and a parameter is a string, number or boolean", ErrBadRequest, where, name)
			}
			if _, dup := g.Parameters[name]; dup {
				return fmt.Errorf("%w: parameter %s given twice", ErrBadRequest, name)
			}
			g.Parameters[name] = jsontext.Value(raw)
			continue
		}
		if slices.ContainsFunc(g.Inputs, func(in RequestInput) bool { return in.Name == name }) {
			return fmt.Errorf("%w: input %s given twice", ErrBadRequest, name)
		}
		in, err := generateTensor(inputs[i], raw)
		if err != nil {
			return fmt.Errorf("%w: %s%s: %v", ErrBadRequest, where, name, err)
		}
		g.Inputs = append(g.Inputs, in)
	}
	return nil
}

// generateTensor is input t given as raw: one value or a list of values,
// shaped as t's metadata allows: its fixed dimensions divide the values,
// its innermost dynamic one takes what they leave, the other dynamic ones
// (the batch) are 1.
func generateTensor(t TensorMetadata, raw json.RawMessage) (RequestInput, error) {
	data := raw
	count := int64(1)
	if len(raw) > 0 && raw[0] == '[' {
		var list []json.RawMessage
		if err := json.Unmarshal(raw, &list); err != nil {
			return RequestInput{}, fmt.Errorf("not a list of values: %v", err)
		}
		for _, v := range list {
			if v = bytes.TrimSpace(v); len(v) > 0 && (v[0] == '[' || v[0] == '{') {
				return RequestInput{}, fmt.Errorf("give a value or a list of values, not nested lists (the model's metadata gives the shape, %v)", t.Shape)
			}
		}
		count = int64(len(list))
	} else {
		if len(raw) > 0 && raw[0] == '{' {
			return RequestInput{}, fmt.Errorf("give a value or a list of values, not an object")
		}
		data = append(append([]byte{'['}, raw...), ']')
	}
	shape := slices.Clone(t.Shape)
	left := count
	for _, d := range shape {
		if d > 0 {
			if left%d != 0 {
				return RequestInput{}, fmt.Errorf("%d values do not fill the model's shape %v", count, t.Shape)
			}
			left /= d
		}
	}
	for i := len(shape) - 1; i >= 0; i-- {
		if shape[i] < 0 {
			shape[i], left = left, 1
		}
	}
	if left != 1 {
		return RequestInput{}, fmt.Errorf("%d values do not fill the model's shape %v", count, t.Shape)
	}
	return RequestInput{Name: t.Name, DataType: t.DataType, Shape: shape, Data: jsontext.Value(data)}, nil
}

// InferToGenerate translates an inference answer's JSON (every output as
// JSON data) into a generate answer.
func InferToGenerate(answer []byte) ([]byte, error) {
	var a struct {
		ID           string                     `json:"id"`
		ModelName    string                     `json:"model_name"`
		ModelVersion string                     `json:"model_version"`
		Parameters   map[string]json.RawMessage `json:"parameters"`
		Outputs      []struct {
			Name string            `json:"name"`
			Data []json.RawMessage `json:"data"`
		} `json:"outputs"`
	}
	if err := json.Unmarshal(answer, &a); err != nil {
		return nil, fmt.Errorf("read inference answer: %w", err)
	}
	out := make(map[string]json.RawMessage, len(a.Parameters)+len(a.Outputs)+3)
	maps.Copy(out, a.Parameters)
	for _, o := range a.Outputs {
		switch len(o.Data) {
		case 0:
			out[o.Name] = json.RawMessage("[]")
		case 1:
			out[o.Name] = o.Data[0]
		default:
			b, err := json.Marshal(o.Data)
			if err != nil {
				return nil, fmt.Errorf("write output %s: %w", o.Name, err)
			}
			out[o.Name] = b
		}
	}
	str := func(v string) json.RawMessage {
		b, _ := json.Marshal(v) // a string does not fail
		return b
	}
	out["model_name"], out["model_version"] = str(a.ModelName), str(a.ModelVersion)
	if a.ID != "" {
		out["id"] = str(a.ID)
	}
	return json.Marshal(out)
}
