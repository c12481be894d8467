package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// paramFlags are infer's flags that set its request's parameters: its
// sequence of a stateful model (sequence_batching), as tritonclient's
// sequence_id, sequence_start and sequence_end arguments do, its priority
// level and its timeout, as tritonclient's priority and timeout do.
type paramFlags struct {
	id         string
	start, end bool
	priority   uint64
	timeout    time.Duration
	others     requestParamsFlag // --request-parameter
}

func (s *paramFlags) register(f *pflag.FlagSet) {
	f.StringVar(&s.id, "sequence-id", "", "send the request in this sequence of a stateful model (sequence_batching): a number, or any other text as a string ID")
	f.BoolVar(&s.start, "sequence-start", false, "the request starts its sequence")
	f.BoolVar(&s.end, "sequence-end", false, "the request ends its sequence")
	f.Uint64Var(&s.priority, "priority", 0, "ask for this priority level of the model's (its priority_levels; 1 the highest); 0 asks none, the model's default")
	f.DurationVar(&s.timeout, "timeout", 0, "the request's timeout parameter: it is refused if it cannot be answered within it (as the model's queue policy lets a request's own timeout count); 0 sets none")
	f.Var(&s.others, "request-parameter", requestParamsUsage)
}

// given says a parameter flag was set.
func (s *paramFlags) given() bool {
	return s.sequence() || s.priority > 0 || s.timeout > 0 || len(s.others) > 0
}

func (s *paramFlags) sequence() bool { return s.id != "" || s.start || s.end }

// setsItself names the flag given that sets parameter name, "" when none.
func (s *paramFlags) setsItself(name string) string {
	switch {
	case s.sequence() && strings.HasPrefix(name, "sequence_"):
		return "--sequence-id/--sequence-start/--sequence-end"
	case s.priority > 0 && name == "priority":
		return "--priority"
	case s.timeout > 0 && name == "timeout":
		return "--timeout"
	}
	return ""
}

// set writes the parameters the flags give into a JSON request body,
// beside the parameters it has.
func (s *paramFlags) set(body []byte) ([]byte, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("infer: --sequence-id, --priority and --timeout need a JSON request: %w", err)
	}
	params := map[string]any{}
	if raw, ok := doc["parameters"]; ok {
		if err := json.Unmarshal(raw, &params); err != nil {
			return nil, fmt.Errorf("infer: the request's parameters: %w", err)
		}
	}
	for _, p := range s.others {
		if set := s.setsItself(p.Name); set != "" {
			return nil, fmt.Errorf("infer: --request-parameter %s and %s both set it: give one", p.Name, set)
		}
		params[p.Name] = p.Value
	}
	if s.id != "" {
		var id any = s.id
		if n, err := strconv.ParseUint(s.id, 10, 64); err == nil {
			id = n
		}
		params["sequence_id"] = id
	}
	if s.sequence() {
		params["sequence_start"], params["sequence_end"] = s.start, s.end
	}
	if s.priority > 0 {
		params["priority"] = s.priority
	}
	if s.timeout > 0 {
		params["timeout"] = max(s.timeout.Microseconds(), 1) // µs in the protocol
	}
	var err error
	if doc["parameters"], err = json.Marshal(params); err != nil {
		return nil, err
	}
	return json.Marshal(doc)
}
