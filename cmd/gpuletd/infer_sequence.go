package main

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// sequenceFlags are infer's flags that place its request in a sequence of
// a stateful model (sequence_batching), as tritonclient's sequence_id,
// sequence_start and sequence_end arguments do.
type sequenceFlags struct {
	id         string
	start, end bool
}

func (s *sequenceFlags) register(f *pflag.FlagSet) {
	f.StringVar(&s.id, "sequence-id", "", "send the request in this sequence of a stateful model (sequence_batching): a number, or any other text as a string ID")
	f.BoolVar(&s.start, "sequence-start", false, "the request starts its sequence")
	f.BoolVar(&s.end, "sequence-end", false, "the request ends its sequence")
}

// given says a sequence flag was set.
func (s *sequenceFlags) given(cmd *cobra.Command) bool {
	for _, name := range []string{"sequence-id", "sequence-start", "sequence-end"} {
		if cmd.Flags().Changed(name) {
			return true
		}
	}
	return false
}

// set writes the sequence parameters into a JSON request body, beside the
// parameters it has.
func (s *sequenceFlags) set(body []byte) ([]byte, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("infer: --sequence-id needs a JSON request: %w", err)
	}
	params := map[string]any{}
	if raw, ok := doc["parameters"]; ok {
		if err := json.Unmarshal(raw, &params); err != nil {
			return nil, fmt.Errorf("infer: the request's parameters: %w", err)
		}
	}
	if s.id != "" {
		var id any = s.id
		if n, err := strconv.ParseUint(s.id, 10, 64); err == nil {
			id = n
		}
		params["sequence_id"] = id
	}
	params["sequence_start"], params["sequence_end"] = s.start, s.end
	var err error
	if doc["parameters"], err = json.Marshal(params); err != nil {
		return nil, err
	}
	return json.Marshal(doc)
}
