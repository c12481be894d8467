package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/gorilla/mux"

	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
)

// traceModel resolves the model a trace setting request names ("" for the
// global settings).
func (n *node) traceModel(name string) (string, *inferError) {
	if name == "" {
		return "", nil
	}
	m, ierr := n.lookupModel(name, "")
	if ierr != nil {
		return "", ierr
	}
	return m.Name, nil
}

// updateTraces applies trace setting changes (none: only reads) of model
// ("" the global ones) and returns the settings in force.
func (n *node) updateTraces(model string, changes map[string][]string) (map[string][]string, *inferError) {
	out, err := n.traces.update(model, changes)
	if err != nil {
		return nil, badRequest("%v", err)
	}
	return out, nil
}

// handleTraceSettings answers GET and POST /v2/trace/setting and
// /v2/models/{model}/trace/setting: the settings in force, after the
// changes a POST gives. Values are JSON strings, arrays of strings (the
// trace level) or null (a model's own setting taken away).
func (n *node) handleTraceSettings(w http.ResponseWriter, r *http.Request) {
	model, ierr := n.traceModel(mux.Vars(r)["model"])
	if ierr != nil {
		writeInferError(w, ierr)
		return
	}
	var changes map[string][]string
	if r.Method == http.MethodPost {
		var raw map[string]json.RawMessage
		present, err := readJSONBody(r, maxParamsBody, &raw)
		if err == nil && !present {
			err = errors.New("the body is empty")
		}
		if err == nil {
			changes, err = traceValues(raw)
		}
		if err != nil {
			writeInferError(w, badRequest("trace settings: %v; give the settings to change as a JSON object", err))
			return
		}
	}
	out, ierr := n.updateTraces(model, changes)
	if ierr != nil {
		writeInferError(w, ierr)
		return
	}
	body := make(map[string]any, len(out))
	for k, v := range out {
		if k == traceLevel {
			body[k] = v
		} else {
			body[k] = v[0]
		}
	}
	writeJSON(w, http.StatusOK, body)
}

// traceValues reads a trace setting request's values: a string, an array
// of strings, a whole number (taken as its string) or null (nil).
func traceValues(raw map[string]json.RawMessage) (map[string][]string, error) {
	out := make(map[string][]string, len(raw))
	for k, v := range raw {
		var s string
		var list []string
		var num json.Number
		switch {
		case string(v) == "null":
			out[k] = nil
		case json.Unmarshal(v, &s) == nil:
			out[k] = []string{s}
		case json.Unmarshal(v, &list) == nil && list != nil:
			out[k] = list
		case json.Unmarshal(v, &num) == nil:
			if _, err := strconv.ParseInt(num.String(), 10, 64); err != nil {
				return nil, fmt.Errorf("%s: %s is not a whole number", k, num)
			}
			out[k] = []string{num.String()}
		default:
			return nil, fmt.Errorf("%s: give a string, an array of strings or null", k)
		}
	}
	return out, nil
}

// TraceSetting reads the trace settings and, with settings given, changes
// them first (the trace extension); a setting with no value takes a
// model's own setting away.
func (s *grpcServer) TraceSetting(_ context.Context, r *pb.TraceSettingRequest) (*pb.TraceSettingResponse, error) {
	model, ierr := s.n.traceModel(r.ModelName)
	if ierr != nil {
		return nil, grpcError(ierr)
	}
	changes := make(map[string][]string, len(r.Settings))
	for k, v := range r.Settings {
		if len(v.GetValue()) == 0 {
			changes[k] = nil
			continue
		}
		changes[k] = v.GetValue()
	}
	out, ierr := s.n.updateTraces(model, changes)
	if ierr != nil {
		return nil, grpcError(ierr)
	}
	res := &pb.TraceSettingResponse{Settings: make(map[string]*pb.TraceSettingResponse_SettingValue, len(out))}
	for k, v := range out {
		res.Settings[k] = &pb.TraceSettingResponse_SettingValue{Value: v}
	}
	return res, nil
}
