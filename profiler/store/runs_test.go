package store

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestProfileRunLifecycle(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, WithClock(newTestClock().Now))
	sha := shaOf("m")

	run, err := s.StartRun(ctx, sha, "cpu", "sizes 25,50,100")
	require.NoError(t, err)
	require.Positive(t, run.ID)
	require.Equal(t, RunRunning, run.Status)

	got, err := s.Run(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, run, got)
	require.True(t, got.FinishedAt.IsZero(), "a running run has no finish time")

	require.NoError(t, s.FinishRun(ctx, run.ID, RunComplete, "36 points"))
	got, err = s.Run(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, RunComplete, got.Status)
	require.Equal(t, "36 points", got.Message)
	require.True(t, got.FinishedAt.After(got.StartedAt))

	tests := []struct {
		name   string
		id     int64
		status RunStatus
		want   error
	}{
		{"finish twice", run.ID, RunFailed, ErrRunFinished},
		{"unknown run", 9999, RunFailed, ErrNotFound},
		{"finish as running", run.ID, RunRunning, ErrInvalid},
		{"made-up status", run.ID, "done", ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.ErrorIs(t, s.FinishRun(ctx, tt.id, tt.status, ""), tt.want)
		})
	}
	got, err = s.Run(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, RunComplete, got.Status, "the first outcome stays")

	_, err = s.StartRun(ctx, "", "cpu", "")
	require.ErrorIs(t, err, ErrInvalid)
}

func TestInterruptRunningRuns(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	a, err := s.StartRun(ctx, shaOf("a"), "cpu", "")
	require.NoError(t, err)
	b, err := s.StartRun(ctx, shaOf("b"), "cpu", "")
	require.NoError(t, err)
	c, err := s.StartRun(ctx, shaOf("a"), "gpu", "")
	require.NoError(t, err)
	require.NoError(t, s.FinishRun(ctx, b.ID, RunFailed, "engine crashed"))

	n, err := s.InterruptRunningRuns(ctx, "daemon restarted")
	require.NoError(t, err)
	require.Equal(t, int64(2), n)

	runs, err := s.Runs(ctx, "", "", 0)
	require.NoError(t, err)
	require.Equal(t, []int64{c.ID, b.ID, a.ID}, []int64{runs[0].ID, runs[1].ID, runs[2].ID}, "newest first")
	require.Equal(t, []RunStatus{RunIncomplete, RunFailed, RunIncomplete}, []RunStatus{runs[0].Status, runs[1].Status, runs[2].Status})
	require.Equal(t, "daemon restarted", runs[0].Message)
	require.False(t, runs[0].FinishedAt.IsZero())

	filtered := []struct {
		name     string
		sha, dev string
		limit    int
		want     []int64
	}{
		{"by model", shaOf("a"), "", 0, []int64{c.ID, a.ID}},
		{"by device", "", "cpu", 0, []int64{b.ID, a.ID}},
		{"by both", shaOf("a"), "cpu", 0, []int64{a.ID}},
		{"limited", "", "", 1, []int64{c.ID}},
	}
	for _, tt := range filtered {
		t.Run(tt.name, func(t *testing.T) {
			runs, err := s.Runs(ctx, tt.sha, tt.dev, tt.limit)
			require.NoError(t, err)
			var ids []int64
			for _, r := range runs {
				ids = append(ids, r.ID)
			}
			require.Equal(t, tt.want, ids)
		})
	}
}
