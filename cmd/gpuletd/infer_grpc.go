package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	grpcstatus "google.golang.org/grpc/status"

	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/kserve"
	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
	"github.com/gpulet/gpuletd/sim/loadgen"
)

// inferGRPC sends body (a KServe v2 JSON request, as inferBody makes it) to
// model as one ModelInfer call to the gRPC listener at addr, over TLS when
// d's daemon is reached so (connected as gpuletd load connects), and gives
// the answer in REST's JSON form, so that both print alike, with how long
// the call took (the connection made before it). A refusal comes back as
// refused (its gRPC code and message), a listener that does not answer as
// err.
func inferGRPC(ctx context.Context, d *daemonAPI, addr, model, version string, body []byte) (answer []byte, took time.Duration, refused string, err error) {
	req, err := kserve.DecodeRequest(body, -1)
	if err != nil {
		return nil, 0, "", fmt.Errorf("infer: the request: %w", err)
	}
	msg := loadgen.GRPCInputs(model, req)
	msg.Id, msg.ModelVersion = req.ID, version
	if req.Sequence.Given() || req.Sequence.Start || req.Sequence.End {
		msg = loadgen.GRPCWithSequence(msg, req.Sequence)
	}
	for _, o := range req.Outputs {
		out := &pb.ModelInferRequest_InferRequestedOutputTensor{Name: o.Name}
		if o.Classes > 0 {
			out.Parameters = map[string]*pb.InferParameter{kserve.ParamClassification: {
				ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: int64(o.Classes)}}}
		}
		msg.Outputs = append(msg.Outputs, out)
	}
	c, err := d.grpcClient(ctx, addr)
	if errors.Is(err, loadgen.ErrGRPCUnreachable) {
		return nil, 0, "", d.failOver(addr, err)
	}
	if err != nil {
		return nil, 0, "", fmt.Errorf("infer: %w", err)
	}
	start := time.Now()
	res, err := c.ModelInfer(ctx, msg)
	took = time.Since(start)
	if err != nil {
		st := grpcstatus.Convert(err)
		return nil, took, fmt.Sprintf("%s: %s", st.Code(), st.Message()), nil
	}
	if len(res.RawOutputContents) != len(res.Outputs) {
		return nil, 0, "", fmt.Errorf("infer: the answer has %d outputs and %d raw_output_contents", len(res.Outputs), len(res.RawOutputContents))
	}
	outs := make([]kserve.Output, len(res.Outputs))
	for i, o := range res.Outputs {
		t, err := tensor.New(o.Name, tensor.DataType(o.Datatype), o.Shape, res.RawOutputContents[i])
		if err != nil {
			return nil, 0, "", fmt.Errorf("infer: the answer's output %q: %w", o.Name, err)
		}
		outs[i] = kserve.Output{Tensor: t}
	}
	encoded, err := kserve.EncodeResponse(kserve.InferResponseJSON{ModelName: res.ModelName, ModelVersion: res.ModelVersion, ID: res.Id}, outs)
	if err != nil {
		return nil, 0, "", fmt.Errorf("infer: the answer: %w", err)
	}
	return encoded.Bytes(), took, "", nil
}
