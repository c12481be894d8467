package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSequenceFlagsSetTheParameters(t *testing.T) {
	body := []byte(`{"id":"r1","parameters":{"timeout":5000},"inputs":[{"name":"x","shape":[1],"datatype":"FP32","data":[1]}]}`)
	tests := []struct {
		flags sequenceFlags
		want  map[string]any
	}{
		{sequenceFlags{id: "42", start: true}, map[string]any{"timeout": 5000.0, "sequence_id": 42.0, "sequence_start": true, "sequence_end": false}},
		{sequenceFlags{id: "call-7", end: true}, map[string]any{"timeout": 5000.0, "sequence_id": "call-7", "sequence_start": false, "sequence_end": true}},
	}
	for _, tc := range tests {
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
	_, err := (&sequenceFlags{id: "1"}).set([]byte("not json"))
	require.ErrorContains(t, err, "--sequence-id needs a JSON request")
}
