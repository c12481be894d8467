package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/daemon/repository"
)

func TestQueuePolicyText(t *testing.T) {
	for _, tc := range []struct {
		policies []repository.QueuePolicyStatus
		want     string
	}{
		{nil, ""},
		{[]repository.QueuePolicyStatus{{TimeoutUS: 150, TimeoutAction: "REJECT"}, {Level: 1, MaxQueueSize: 2, TimeoutAction: "REJECT"}},
			"every level: a timeout of 150µs (a request's own does not count); level 1: at most 2 being served at once"},
		{[]repository.QueuePolicyStatus{{Level: 2, TimeoutUS: 2000, AllowTimeoutOverride: true, TimeoutAction: "REJECT", MaxQueueSize: 4}},
			"level 2: a timeout of 2ms (a request's own may shorten it), at most 4 being served at once"},
		{[]repository.QueuePolicyStatus{{TimeoutUS: 2000, TimeoutAction: "DELAY"}}, "every level: a timeout of 2ms that refuses nothing (DELAY)"},
		{[]repository.QueuePolicyStatus{{AllowTimeoutOverride: true, TimeoutAction: "REJECT"}}, "every level: a request's own timeout"},
		{[]repository.QueuePolicyStatus{{TimeoutAction: "DELAY"}}, ""},
	} {
		require.Equal(t, tc.want, queuePolicyText(tc.policies))
	}
}
