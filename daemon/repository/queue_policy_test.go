package repository

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/gpulet/gpuletd/kserve/tritonpb"
)

// A request runs under its level's queue policy, else the model's
// default; its own timeout stands where the policy sets none, shortens
// the policy's only where the policy allows it, and binds nothing under
// DELAY.
func TestRequestTimeoutUnderAQueuePolicy(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name   string
		policy QueuePolicy
		asked  time.Duration
		want   time.Duration
	}{
		{"no policy, no timeout", QueuePolicy{}, 0, 0},
		{"no policy: the request's own", QueuePolicy{}, 7 * ms, 7 * ms},
		{"the policy's when the request asks none", QueuePolicy{Timeout: 5 * ms}, 0, 5 * ms},
		{"the policy's without override", QueuePolicy{Timeout: 5 * ms}, 2 * ms, 5 * ms},
		{"a shorter one with override", QueuePolicy{Timeout: 5 * ms, AllowOverride: true}, 2 * ms, 2 * ms},
		{"never a longer one", QueuePolicy{Timeout: 5 * ms, AllowOverride: true}, 9 * ms, 5 * ms},
		{"DELAY refuses nothing", QueuePolicy{Timeout: 5 * ms, Delay: true}, 2 * ms, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, tc.policy.RequestTimeout(tc.asked))
		})
	}

	c := ModelConfig{PriorityLevels: 3, Queue: QueuePolicy{Timeout: ms}, LevelQueues: map[int]QueuePolicy{2: {MaxQueue: 4}}}
	require.Equal(t, QueuePolicy{MaxQueue: 4}, c.QueuePolicyFor(2), "level 2's own")
	require.Equal(t, QueuePolicy{Timeout: ms}, c.QueuePolicyFor(3), "the default")
	one := ModelConfig{PriorityLevels: 1, LevelQueues: map[int]QueuePolicy{1: {MaxQueue: 4}}}
	require.Equal(t, QueuePolicy{MaxQueue: 4}, one.QueuePolicyFor(0), "one level: every request is at it")
	require.Equal(t, "dynamic_batching.priority_queue_policy[2]", c.QueuePolicyWhere(2))
	require.Equal(t, "dynamic_batching.default_queue_policy", c.QueuePolicyWhere(3))
	require.Equal(t, "dynamic_batching.priority_queue_policy[1]", one.QueuePolicyWhere(0))
	require.Equal(t, "dynamic_batching.default_queue_policy", ModelConfig{}.QueuePolicyWhere(0))
}

// config.pbtxt's queue policies are read, checked, and written back as
// they were.
func TestTritonQueuePolicies(t *testing.T) {
	for _, tc := range []struct {
		name   string
		block  string
		def    QueuePolicy
		levels map[int]QueuePolicy
		bad    string
		note   string
	}{
		{name: "none", block: ""},
		{name: "a default timeout",
			block: "default_queue_policy { default_timeout_microseconds: 2500 allow_timeout_override: true max_queue_size: 8 }",
			def:   QueuePolicy{Timeout: 2500 * time.Microsecond, AllowOverride: true}},
		{name: "levels",
			block:  "priority_levels: 2 priority_queue_policy { key: 2 value { max_queue_size: 3 default_timeout_microseconds: 1000 timeout_action: DELAY } }",
			levels: map[int]QueuePolicy{2: {MaxQueue: 3, Timeout: time.Millisecond, Delay: true}},
			note:   "dynamic_batching.priority_queue_policy[2].timeout_action DELAY"},
		{name: "a timeout past a day", block: "default_queue_policy { default_timeout_microseconds: 86400000001 }",
			bad: "dynamic_batching.default_queue_policy.default_timeout_microseconds: 86400000001 is not allowed; use 0 (none) to 86400000000"},
		{name: "a level's bound too large", block: "priority_queue_policy { key: 1 value { max_queue_size: 2000000 } }",
			levels: map[int]QueuePolicy{1: {}},
			bad:    "dynamic_batching.priority_queue_policy[1].max_queue_size: 2000000 is not allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := &tritonpb.ModelDynamicBatching{}
			require.NoError(t, prototext.Unmarshal([]byte(tc.block), db))
			var bads, notes []string
			collect := func(to *[]string) func(string, ...any) {
				return func(f string, a ...any) { *to = append(*to, fmt.Sprintf(f, a...)) }
			}
			def, levels := tritonQueuePolicies(db, collect(&bads), collect(&notes))
			if tc.bad != "" {
				require.Len(t, bads, 1)
				require.True(t, strings.HasPrefix(bads[0], tc.bad), bads[0])
				return
			}
			require.Empty(t, bads)
			require.Equal(t, tc.def, def)
			require.Equal(t, tc.levels, levels)
			if tc.note != "" {
				require.Len(t, notes, 1)
				require.Contains(t, notes[0], tc.note)
			} else {
				require.Empty(t, notes)
			}
			if qp := db.GetDefaultQueuePolicy(); qp != nil {
				require.True(t, proto.Equal(qp, def.Triton(int(qp.MaxQueueSize))), "written back as read")
			}
			for k, qp := range db.GetPriorityQueuePolicy() {
				require.True(t, proto.Equal(qp, levels[int(k)].Triton(levels[int(k)].MaxQueue)), "level %d written back as read", k)
			}
		})
	}
}

// The status lists the policies that ask something, the default's first.
func TestQueuePoliciesInTheStatus(t *testing.T) {
	c := ModelConfig{Queue: QueuePolicy{Timeout: 150 * time.Microsecond},
		LevelQueues: map[int]QueuePolicy{3: {Delay: true, Timeout: time.Millisecond}, 1: {MaxQueue: 2, AllowOverride: true}, 2: {}}}
	require.Equal(t, []QueuePolicyStatus{
		{Level: 0, TimeoutUS: 150, TimeoutAction: "REJECT"},
		{Level: 1, AllowTimeoutOverride: true, TimeoutAction: "REJECT", MaxQueueSize: 2},
		{Level: 3, TimeoutUS: 1000, TimeoutAction: "DELAY"},
	}, QueuePolicies(c))
	require.Nil(t, QueuePolicies(ModelConfig{}))
}
