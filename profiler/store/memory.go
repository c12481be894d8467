package store

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"time"
)

// ModelMemory is the host memory a model file needs on a device type, as a
// profile run measured it: the peak resident memory of an executor process
// that held only this model, after warming it up at every profiled batch.
type ModelMemory struct {
	ModelSHA   string
	DeviceType string
	ResidentMB float64
	// ExecutorMB is the part of ResidentMB the executor held before it
	// loaded the model (its runtime), which every executor holds once; 0:
	// not measured (a row from before schema version 5).
	ExecutorMB float64
	RunID      int64 // the profile run that measured it; 0 = none
	MeasuredAt time.Time
}

// OwnMB is what the model adds to an executor that holds it: ResidentMB
// less the executor's own memory (all of it where that was not measured).
func (m ModelMemory) OwnMB() float64 { return m.ResidentMB - m.ExecutorMB }

func (m ModelMemory) validate() error {
	switch {
	case m.ModelSHA == "" || m.DeviceType == "":
		return invalid("model memory needs a model and a device type")
	case !positive(m.ResidentMB):
		return invalid("model memory of %s on %s: %v MB must be positive", m.ModelSHA, m.DeviceType, m.ResidentMB)
	case math.IsNaN(m.ExecutorMB) || m.ExecutorMB < 0 || m.ExecutorMB >= m.ResidentMB:
		return invalid("model memory of %s on %s: the executor's own %v MB must be at least 0 and below the %v MB measured",
			m.ModelSHA, m.DeviceType, m.ExecutorMB, m.ResidentMB)
	case m.RunID < 0:
		return invalid("model memory of %s on %s: run id %d must not be negative", m.ModelSHA, m.DeviceType, m.RunID)
	}
	return nil
}

// PutModelMemory stores m unless a larger memory is stored for its model
// and device type: the most any run measured stands, since a run that
// sampled fewer or smaller batches peaks lower than what serving needs. The
// model's own memory is compared (OwnMB), a measurement that tells the
// executor's own memory apart replaces one that did not, and one that does
// not is taken to hold the executor's memory stored (which it keeps).
func (s *Store) PutModelMemory(ctx context.Context, m ModelMemory) error {
	op := fmt.Sprintf("put memory of %s on %s", m.ModelSHA, m.DeviceType)
	if err := m.validate(); err != nil {
		return wrap(op, err)
	}
	var run any
	if m.RunID != 0 {
		run = m.RunID
	}
	return s.write(ctx, op, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `
INSERT INTO model_memory (model_sha, device_type, resident_mb, executor_mb, run_id, measured_at) VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (model_sha, device_type) DO UPDATE SET
	resident_mb = excluded.resident_mb,
	executor_mb = CASE WHEN excluded.executor_mb = 0 THEN model_memory.executor_mb ELSE excluded.executor_mb END,
	run_id = excluded.run_id, measured_at = excluded.measured_at
WHERE excluded.resident_mb - CASE WHEN excluded.executor_mb = 0 THEN model_memory.executor_mb ELSE excluded.executor_mb END
		> model_memory.resident_mb - model_memory.executor_mb
	OR (model_memory.executor_mb = 0 AND excluded.executor_mb > 0)`,
			m.ModelSHA, m.DeviceType, m.ResidentMB, m.ExecutorMB, run, ns(s.stamp(m.MeasuredAt)))
		return err
	})
}

// ModelMemory returns the memory stored for the model on the device type;
// ErrNotFound when none was measured.
func (s *Store) ModelMemory(ctx context.Context, modelSHA, deviceType string) (ModelMemory, error) {
	op := fmt.Sprintf("get memory of %s on %s", modelSHA, deviceType)
	m := ModelMemory{ModelSHA: modelSHA, DeviceType: deviceType}
	var run sql.NullInt64
	var at int64
	err := s.reader().QueryRowContext(ctx, `SELECT resident_mb, executor_mb, run_id, measured_at FROM model_memory
WHERE model_sha = ? AND device_type = ?`, modelSHA, deviceType).Scan(&m.ResidentMB, &m.ExecutorMB, &run, &at)
	if err != nil {
		return ModelMemory{}, wrap(op, err)
	}
	m.RunID, m.MeasuredAt = run.Int64, fromNS(at)
	return m, nil
}

// ExecutorMemory returns the most memory an executor was measured to hold
// on the device type before it loaded a model (ModelMemory.ExecutorMB);
// 0 when none was measured.
func (s *Store) ExecutorMemory(ctx context.Context, deviceType string) (float64, error) {
	var mb sql.NullFloat64
	err := s.reader().QueryRowContext(ctx, `SELECT MAX(executor_mb) FROM model_memory WHERE device_type = ?`, deviceType).Scan(&mb)
	if err != nil {
		return 0, wrap("get the executors' own memory on "+deviceType, err)
	}
	return mb.Float64, nil
}
