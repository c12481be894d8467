package store

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestPlans(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, WithClock(newTestClock().Now))

	_, err := s.LatestPlan(ctx)
	require.ErrorIs(t, err, ErrNotFound)

	var ids []int64
	for i, algo := range []string{"gpulet", "gpulet-int", "sbp", "ideal"} {
		plan := json.RawMessage(`{"schedulable":true,"gpus":[],"unscheduled":{"m":` + string(rune('0'+i)) + `}}`)
		id, err := s.SavePlan(ctx, PlanRecord{Algorithm: algo, Reason: "period", Plan: plan, Schedulable: i%2 == 0})
		require.NoError(t, err)
		ids = append(ids, id)
	}

	latest, err := s.LatestPlan(ctx)
	require.NoError(t, err)
	require.Equal(t, ids[3], latest.ID)
	require.Equal(t, "ideal", latest.Algorithm)
	require.False(t, latest.Schedulable)
	require.JSONEq(t, `{"schedulable":true,"gpus":[],"unscheduled":{"m":3}}`, string(latest.Plan))
	require.False(t, latest.CreatedAt.IsZero())

	tests := []struct {
		name     string
		beforeID int64
		limit    int
		want     []int64
	}{
		{"all newest first", 0, 0, []int64{ids[3], ids[2], ids[1], ids[0]}},
		{"first page", 0, 2, []int64{ids[3], ids[2]}},
		{"next page", ids[2], 2, []int64{ids[1], ids[0]}},
		{"past the end", ids[0], 2, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.Plans(ctx, tt.beforeID, tt.limit)
			require.NoError(t, err)
			var gotIDs []int64
			for _, p := range got {
				gotIDs = append(gotIDs, p.ID)
			}
			require.Equal(t, tt.want, gotIDs)
		})
	}

	_, err = s.SavePlan(ctx, PlanRecord{Algorithm: "sbp", Plan: json.RawMessage(`{"gpus": [`)})
	require.ErrorIs(t, err, ErrInvalid)
	_, err = s.SavePlan(ctx, PlanRecord{Plan: json.RawMessage(`{}`)})
	require.ErrorIs(t, err, ErrInvalid)
}

// Pruning deletes the plans saved before the cut, but never the newest: the
// plan in force stays however old it is.
func TestPrunePlansKeepsTheNewest(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var ids []int64
	for i := range 3 {
		id, err := s.SavePlan(ctx, PlanRecord{CreatedAt: t0.Add(time.Duration(i) * time.Hour), Algorithm: "gpulet-int", Plan: json.RawMessage(`{}`)})
		require.NoError(t, err)
		ids = append(ids, id)
	}
	tests := []struct {
		name   string
		before time.Time
		pruned int64
		left   []int64
	}{
		{"nothing older", t0, 0, []int64{ids[2], ids[1], ids[0]}},
		{"the older two", t0.Add(90 * time.Minute), 2, []int64{ids[2]}},
		{"all older, the newest kept", t0.Add(5 * time.Hour), 0, []int64{ids[2]}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := s.PrunePlans(ctx, tt.before)
			require.NoError(t, err)
			require.Equal(t, tt.pruned, n)
			got, err := s.Plans(ctx, 0, 0)
			require.NoError(t, err)
			var left []int64
			for _, p := range got {
				left = append(left, p.ID)
			}
			require.Equal(t, tt.left, left)
		})
	}
	id, err := s.SavePlan(ctx, PlanRecord{Algorithm: "gpulet-int", Plan: json.RawMessage(`{}`)})
	require.NoError(t, err)
	require.Greater(t, id, ids[2])
}
