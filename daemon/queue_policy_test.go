package daemon

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/kserve"
)

// A request runs under its priority level's queue policy: the policy's
// timeout sets its deadline (a limit asked for, no miss of the plan's),
// unless its action is DELAY; a level bounded by max_queue_size refuses
// what is past the bound, queue_full, and counts a request only while it
// is being served.
func TestExecuteUnderAQueuePolicy(t *testing.T) {
	n := &node{log: zap.NewNop(), router: newRouter(), catalog: newCatalog([]string{t.TempDir()}, testRepositoryOptions(0), nil, nil, zap.NewNop())}
	n.metrics = newMetrics(n)
	n.cfg.Store(&config.Config{})
	m := askModel() // an SLO of 50 ms
	req := func(priority int64) *kserve.Request {
		return &kserve.Request{Inputs: []tensor.Tensor{fp32("x", []int64{1, 4}, make([]byte, 16)...)}, Priority: priority}
	}
	for _, tc := range []struct {
		name   string
		policy repository.QueuePolicy
		own    bool
	}{
		{"none", repository.QueuePolicy{}, false},
		{"a timeout within the SLO", repository.QueuePolicy{Timeout: time.Millisecond}, true},
		{"a timeout past the SLO", repository.QueuePolicy{Timeout: time.Second}, false},
		{"DELAY", repository.QueuePolicy{Timeout: time.Millisecond, Delay: true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m.Config.Queue = tc.policy
			_, ierr := n.execute(context.Background(), m, req(0), time.Now())
			require.NotNil(t, ierr, "no gpu-let serves it")
			require.Equal(t, reasonUnroutable, ierr.reason)
			require.Equal(t, tc.own, ierr.ownLimit)
		})
	}
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		want    string
	}{
		{"its own", time.Millisecond, "; its timeout of 1ms, from its timeout parameter, ends before the SLO's 50ms"},
		{"the policy's", 2 * time.Millisecond, "; its timeout of 2ms, from the model's queue policy (dynamic_batching.default_queue_policy.default_timeout_microseconds), ends before the SLO's 50ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, timeoutWords(tc.timeout, time.Millisecond, 50*time.Millisecond, "dynamic_batching.default_queue_policy"))
		})
	}

	m.Config.Queue = repository.QueuePolicy{}
	m.Config.PriorityLevels, m.Config.DefaultPriority = 2, 2
	m.Config.LevelQueues = map[int]repository.QueuePolicy{2: {MaxQueue: 1}}
	release, ok := n.holds.hold(m.Name, 2, 1) // one of level 2 being served
	require.True(t, ok)
	for _, priority := range []int64{2, 0} { // asked, and the default level
		_, ierr := n.execute(context.Background(), m, req(priority), time.Now())
		require.NotNil(t, ierr)
		require.Equal(t, reasonQueueFull, ierr.reason)
		require.Equal(t, http.StatusServiceUnavailable, ierr.code)
		require.True(t, ierr.retryable())
		require.True(t, ierr.ownLimit, "not the plan's miss")
		require.Equal(t, "m: 1 requests of priority level 2 are being served, the most its priority_queue_policy's max_queue_size allows; retry later", ierr.msg)
	}
	_, ierr := n.execute(context.Background(), m, req(1), time.Now())
	require.Equal(t, reasonUnroutable, ierr.reason, "level 1 has no bound")
	release()
	_, ierr = n.execute(context.Background(), m, req(2), time.Now())
	require.Equal(t, reasonUnroutable, ierr.reason, "room again")
	require.Empty(t, n.holds.n, "an answered request is held no more")
}
