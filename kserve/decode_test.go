package kserve

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/executor/tensor"
	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
	"github.com/stretchr/testify/require"
)

func TestDecodeJSONInputs(t *testing.T) {
	tests := []struct {
		name string
		body string
		want tensor.Tensor
	}{
		{"flat fp32", `{"inputs":[{"name":"x","shape":[2,2],"datatype":"FP32","data":[1,2.5,-3,4e2]}]}`,
			mustF32(t, "x", []int64{2, 2}, 1, 2.5, -3, 400)},
		{"nested fp32", `{"inputs":[{"name":"x","shape":[2,2],"datatype":"FP32","data":[[1,2.5],[-3,4e2]]}]}`,
			mustF32(t, "x", []int64{2, 2}, 1, 2.5, -3, 400)},
		{"bool", `{"inputs":[{"name":"b","shape":[3],"datatype":"BOOL","data":[true,false,true]}]}`,
			tensor.Tensor{Name: "b", DataType: tensor.Bool, Shape: []int64{3}, Data: []byte{1, 0, 1}}},
		{"int64", `{"inputs":[{"name":"i","shape":[2],"datatype":"INT64","data":[-1, 9007199254740993]}]}`,
			tensor.Tensor{Name: "i", DataType: tensor.Int64, Shape: []int64{2}, Data: le64(-1, 9007199254740993)}},
		{"int32", `{"inputs":[{"name":"i","shape":[1,2],"datatype":"INT32","data":[[7, -8]]}]}`,
			tensor.Tensor{Name: "i", DataType: tensor.Int32, Shape: []int64{1, 2}, Data: []byte{7, 0, 0, 0, 0xf8, 0xff, 0xff, 0xff}}},
		{"uint8", `{"inputs":[{"name":"u","shape":[2],"datatype":"UINT8","data":[0,255]}]}`,
			tensor.Tensor{Name: "u", DataType: tensor.Uint8, Shape: []int64{2}, Data: []byte{0, 255}}},
		{"fp16", `{"inputs":[{"name":"h","shape":[3],"datatype":"FP16","data":[1, -2, 0.5]}]}`,
			tensor.Tensor{Name: "h", DataType: tensor.FP16, Shape: []int64{3}, Data: []byte{0x00, 0x3c, 0x00, 0xc0, 0x00, 0x38}}},
		{"bf16 rounds to nearest", `{"inputs":[{"name":"h","shape":[3],"datatype":"BF16","data":[1, -2.5, 1.00390625]}]}`,
			tensor.Tensor{Name: "h", DataType: tensor.BF16, Shape: []int64{3}, Data: []byte{0x80, 0x3f, 0x20, 0xc0, 0x80, 0x3f}}},
		{"bytes nested, commas and escapes", `{"inputs":[{"name":"s","shape":[2,2],"datatype":"BYTES","data":[["a,b", ""],["\u00e9\"]", "x"]]}]}`,
			tensor.Tensor{Name: "s", DataType: tensor.Bytes, Shape: []int64{2, 2}, Data: strElems("a,b", "", "é\"]", "x")}},
		{"bytes scalar", `{"inputs":[{"name":"s","shape":[],"datatype":"BYTES","data":["one"]}]}`,
			tensor.Tensor{Name: "s", DataType: tensor.Bytes, Shape: []int64{}, Data: strElems("one")}},
		{"empty tensor", `{"inputs":[{"name":"x","shape":[0,4],"datatype":"FP32","data":[]}]}`,
			tensor.Tensor{Name: "x", DataType: tensor.FP32, Shape: []int64{0, 4}, Data: []byte{}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := DecodeRequest([]byte(tc.body), -1)
			require.NoError(t, err)
			require.Len(t, r.Inputs, 1)
			require.Equal(t, tc.want.Name, r.Inputs[0].Name)
			require.Equal(t, tc.want.DataType, r.Inputs[0].DataType)
			require.Equal(t, tc.want.Shape, r.Inputs[0].Shape)
			require.Equal(t, tc.want.Data, r.Inputs[0].Data)
			require.EqualValues(t, len(tc.want.Data), r.DecodedBytes, "decoded from JSON: held beside the body")
		})
	}
}

