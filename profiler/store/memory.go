package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// ModelMemory is the host memory a model file needs on a device type, as a
// profile run measured it: the peak resident memory of an executor process
// that held only this model, after warming it up at every profiled batch.
type ModelMemory struct {
	ModelSHA   string
	DeviceType string
	ResidentMB float64
	RunID      int64 // the profile run that measured it; 0 = none
	MeasuredAt time.Time
}

func (m ModelMemory) validate() error {
	switch {
	case m.ModelSHA == "" || m.DeviceType == "":
		return invalid("model memory needs a model and a device type")
	case !positive(m.ResidentMB):
		return invalid("model memory of %s on %s: %v MB must be positive", m.ModelSHA, m.DeviceType, m.ResidentMB)
	case m.RunID < 0:
		return invalid("model memory of %s on %s: run id %d must not be negative", m.ModelSHA, m.DeviceType, m.RunID)
	}
	return nil
}

// PutModelMemory stores m unless a larger memory is stored for its model
// and device type: the most any run measured stands, since a run that
// sampled fewer or smaller batches peaks lower than what serving needs.
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
INSERT INTO model_memory (model_sha, device_type, resident_mb, run_id, measured_at) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (model_sha, device_type) DO UPDATE SET
	resident_mb = excluded.resident_mb, run_id = excluded.run_id, measured_at = excluded.measured_at
WHERE excluded.resident_mb > model_memory.resident_mb`,
			m.ModelSHA, m.DeviceType, m.ResidentMB, run, ns(s.stamp(m.MeasuredAt)))
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
	err := s.reader().QueryRowContext(ctx, `SELECT resident_mb, run_id, measured_at FROM model_memory
WHERE model_sha = ? AND device_type = ?`, modelSHA, deviceType).Scan(&m.ResidentMB, &run, &at)
	if err != nil {
		return ModelMemory{}, wrap(op, err)
	}
	m.RunID, m.MeasuredAt = run.Int64, fromNS(at)
	return m, nil
}
