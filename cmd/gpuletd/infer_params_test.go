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