func TestDecodeParametersAndOutputs(t *testing.T) {
	body := `{"id":"r1","parameters":{"timeout":2500,"priority":3,"binary_data_output":true},
	  "inputs":[{"name":"x","shape":[1],"datatype":"FP32","data":[1]}],
	  "outputs":[{"name":"a"},{"name":"b","parameters":{"binary_data":false,"classification":3}}]}`
	r, err := DecodeRequest([]byte(body), -1)
	require.NoError(t, err)
	require.Equal(t, "r1", r.ID)
	require.Equal(t, 2500*time.Microsecond, r.Timeout)
	require.Equal(t, int64(3), r.Priority)
	require.True(t, r.BinaryOutputs)
	require.Equal(t, []OutputRequest{{Name: "a", Binary: true}, {Name: "b", Binary: false, Classes: 3}}, r.Outputs)
}

func binaryBody(t *testing.T, head string, bin ...[]byte) ([]byte, int64) {
	t.Helper()
	body := []byte(head)
	for _, b := range bin {
		body = append(body, b...)
	}
	return body, int64(len(head))
}

// strElems encodes BYTES elements.
func strElems(elems ...string) []byte {
	var out []byte
	for _, e := range elems {
		out = tensor.AppendBytesElement(out, []byte(e))
	}
	return out
}

func TestDecodeBinaryBytes(t *testing.T) {
	data := strElems("hello", "", "\x00\xff")
	head := fmt.Sprintf(`{"inputs":[{"name":"s","shape":[3],"datatype":"BYTES","parameters":{"binary_data_size":%d}}]}`, len(data))
	body, n := binaryBody(t, head, data)
	r, err := DecodeRequest(body, n)
	require.NoError(t, err)
	require.Equal(t, data, r.Inputs[0].Data)
}

func TestEncodeBytesAndBF16(t *testing.T) {
	s := tensor.Tensor{Name: "s", DataType: tensor.Bytes, Shape: []int64{2}, Data: strElems("héllo", "")}
	b := tensor.Tensor{Name: "b", DataType: tensor.BF16, Shape: []int64{2}, Data: []byte{0x80, 0x3f, 0x20, 0xc0}}
	body, _, err := encodeResponseBytes(InferResponseJSON{ModelName: "m"}, []Output{{Tensor: s}, {Tensor: b}})
	require.NoError(t, err)
	require.JSONEq(t, `{"model_name":"m","outputs":[
	  {"name":"s","shape":[2],"datatype":"BYTES","data":["héllo",""]},
	  {"name":"b","shape":[2],"datatype":"BF16","data":[1,-2.5]}]}`, string(body))

	bin := tensor.Tensor{Name: "s", DataType: tensor.Bytes, Shape: []int64{1}, Data: strElems("\xff")}
	_, _, err = encodeResponseBytes(InferResponseJSON{ModelName: "m"}, []Output{{Tensor: bin}})
	require.ErrorIs(t, err, ErrNotJSON)
	require.ErrorContains(t, err, "not UTF-8")
	body, n, err := encodeResponseBytes(InferResponseJSON{ModelName: "m"}, []Output{{Tensor: bin, Binary: true}})
	require.NoError(t, err)
	require.Equal(t, bin.Data, body[n:])
}

func TestDecodeBinaryInputs(t *testing.T) {
	x := mustF32(t, "x", []int64{1, 2}, 1.5, 2.5)
	head := `{"inputs":[{"name":"x","shape":[1,2],"datatype":"FP32","parameters":{"binary_data_size":8}},` +
		`{"name":"m","shape":[2],"datatype":"BOOL","data":[true,false]},` +
		`{"name":"u","shape":[3],"datatype":"UINT8","parameters":{"binary_data_size":3}}]}`
	body, n := binaryBody(t, head, x.Data, []byte{9, 8, 7})
	r, err := DecodeRequest(body, n)
	require.NoError(t, err)
	require.Equal(t, x.Data, r.Inputs[0].Data)
	require.Equal(t, []byte{1, 0}, r.Inputs[1].Data)
	require.Equal(t, []byte{9, 8, 7}, r.Inputs[2].Data)
	require.EqualValues(t, 2, r.DecodedBytes, "only the JSON input's bytes: binary data is the body's own")
}

