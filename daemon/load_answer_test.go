package daemon

import (
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// A load answers for its own model. Before, a re-plan that failed for
// another model (a gpu-let of its that did not start) failed the load with
// 503 although the loaded model served.
func TestLoadAnswersForItsOwnModel(t *testing.T) {
	replanErr := errors.New("apply plan: start gpu-let on gpu0: executor exited")
	tests := []struct {
		name     string
		routeA   bool   // a gpu-let up serves a
		unserved string // why a is not served, when set
		err      error  // the re-plan's error
		code     int    // 0: the load succeeds
		says     string
	}{
		{name: "placed and served", routeA: true},
		{name: "served, another model's gpu-let failed", routeA: true, err: replanErr},
		{name: "its own gpu-let failed", unserved: "its gpu-let on gpu0 did not start: executor exited", err: replanErr,
			code: http.StatusServiceUnavailable, says: "model a loaded but not served: its gpu-let on gpu0 did not start: executor exited"},
		{name: "the plan failed, nothing names a", err: replanErr,
			code: http.StatusServiceUnavailable, says: "model a loaded but not placed: apply plan: start gpu-let on gpu0: executor exited"},
		{name: "left out of the plan", unserved: "no latency profile on any device",
			code: http.StatusServiceUnavailable, says: "model a loaded but not served: no latency profile on any device"},
		{name: "on its way", code: http.StatusServiceUnavailable, says: "model a loaded but not served: " + waitingReason},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, lat := twoModelNode(t, nil)
			if tc.routeA {
				n.router.install(map[string][]routeEntry{"a": {{g: &gpuletRun{id: "g"}, weight: 1, lat: lat}}})
			}
			if tc.unserved != "" {
				n.unserved.set("a", tc.unserved)
			}
			ierr := n.loadAnswer("a", tc.err)
			if tc.code == 0 {
				require.Nil(t, ierr)
				return
			}
			require.NotNil(t, ierr)
			require.Equal(t, tc.code, ierr.code)
			require.Equal(t, reasonUnplaced, ierr.reason)
			require.Equal(t, tc.says, ierr.msg)
		})
	}
}
