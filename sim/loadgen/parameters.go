package loadgen

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
)

// Parameter is a request parameter every request of a run carries
// (Config.Parameters), as perf_analyzer's --request-parameter sends one.
// Its Value is a bool, an int64, a uint64 or a string.
type Parameter struct {
	Name  string
	Value any
}

// runSetParameters are the parameters a run sets itself: a stateful
// model's sequence, and the answer's form over REST.
var runSetParameters = []string{"sequence_id", "sequence_start", "sequence_end", "binary_data_output"}

// checkParameters checks Config.Parameters: named, once each, none the
// run sets itself (Config.Priority sets priority), each of a type a
// request parameter takes.
func (c Config) checkParameters() error {
	seen := map[string]bool{}
	for _, p := range c.Parameters {
		switch {
		case p.Name == "":
			return fmt.Errorf("%w: a request parameter without a name", ErrConfig)
		case seen[p.Name]:
			return fmt.Errorf("%w: request parameter %q given twice", ErrConfig, p.Name)
		case slices.Contains(runSetParameters, p.Name):
			return fmt.Errorf("%w: request parameter %q is one the run sets itself", ErrConfig, p.Name)
		case p.Name == "priority" && c.Priority > 0:
			return fmt.Errorf("%w: request parameter priority and a priority level: give one", ErrConfig)
		}
		switch p.Value.(type) {
		case bool, int64, uint64, string:
		default:
			return fmt.Errorf("%w: request parameter %q: a %T; give a bool, an integer or a string", ErrConfig, p.Name, p.Value)
		}
		seen[p.Name] = true
	}
	return nil
}

// requestParameters are the parameters every request of the run carries:
// Config.Parameters, and Config.Priority's.
func (c Config) requestParameters() []Parameter {
	ps := slices.Clone(c.Parameters)
	if c.Priority > 0 {
		ps = append(ps, Parameter{Name: "priority", Value: c.Priority})
	}
	return ps
}

// jsonMembers is ps as the members of a JSON object.
func jsonMembers(ps []Parameter) string {
	members := make([]string, len(ps))
	for i, p := range ps {
		name, _ := json.Marshal(p.Name)
		value, _ := json.Marshal(p.Value) // bool, integers, string: never an error
		members[i] = string(name) + ":" + string(value)
	}
	return strings.Join(members, ",")
}

// grpcParameter is v (a Parameter's Value) as ModelInfer carries it.
func grpcParameter(v any) *pb.InferParameter {
	switch x := v.(type) {
	case bool:
		return &pb.InferParameter{ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: x}}
	case int64:
		return &pb.InferParameter{ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: x}}
	case uint64:
		return &pb.InferParameter{ParameterChoice: &pb.InferParameter_Uint64Param{Uint64Param: x}}
	}
	return &pb.InferParameter{ParameterChoice: &pb.InferParameter_StringParam{StringParam: fmt.Sprint(v)}}
}

// parameterMap is ps by name; nil when none.
func parameterMap(ps []Parameter) map[string]any {
	if len(ps) == 0 {
		return nil
	}
	out := make(map[string]any, len(ps))
	for _, p := range ps {
		out[p.Name] = p.Value
	}
	return out
}

// withParams is ps each carrying params in its JSON (ps itself when there
// are none to add).
func withParams(ps []*Payload, params []Parameter) []*Payload {
	if len(params) == 0 {
		return ps
	}
	out := make([]*Payload, len(ps))
	for i, p := range ps {
		out[i] = p.withParameters(jsonMembers(params))
	}
	return out
}

// addGRPCParameters sets params on req.
func addGRPCParameters(req *pb.ModelInferRequest, params []Parameter) {
	for _, p := range params {
		if req.Parameters == nil {
			req.Parameters = map[string]*pb.InferParameter{}
		}
		req.Parameters[p.Name] = grpcParameter(p.Value)
	}
}

// grpcRequest is p as a ModelInfer message to c's model and version.
func (c Config) grpcRequest(p *Payload) (*pb.ModelInferRequest, error) {
	req, err := p.GRPCRequest(c.Model)
	if err != nil {
		return nil, err
	}
	req.ModelVersion = c.ModelVersion
	return req, nil
}