func TestDecodeRejects(t *testing.T) {
	deep := `{"inputs":[{"name":"x","shape":[1],"datatype":"FP32","data":` + strings.Repeat("[", 40) + "1" + strings.Repeat("]", 40) + `}]}`
	tests := []struct {
		name   string
		body   string
		bin    []byte // non-nil: binary body with this tail
		jsonN  int64  // overrides the header length when not 0
		errHas string
	}{
		{"not json", `{"inputs":`, nil, 0, "not valid JSON"},
		{"unknown field", `{"inputs":[],"extra":1}`, nil, 0, "extra"},
		{"no inputs", `{"inputs":[]}`, nil, 0, "no inputs"},
		{"trailing junk", `{"inputs":[{"name":"x","shape":[1],"datatype":"FP32","data":[1]}]} {}`, nil, 0, "after top-level value"},
		{"no name", `{"inputs":[{"shape":[1],"datatype":"FP32","data":[1]}]}`, nil, 0, "no name"},
		{"bad dtype", `{"inputs":[{"name":"x","shape":[1],"datatype":"FLOAT","data":[1]}]}`, nil, 0, `"FLOAT"`},
		{"bytes given numbers", `{"inputs":[{"name":"x","shape":[1],"datatype":"BYTES","data":[1]}]}`, nil, 0, "BYTES data holds strings"},
		{"bytes too few strings", `{"inputs":[{"name":"x","shape":[2],"datatype":"BYTES","data":["a"]}]}`, nil, 0, "holds 1 values, the shape asks for 2"},
		{"bytes not an array", `{"inputs":[{"name":"x","shape":[],"datatype":"BYTES","data":"a"}]}`, nil, 0, "data must be an array"},
		{"bytes binary cut short", `{"inputs":[{"name":"x","shape":[2],"datatype":"BYTES","parameters":{"binary_data_size":9}}]}`,
			[]byte{1, 0, 0, 0, 'a', 9, 0, 0, 0}, 0, "element 1 is 9 bytes long, only 0 follow"},
		{"classification zero", `{"inputs":[{"name":"x","shape":[1],"datatype":"FP32","data":[1]}],"outputs":[{"name":"y","parameters":{"classification":0}}]}`, nil, 0, `output "y": classification must be a count of classes from 1, not 0`},
		{"classification not a number", `{"inputs":[{"name":"x","shape":[1],"datatype":"FP32","data":[1]}],"outputs":[{"name":"y","parameters":{"classification":"3"}}]}`, nil, 0, `output "y": classification must be an integer`},
		{"priority negative", `{"parameters":{"priority":-1},"inputs":[{"name":"x","shape":[1],"datatype":"FP32","data":[1]}]}`, nil, 0, "priority must not be negative: 1 is the highest level, 0 the model's default"},
		{"a parameter of Triton's own", `{"parameters":{"triton_max_batch":4,"triton_a":1},"inputs":[{"name":"x","shape":[1],"datatype":"FP32","data":[1]}]}`, nil, 0,
			`parameters: "triton_a": keys starting with "triton_" are Triton's own; the one a request may give is triton_enable_empty_final_response`},
		{"empty final response not a boolean", `{"parameters":{"triton_enable_empty_final_response":"yes"},"inputs":[{"name":"x","shape":[1],"datatype":"FP32","data":[1]}]}`, nil, 0,
			"triton_enable_empty_final_response must be true or false"},
		{"bf16 not a number", `{"inputs":[{"name":"x","shape":[1],"datatype":"BF16","data":["a"]}]}`, nil, 0, "not a number"},
		{"no shape", `{"inputs":[{"name":"x","datatype":"FP32","data":[1]}]}`, nil, 0, "no shape"},
		{"negative shape", `{"inputs":[{"name":"x","shape":[-1,2],"datatype":"FP32","data":[1,2]}]}`, nil, 0, "dimension 0 is -1"},
		{"overflowing shape", `{"inputs":[{"name":"x","shape":[4294967296,4294967296],"datatype":"FP32","data":[1]}]}`, nil, 0, "more than"},
		{"huge shape, little data", `{"inputs":[{"name":"x","shape":[1000000000],"datatype":"FP32","data":[1]}]}`, nil, 0, "1 values, the shape asks for 1000000000"},
		{"rank too high", `{"inputs":[{"name":"x","shape":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1],"datatype":"FP32","data":[1]}]}`, nil, 0, "at most 16"},
		{"too few values", `{"inputs":[{"name":"x","shape":[3],"datatype":"FP32","data":[1,2]}]}`, nil, 0, "holds 2 values, the shape asks for 3"},
		{"too many values", `{"inputs":[{"name":"x","shape":[1],"datatype":"FP32","data":[1,2]}]}`, nil, 0, "more than the 1"},
		{"deep nesting", deep, nil, 0, "deeper than"},
		{"string in fp32", `{"inputs":[{"name":"x","shape":[1],"datatype":"FP32","data":["1"]}]}`, nil, 0, "not a number"},
		{"float in int", `{"inputs":[{"name":"x","shape":[1],"datatype":"INT32","data":[1.5]}]}`, nil, 0, "not an integer"},
		{"int overflow", `{"inputs":[{"name":"x","shape":[1],"datatype":"INT8","data":[300]}]}`, nil, 0, "fits INT8"},
		{"negative uint", `{"inputs":[{"name":"x","shape":[1],"datatype":"UINT8","data":[-1]}]}`, nil, 0, "unsigned"},
		{"bool as int", `{"inputs":[{"name":"x","shape":[1],"datatype":"BOOL","data":[1]}]}`, nil, 0, "true or false"},
		{"fp32 overflow", `{"inputs":[{"name":"x","shape":[1],"datatype":"FP32","data":[1e39]}]}`, nil, 0, "not a number"},
		{"duplicate input", `{"inputs":[{"name":"x","shape":[1],"datatype":"FP32","data":[1]},{"name":"x","shape":[1],"datatype":"FP32","data":[1]}]}`, nil, 0, "twice"},
		{"data and binary", `{"inputs":[{"name":"x","shape":[1],"datatype":"FP32","data":[1],"parameters":{"binary_data_size":4}}]}`, []byte{0, 0, 0, 0}, 0, "both"},
		{"neither", `{"inputs":[{"name":"x","shape":[1],"datatype":"FP32"}]}`, nil, 0, "neither"},
		{"wrong binary size", `{"inputs":[{"name":"x","shape":[2],"datatype":"FP32","parameters":{"binary_data_size":4}}]}`, []byte{0, 0, 0, 0}, 0, "needs 8 bytes"},
		{"binary short", `{"inputs":[{"name":"x","shape":[2],"datatype":"FP32","parameters":{"binary_data_size":8}}]}`, []byte{0, 0, 0, 0}, 0, "only 4 bytes"},
		{"binary left over", `{"inputs":[{"name":"x","shape":[1],"datatype":"FP32","parameters":{"binary_data_size":4}}]}`, []byte{0, 0, 0, 0, 1}, 0, "left over"},
		{"header beyond body", `{"inputs":[]}`, []byte{}, 1 << 20, "body has"},
		{"binary size not int", `{"inputs":[{"name":"x","shape":[1],"datatype":"FP32","parameters":{"binary_data_size":"4"}}]}`, []byte{0, 0, 0, 0}, 0, "integer"},
		{"bad timeout", `{"parameters":{"timeout":-5},"inputs":[{"name":"x","shape":[1],"datatype":"FP32","data":[1]}]}`, nil, 0, "timeout"},
		{"unnamed output", `{"inputs":[{"name":"x","shape":[1],"datatype":"FP32","data":[1]}],"outputs":[{}]}`, nil, 0, "no name"},
		{"bad brackets", `{"inputs":[{"name":"x","shape":[2],"datatype":"FP32","data":[1,,2]}]}`, nil, 0, "not valid JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body, n := []byte(tc.body), int64(-1)
			if tc.bin != nil {
				body, n = binaryBody(t, tc.body, tc.bin)
			}
			if tc.jsonN != 0 {
				n = tc.jsonN
			}
			_, err := DecodeRequest(body, n)
			require.ErrorIs(t, err, ErrBadRequest)
			require.Contains(t, err.Error(), tc.errHas)
		})
	}
}

