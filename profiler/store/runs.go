package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// RunStatus is the state of a profile run.
type RunStatus string

// Profile run states. A run starts RunRunning and is finished exactly once.
const (
	RunRunning    RunStatus = "running"
	RunComplete   RunStatus = "complete"
	RunIncomplete RunStatus = "incomplete" // stopped midway; what it measured is kept
	RunFailed     RunStatus = "failed"
)

// ProfileRun is one profiling job of a model file on a device type.
type ProfileRun struct {
	ID         int64
	ModelSHA   string
	DeviceType string
	Status     RunStatus
	Message    string
	StartedAt  time.Time
	FinishedAt time.Time // zero while running
}

// StartRun records a new running profile run and returns it with its ID.
func (s *Store) StartRun(ctx context.Context, modelSHA, deviceType, message string) (ProfileRun, error) {
	op := fmt.Sprintf("start profile run of %s on %s", modelSHA, deviceType)
	if modelSHA == "" || deviceType == "" {
		return ProfileRun{}, wrap(op, invalid("a run needs a model and a device type"))
	}
	run := ProfileRun{ModelSHA: modelSHA, DeviceType: deviceType, Status: RunRunning, Message: message, StartedAt: s.stamp(time.Time{})}
	err := s.write(ctx, op, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `INSERT INTO profile_runs (model_sha, device_type, status, message, started_at)
VALUES (?, ?, ?, ?, ?) RETURNING id`, modelSHA, deviceType, RunRunning, message, ns(run.StartedAt)).Scan(&run.ID); err != nil {
			return err
		}
		// Held before the row is committed: whoever reads the run as
		// running finds its process holding it.
		s.holdRun(run.ID)
		return nil
	})
	if err != nil {
		if run.ID != 0 {
			s.releaseRun(run.ID)
		}
		return ProfileRun{}, err
	}
	return run, nil
}

// FinishRun ends the running run id with status (complete, incomplete or
// failed) and message. An unknown id is ErrNotFound; a run that is already
// finished is ErrRunFinished and keeps its first outcome.
func (s *Store) FinishRun(ctx context.Context, id int64, status RunStatus, message string) error {
	op := fmt.Sprintf("finish profile run %d", id)
	switch status {
	case RunComplete, RunIncomplete, RunFailed:
	default:
		return wrap(op, invalid("status %q cannot finish a run", status))
	}
	defer s.releaseRun(id)
	return s.write(ctx, op, func(tx *sql.Tx) error {
		var cur RunStatus
		if err := tx.QueryRowContext(ctx, `SELECT status FROM profile_runs WHERE id = ?`, id).Scan(&cur); err != nil {
			return err
		}
		if cur != RunRunning {
			return fmt.Errorf("run is %s: %w", cur, ErrRunFinished)
		}
		_, err := tx.ExecContext(ctx, `UPDATE profile_runs SET status = ?, message = ?, finished_at = ? WHERE id = ?`,
			status, message, ns(s.stamp(time.Time{})), id)
		return err
	})
}

// InterruptLeftRuns marks incomplete every run still running whose
// process no longer runs (runlock.go), saying which process left it, as a
// daemon does at start-up for runs its previous life, or a `gpuletd
// profile` killed midway, left behind. A run another process is measuring
// now (`gpuletd profile` beside the daemon) is left running. It returns
// how many runs it marked.
func (s *Store) InterruptLeftRuns(ctx context.Context) (int64, error) {
	var n int64
	err := s.write(ctx, "interrupt left profile runs", func(tx *sql.Tx) error {
		ids, err := queryAll(ctx, tx, "list running profile runs", func(r *sql.Rows) (id int64, err error) { return id, r.Scan(&id) },
			`SELECT id FROM profile_runs WHERE status = 'running'`)
		if err != nil {
			return err
		}
		for _, id := range ids {
			alive, who := s.runOwner(id)
			if alive {
				continue
			}
			if _, err := tx.ExecContext(ctx, `UPDATE profile_runs SET status = 'incomplete', message = ?, finished_at = ? WHERE id = ?`,
				leftMessage(who), ns(s.stamp(time.Time{})), id); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err == nil {
		s.removeLeftRunLocks(ctx)
	}
	return n, err
}

const runColumns = `id, model_sha, device_type, status, message, started_at, finished_at`

func scanRun(r interface{ Scan(...any) error }) (ProfileRun, error) {
	var run ProfileRun
	var started int64
	var finished sql.NullInt64
	err := r.Scan(&run.ID, &run.ModelSHA, &run.DeviceType, &run.Status, &run.Message, &started, &finished)
	run.StartedAt, run.FinishedAt = fromNS(started), nullNS(finished)
	return run, err
}

// scanRunRow is scanRun for queryAll.
func scanRunRow(r *sql.Rows) (ProfileRun, error) { return scanRun(r) }

// Run returns the run id, or ErrNotFound.
func (s *Store) Run(ctx context.Context, id int64) (ProfileRun, error) {
	run, err := scanRun(s.reader().QueryRowContext(ctx, `SELECT `+runColumns+` FROM profile_runs WHERE id = ?`, id))
	if err != nil {
		return ProfileRun{}, wrap(fmt.Sprintf("get profile run %d", id), err)
	}
	return run, nil
}

// Runs returns the runs of the model on the device type, newest first. An
// empty modelSHA or deviceType matches every value; limit ≤ 0 means no limit.
func (s *Store) Runs(ctx context.Context, modelSHA, deviceType string, limit int) ([]ProfileRun, error) {
	if limit <= 0 {
		limit = -1
	}
	return queryAll(ctx, s.reader(), "list profile runs", scanRunRow,
		`SELECT `+runColumns+` FROM profile_runs
WHERE (? = '' OR model_sha = ?) AND (? = '' OR device_type = ?) ORDER BY id DESC LIMIT ?`,
		modelSHA, modelSHA, deviceType, deviceType, limit)
}
