// Package kserve is the wire format of the KServe v2 / Open Inference
// Protocol as Triton speaks it, shared by the daemon, its gRPC server and
// the load generator: inference requests and responses in JSON, the binary
// tensor extension (Inference-Header-Content-Length), the parameters of the
// system shared-memory extension, the metadata documents, and the gRPC
// messages (inferencepb) decoded into the same Request. Decoding never trusts a declared size: every shape is checked
// against the bytes or values actually present.
package kserve

import (
	"errors"

	"github.com/go-json-experiment/json/jsontext"
)

// HeaderContentLength is the binary extension's header: the length of the
// JSON part of a body whose tensors follow as raw bytes.
const HeaderContentLength = "Inference-Header-Content-Length"

// HeaderFailureReason names, on a failed inference answer, gpuletd's reason
// for it: the reason label of gpuletd_request_failures_total ("deadline",
// "dropped", "queue_full", ...), for clients and load generators that count
// failures by cause. Not part of the protocol.
const HeaderFailureReason = "Gpuletd-Failure-Reason"

// The same reason over gRPC: a failed call's status carries it as an
// ErrorInfo detail of domain ErrorDomain, and a failed answer on a
// ModelStreamInfer stream as its response's parameter ParamFailureReason.
const (
	ErrorDomain        = "gpuletd"
	ParamFailureReason = "gpuletd_failure_reason"
)

// ParamFinalResponse is the parameter Triton sets on every answer of a
// ModelStreamInfer stream, true on the last one for its request: a model
// that is not decoupled answers once, so every answer is its request's
// last. Clients that read a stream until it (tritonclient's stream
// callbacks, PyTriton) wait for it.
const ParamFinalResponse = "triton_final_response"

// ErrBadRequest is wrapped by every error about a malformed request; the HTTP
// layer answers it with 400.
var ErrBadRequest = errors.New("bad request")

// errNegativePriority: priority levels count from 1, the highest; 0 asks
// for the model's default.
var errNegativePriority = errors.New("priority must not be negative: 1 is the highest level, 0 the model's default")

// ErrNotJSON is wrapped by EncodeResponse's error when an output asked for as
// JSON holds values JSON cannot carry (NaN, ±Inf): the request was fine, the
// client must ask for that output as binary data; the HTTP layer answers it
// with 400 and does not count it against the server.
var ErrNotJSON = errors.New("output cannot be sent as JSON")

// Parameters are the free-form "parameters" objects of the protocol.
type Parameters map[string]jsontext.Value

// RequestInput is one input tensor of an inference request.
type RequestInput struct {
	Name       string         `json:"name"`
	Shape      []int64        `json:"shape"`
	DataType   string         `json:"datatype"`
	Parameters Parameters     `json:"parameters,omitempty"`
	Data       jsontext.Value `json:"data,omitempty"`
}

// RequestOutput asks for one output, optionally as binary data.
type RequestOutput struct {
	Name       string     `json:"name"`
	Parameters Parameters `json:"parameters,omitempty"`
}

// InferRequestJSON is the JSON part of an inference request.
type InferRequestJSON struct {
	ID         string          `json:"id,omitempty"`
	Parameters Parameters      `json:"parameters,omitempty"`
	Inputs     []RequestInput  `json:"inputs"`
	Outputs    []RequestOutput `json:"outputs,omitempty"`
}

// ResponseOutput is one output tensor of an inference response. Data is a
// flat array, or absent when the tensor travels as binary data.
type ResponseOutput struct {
	Name       string         `json:"name"`
	Shape      []int64        `json:"shape"`
	DataType   string         `json:"datatype"`
	Parameters map[string]any `json:"parameters,omitempty"`
	Data       any            `json:"data,omitempty"`
}

// InferResponseJSON is the JSON part of an inference response.
type InferResponseJSON struct {
	ModelName    string           `json:"model_name"`
	ModelVersion string           `json:"model_version,omitempty"`
	ID           string           `json:"id,omitempty"`
	Parameters   map[string]any   `json:"parameters,omitempty"`
	Outputs      []ResponseOutput `json:"outputs"`
}

// ErrorResponse is the body of every error answer.
type ErrorResponse struct {
	Error string `json:"error"`
}

// ServerMetadata answers GET /v2.
type ServerMetadata struct {
	Name       string   `json:"name"`
	Version    string   `json:"version"`
	Extensions []string `json:"extensions"`
}

// TensorMetadata describes an input or output in model metadata; -1 is a
// dimension of any size (the batch dimension of batching models).
type TensorMetadata struct {
	Name     string  `json:"name"`
	DataType string  `json:"datatype"`
	Shape    []int64 `json:"shape"`
}

// ModelMetadata answers GET /v2/models/{m}.
type ModelMetadata struct {
	Name     string           `json:"name"`
	Versions []string         `json:"versions"`
	Platform string           `json:"platform"`
	Inputs   []TensorMetadata `json:"inputs"`
	Outputs  []TensorMetadata `json:"outputs"`
}