func TestDecodeDataDirect(t *testing.T) {
	// Malformed arrays that encoding/json would already refuse are refused
	// here too, since decodeData may see raw bytes from anywhere.
	for _, raw := range []string{"1", "[1,]", "[,1]", "[1 2]", "[[1]", "[1]]", "[1] x", "[1][2]"} {
		_, err := decodeData([]byte(raw), tensor.FP32, 2)
		require.Error(t, err, raw)
	}
	out, err := decodeData([]byte(" [ [1] , [2] ] "), tensor.FP32, 2)
	require.NoError(t, err)
	require.Len(t, out, 8)
}

func TestEncodeResponse(t *testing.T) {
	a := mustF32(t, "a", []int64{1, 2}, 0.5, -1)
	b := tensor.Tensor{Name: "b", DataType: tensor.Int64, Shape: []int64{1}, Data: le64(-7)}
	body, n, err := encodeResponseBytes(InferResponseJSON{ModelName: "m", ModelVersion: "1", ID: "q"}, []Output{{Tensor: a}, {Tensor: b}})
	require.NoError(t, err)
	require.Equal(t, int64(-1), n)
	require.JSONEq(t, `{"model_name":"m","model_version":"1","id":"q","outputs":[
	  {"name":"a","shape":[1,2],"datatype":"FP32","data":[0.5,-1]},
	  {"name":"b","shape":[1],"datatype":"INT64","data":[-7]}]}`, string(body))

	body, n, err = encodeResponseBytes(InferResponseJSON{ModelName: "m"}, []Output{{Tensor: a, Binary: true}, {Tensor: b}})
	require.NoError(t, err)
	require.Positive(t, n)
	var head map[string]any
	require.NoError(t, json.Unmarshal(body[:n], &head))
	outs := head["outputs"].([]any)
	require.Equal(t, float64(8), outs[0].(map[string]any)["parameters"].(map[string]any)["binary_data_size"])
	require.Nil(t, outs[0].(map[string]any)["data"])
	require.Equal(t, a.Data, body[n:])

	nan := mustF32(t, "n", []int64{1}, float32(math.NaN()))
	_, _, err = encodeResponseBytes(InferResponseJSON{ModelName: "m"}, []Output{{Tensor: nan}})
	require.ErrorIs(t, err, ErrNotJSON)
	require.ErrorContains(t, err, "binary")
	inf := mustF32(t, "i", []int64{2}, 1, float32(math.Inf(-1)))
	_, _, err = encodeResponseBytes(InferResponseJSON{ModelName: "m"}, []Output{{Tensor: inf}})
	require.ErrorIs(t, err, ErrNotJSON)
	_, _, err = encodeResponseBytes(InferResponseJSON{ModelName: "m"}, []Output{{Tensor: inf, Binary: true}})
	require.NoError(t, err, "binary data carries any float")
}

