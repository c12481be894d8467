package daemon

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/executor/tensor"
)

// A request an executor answered without running it (draining, stopping,
// its device failed with the request queued) is sent once more, to
// another gpu-let of its model, while its deadline allows; any other
// refusal stands, and so does the first answer when no other gpu-let
// takes it.
func TestSendAgainIfNotRun(t *testing.T) {
	m := &repository.Model{Name: "lenet5"}
	notRun := &inferError{code: http.StatusServiceUnavailable, reason: reasonUnavailable, msg: "lenet5: executor is draining", notRun: true}
	refused := &inferError{code: http.StatusServiceUnavailable, reason: reasonDeadline, msg: "lenet5: the deadline cannot be met"}
	first, second := &gpuletRun{id: "gpu0-50-1"}, &gpuletRun{id: "gpu0-50-2"}
	type answer struct {
		g    *gpuletRun // nil: routed nowhere
		ierr *inferError
	}
	for _, tc := range []struct {
		name     string
		answers  []answer
		deadline time.Duration
		sends    int
		want     *inferError
	}{
		{name: "answered", answers: []answer{{first, nil}}, deadline: time.Minute, sends: 1},
		{name: "not run, then answered elsewhere", answers: []answer{{first, notRun}, {second, nil}}, deadline: time.Minute, sends: 2},
		{name: "not run, then refused elsewhere", answers: []answer{{first, notRun}, {second, refused}}, deadline: time.Minute, sends: 2, want: refused},
		{name: "not run, no other gpu-let", answers: []answer{{first, notRun}, {nil, refused}}, deadline: time.Minute, sends: 2, want: notRun},
		{name: "not run, past its deadline", answers: []answer{{first, notRun}}, deadline: -time.Millisecond, sends: 1, want: notRun},
		{name: "refused", answers: []answer{{first, refused}}, deadline: time.Minute, sends: 1, want: refused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sends int
			var nots []*gpuletRun
			send := func(_ context.Context, models []*repository.Model, not *gpuletRun, _ []tensor.Tensor, _ []string, _ time.Time) (*executed, *repository.Model, *gpuletRun, *inferError) {
				a := tc.answers[sends]
				sends++
				nots = append(nots, not)
				if a.g == nil {
					return nil, nil, nil, a.ierr
				}
				if a.ierr != nil {
					return nil, models[0], a.g, a.ierr
				}
				return &executed{batch: 1}, models[0], a.g, nil
			}
			res, ierr := sendAgainIfNotRun(context.Background(), send, m, nil, nil, time.Now().Add(tc.deadline))
			require.Equal(t, tc.sends, sends)
			require.Same(t, tc.want, ierr)
			require.Equal(t, tc.want == nil, res != nil)
			require.Nil(t, nots[0], "the first send excepts no gpu-let")
			if sends > 1 {
				require.Same(t, first, nots[1], "the second excepts the gpu-let that did not run it")
			}
		})
	}
	require.True(t, reroutable(notRun), "a pipeline's step is rerouted too")
}
