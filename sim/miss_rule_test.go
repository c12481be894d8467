package sim

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A model that keeps missing its SLO on the plan in force, with its rate
// where the plan put it, is re-planned with more room before the period
// (control.Misses, as the daemon), and misses less once the new plan
// serves.
func TestMissRuleReplans(t *testing.T) {
	res, _ := run(t, load(t, "miss-rule.yaml"), Options{})
	require.GreaterOrEqual(t, len(res.Plans), 2, "%+v", res.Plans)
	miss := res.Plans[1]
	require.Contains(t, miss.Reason, "alexnet missed its SLO")
	require.Less(t, miss.AtS, 10.0, "before the first period")
	var before, after Window
	for _, w := range res.Windows {
		to := &before
		if w.StartS >= miss.ServingS {
			to = &after
		}
		to.Requests += w.Requests
		to.Violations += w.Violations
	}
	t.Logf("%s at %.1f s, serving from %.1f s; missed %d of %d before, %d of %d after", miss.Reason, miss.AtS, miss.ServingS,
		before.Violations, before.Requests, after.Violations, after.Requests)
	require.Greater(t, float64(before.Violations), 0.01*float64(before.Requests), "the start plan misses")
	require.Less(t, float64(after.Violations), 0.01*float64(after.Requests), "the miss rule's plan does not")
}