func TestHalfRoundTrip(t *testing.T) {
	for _, f := range []float32{0, 1, -2, 0.5, 65504, 6.1035156e-05, 5.9604645e-08, -0.333251953125} {
		require.Equal(t, f, halfToFloat32(float32ToHalf(f)), strconv.FormatFloat(float64(f), 'g', -1, 32))
	}
	require.Equal(t, uint16(0x7c00), float32ToHalf(1e6), "overflow is +Inf")
	require.True(t, math.IsNaN(float64(halfToFloat32(float32ToHalf(float32(math.NaN()))))))
	require.Equal(t, uint16(0x3c00), float32ToHalf(1.0004883), "ties to even")
}

func mustF32(t *testing.T, name string, shape []int64, vals ...float32) tensor.Tensor {
	t.Helper()
	x, err := tensor.FromFloat32s(name, shape, vals)
	require.NoError(t, err)
	return x
}

func le64(vals ...int64) []byte {
	var out []byte
	for _, v := range vals {
		out = binary.LittleEndian.AppendUint64(out, uint64(v))
	}
	return out
}

func TestFastFloat32MatchesStrconv(t *testing.T) {
	for _, s := range []string{"0", "-0", "1", "42", "0.5", "-0.123456", "1234567", "16777215", "0.0000001", "3.1415927", "9999999", "0.1", "0.3", "123.456"} {
		got, ok := fastFloat32([]byte(s))
		want, err := strconv.ParseFloat(s, 32)
		require.NoError(t, err)
		if ok {
			require.Equal(t, float32(want), got, s)
		}
	}
	for _, s := range []string{"", "-", "1e5", "12345678", "1.", ".5", "01", "1.2.3", "0.12345678901", "abc", "--1"} {
		_, ok := fastFloat32([]byte(s))
		require.False(t, ok, s)
	}
}

func FuzzFastFloat32(f *testing.F) {
	f.Add("0.123")
	f.Add("-42")
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := fastFloat32([]byte(s))
		if !ok {
			return
		}
		want, err := strconv.ParseFloat(s, 32)
		require.NoError(t, err, s)
		require.Equal(t, float32(want), got, s)
	})
}

// encodeResponseBytes is EncodeResponse's response whole in memory, with
// its JSON part's length.
func encodeResponseBytes(head InferResponseJSON, outs []Output) ([]byte, int64, error) {
	r, err := EncodeResponse(head, outs)
	if err != nil {
		return nil, 0, err
	}
	return r.Bytes(), r.JSONLen, nil
}

// TestEmptyFinalResponseIsAccepted: the one parameter of Triton's own a
// request may give decodes, over REST and gRPC, with others of the client's.
func TestEmptyFinalResponseIsAccepted(t *testing.T) {
	_, err := DecodeRequest([]byte(`{"parameters":{"triton_enable_empty_final_response":true,"tenant":"a"},"inputs":[{"name":"x","shape":[1],"datatype":"FP32","data":[1]}]}`), -1)
	require.NoError(t, err)
	_, err = DecodeGRPCRequest(&pb.ModelInferRequest{Inputs: []*pb.ModelInferRequest_InferInputTensor{{Name: "x", Datatype: "UINT8", Shape: []int64{2}}},
		RawInputContents: [][]byte{{1, 2}}, Parameters: map[string]*pb.InferParameter{ParamEnableEmptyFinal: {ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: true}}}})
	require.NoError(t, err)
}
