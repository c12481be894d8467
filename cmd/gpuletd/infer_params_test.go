package main

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParamFlagsSetTheParameters(t *testing.T) {
	body := []byte(`{"id":"r1","parameters":{"timeout":5000},"inputs":[{"name":"x","shape":[1],"datatype":"FP32","data":[1]}]}`)
	tests := []struct {
		flags paramFlags
		want  map[string]any
	}{
		{paramFlags{id: "42", start: true}, map[string]any{"timeout": 5000.0, "sequence_id": 42.0, "sequence_start": true, "sequence_end": false}},
		{paramFlags{id: "call-7", end: true}, map[string]any{"timeout": 5000.0, "sequence_id": "call-7", "sequence_start": false, "sequence_end": true}},
		{paramFlags{priority: 2}, map[string]any{"timeout": 5000.0, "priority": 2.0}},
		{paramFlags{timeout: 1500 * time.Microsecond}, map[string]any{"timeout": 1500.0}},
		{paramFlags{timeout: time.Nanosecond}, map[string]any{"timeout": 1.0}},
	}
	for _, tc := range tests {
		require.True(t, tc.flags.given())
		out, err := tc.flags.set(body)
		require.NoError(t, err)
		var doc struct {
			ID         string            `json:"id"`
			Parameters map[string]any    `json:"parameters"`
			Inputs     []json.RawMessage `json:"inputs"`
		}
		require.NoError(t, json.Unmarshal(out, &doc))
		require.Equal(t, "r1", doc.ID)
		require.Equal(t, tc.want, doc.Parameters)
		require.Len(t, doc.Inputs, 1)
	}
	require.False(t, (&paramFlags{}).given())
	_, err := (&paramFlags{id: "1"}).set([]byte("not json"))
	require.ErrorContains(t, err, "--sequence-id, --priority and --timeout need a JSON request")
}

// --request-parameter reads perf_analyzer's NAME:VALUE:TYPE, and infer's
// request carries each beside the parameters it has; one a flag of its own
// sets is refused.
func TestRequestParameterFlag(t *testing.T) {
	var r requestParamsFlag
	for _, s := range []string{"max_tokens:256:int", "greedy:true:bool", "stop:a:b:string", "big:18446744073709551615:INT"} {
		require.NoError(t, r.Set(s), s)
	}
	require.Equal(t, requestParamsFlag{{Name: "max_tokens", Value: int64(256)}, {Name: "greedy", Value: true},
		{Name: "stop", Value: "a:b"}, {Name: "big", Value: uint64(18446744073709551615)}}, r)
	require.Equal(t, "max_tokens:256:int,greedy:true:bool,stop:a:b:string,big:18446744073709551615:int", r.String())
	for s, says := range map[string]string{
		"max_tokens":         "give NAME:VALUE:TYPE",
		":1:int":             "give NAME:VALUE:TYPE",
		"n:1.5:int":          `"1.5" is not a whole number`,
		"b:yes:bool":         `"yes" is not a bool`,
		"f:0.5:float":        `type "float": give bool, int or string`,
		"max_tokens:512:int": "parameter max_tokens is given twice",
	} {
		require.ErrorContains(t, r.Set(s), says, s)
	}

	flags := paramFlags{priority: 1, others: requestParamsFlag{{Name: "tag", Value: "x"}}}
	require.True(t, flags.given())
	out, err := flags.set([]byte(`{"inputs":[]}`))
	require.NoError(t, err)
	require.JSONEq(t, `{"inputs":[],"parameters":{"priority":1,"tag":"x"}}`, string(out))
	flags.others = requestParamsFlag{{Name: "priority", Value: int64(3)}}
	_, err = flags.set([]byte(`{"inputs":[]}`))
	require.ErrorContains(t, err, "--request-parameter priority and --priority both set it")
}
