package store

import (
	"context"
	"path/filepath"
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

// Runs a process left running (it ended during them) are marked
// incomplete, naming it; a run another process is measuring now is not,
// and that process finishes it as its own.
func TestInterruptLeftRuns(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	gone, err := Open(ctx, s.Path(), WithOwner("gpuletd profile (pid 7)"))
	require.NoError(t, err)
	a, err := gone.StartRun(ctx, shaOf("a"), "cpu", "")
	require.NoError(t, err)
	b, err := gone.StartRun(ctx, shaOf("b"), "cpu", "")
	require.NoError(t, err)
	c, err := gone.StartRun(ctx, shaOf("a"), "gpu", "")
	require.NoError(t, err)
	require.NoError(t, gone.FinishRun(ctx, b.ID, RunFailed, "engine crashed"))
	require.NoError(t, gone.Close()) // with a and c running, as a process killed during them
	beside, err := Open(ctx, s.Path(), WithOwner("gpuletd profile (pid 8)"))
	require.NoError(t, err)
	defer beside.Close()
	d, err := beside.StartRun(ctx, shaOf("d"), "cpu", "")
	require.NoError(t, err)

	others, err := s.RunsOfOthers(ctx)
	require.NoError(t, err)
	require.Len(t, others, 1, "a and c are running in the database, but nobody measures them")
	require.Equal(t, d.ID, others[0].ID)
	require.Equal(t, "gpuletd profile (pid 8)", others[0].By)
	mine, err := beside.RunsOfOthers(ctx)
	require.NoError(t, err)
	require.Empty(t, mine, "a process's own runs are not another's")

	n, err := s.InterruptLeftRuns(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(2), n)

	runs, err := s.Runs(ctx, "", "", 0)
	require.NoError(t, err)
	require.Equal(t, []int64{d.ID, c.ID, b.ID, a.ID}, []int64{runs[0].ID, runs[1].ID, runs[2].ID, runs[3].ID}, "newest first")
	require.Equal(t, []RunStatus{RunRunning, RunIncomplete, RunFailed, RunIncomplete},
		[]RunStatus{runs[0].Status, runs[1].Status, runs[2].Status, runs[3].Status})
	require.Equal(t, "interrupted: gpuletd profile (pid 7) stopped during the run", runs[1].Message)
	require.False(t, runs[1].FinishedAt.IsZero())
	locks, err := filepath.Glob(filepath.Join(runLockDir(s.Path()), "*.lock"))
	require.NoError(t, err)
	require.Equal(t, []string{beside.runLockPath(d.ID)}, locks, "the files of the runs left are removed")

	require.NoError(t, beside.FinishRun(ctx, d.ID, RunComplete, "12 points"), "the live run is its process's to finish")
	runs, err = s.Runs(ctx, shaOf("d"), "", 0)
	require.NoError(t, err)
	require.Equal(t, RunComplete, runs[0].Status)
	require.NoFileExists(t, beside.runLockPath(d.ID))
	n, err = s.InterruptLeftRuns(ctx)
	require.NoError(t, err)
	require.Zero(t, n)

	// A run whose process named itself nowhere (a lock it could not
	// take, or a run of an older gpuletd) is left by someone unknown.
	e, err := s.StartRun(ctx, shaOf("e"), "cpu", "")
	require.NoError(t, err)
	s.releaseRun(e.ID)
	n, err = beside.InterruptLeftRuns(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	got, err := s.Run(ctx, e.ID)
	require.NoError(t, err)
	require.Equal(t, "interrupted: the process that ran it stopped during the run", got.Message)

	filtered := []struct {
		name     string
		sha, dev string
		limit    int
		want     []int64
	}{
		{"by model", shaOf("a"), "", 0, []int64{c.ID, a.ID}},
		{"by device", "", "cpu", 0, []int64{e.ID, d.ID, b.ID, a.ID}},
		{"by both", shaOf("a"), "cpu", 0, []int64{a.ID}},
		{"limited", "", "", 1, []int64{e.ID}},
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
