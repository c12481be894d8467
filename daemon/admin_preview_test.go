package daemon

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A preview whose rates name a model the node does not serve is refused
// with the names it does, rather than planned without it (a misspelt name
// gave a schedulable plan that left the model out).
func TestPreviewRefusesUnknownModels(t *testing.T) {
	n, _ := twoModelNode(t, nil)
	tests := []struct {
		name, body, want string
	}{
		{"one unknown", `{"rates": {"a": 5, "resnt50": 10}}`, `unknown model "resnt50": the node plans for a, b`},
		{"several, sorted", `{"rates": {"z": 1, "c": 2}}`, `unknown models "c", "z": the node plans for a, b`},
		{"not JSON", `{"rates": 5}`, "bad preview request: json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			n.handleAdminPreview(w, httptest.NewRequest(http.MethodPost, "/api/v1/plan/preview", strings.NewReader(tc.body)))
			require.Equal(t, http.StatusBadRequest, w.Code)
			var answer struct{ Error string }
			require.NoError(t, json.Unmarshal(w.Body.Bytes(), &answer))
			require.Contains(t, answer.Error, tc.want)
		})
	}
}
