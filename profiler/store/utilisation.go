package store

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"time"
)

// Metric names a utilisation metric of the device.
type Metric string

// Utilisation metrics, in percent of the whole device.
const (
	MetricSM   Metric = "sm"
	MetricL2   Metric = "l2"
	MetricDRAM Metric = "dram"
)

// Utilisation sources: where a value came from.
const (
	SourceNCU         = "ncu"          // Nsight Compute
	SourceNVMLGPM     = "nvml-gpm"     // NVML GPU performance monitoring (Hopper and later)
	SourceIgniterV100 = "igniter-v100" // the iGniter V100 table in shared/data/igniter
	SourceUnknown     = "unknown"      // nothing could measure it
)

// UtilPoint is the solo utilisation of one metric while a model runs batch
// Batch on a partition of Size percent.
type UtilPoint struct {
	ModelSHA   string
	DeviceType string
	Size       int
	Batch      int
	Metric     Metric
	// Value is in percent; NaN means unknown (stored as NULL), never 0.
	Value      float64
	Source     string
	MeasuredAt time.Time
}

func (u UtilPoint) validate() error {
	switch {
	case u.ModelSHA == "" || u.DeviceType == "":
		return invalid("utilisation point needs a model and a device type")
	case u.Size < 1 || u.Size > 100 || u.Batch < 1:
		return invalid("utilisation point %s on %s: b=%d p=%d out of range", u.ModelSHA, u.DeviceType, u.Batch, u.Size)
	case u.Metric != MetricSM && u.Metric != MetricL2 && u.Metric != MetricDRAM:
		return invalid("utilisation point %s on %s: unknown metric %q", u.ModelSHA, u.DeviceType, u.Metric)
	case !math.IsNaN(u.Value) && (u.Value < 0 || math.IsInf(u.Value, 0)):
		return invalid("utilisation point %s on %s: value %v must be a finite percentage or NaN", u.ModelSHA, u.DeviceType, u.Value)
	case u.Source == "":
		return invalid("utilisation point %s on %s: source is empty", u.ModelSHA, u.DeviceType)
	}
	return nil
}

// PutUtil stores points in one transaction, replacing values stored at the
// same (model, device type, size, batch, metric). An unknown (NaN) value is
// stored as NULL.
func (s *Store) PutUtil(ctx context.Context, points []UtilPoint) error {
	op := fmt.Sprintf("put %d utilisation points", len(points))
	for _, u := range points {
		if err := u.validate(); err != nil {
			return wrap(op, err)
		}
	}
	return s.write(ctx, op, func(tx *sql.Tx) error {
		st, err := tx.PrepareContext(ctx, `
INSERT INTO utilisation (model_sha, device_type, size, batch, metric, value, source, measured_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (model_sha, device_type, size, batch, metric) DO UPDATE SET
	value = excluded.value, source = excluded.source, measured_at = excluded.measured_at`)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, u := range points {
			if _, err := st.ExecContext(ctx, u.ModelSHA, u.DeviceType, u.Size, u.Batch, string(u.Metric),
				nullable(u.Value), u.Source, ns(s.stamp(u.MeasuredAt))); err != nil {
				return fmt.Errorf("%s at b=%d p=%d: %w", u.Metric, u.Batch, u.Size, err)
			}
		}
		return nil
	})
}

// Util returns the stored utilisation points of the model on the device type,
// ordered by size, batch and metric; unknown values come back as NaN. No
// points is an empty result, not an error.
func (s *Store) Util(ctx context.Context, modelSHA, deviceType string) ([]UtilPoint, error) {
	return queryAll(ctx, s.reader(), fmt.Sprintf("get utilisation of %s on %s", modelSHA, deviceType), func(r *sql.Rows) (UtilPoint, error) {
		var u UtilPoint
		var v sql.NullFloat64
		var at int64
		err := r.Scan(&u.ModelSHA, &u.DeviceType, &u.Size, &u.Batch, &u.Metric, &v, &u.Source, &at)
		u.Value, u.MeasuredAt = orNaN(v), fromNS(at)
		return u, err
	}, `SELECT model_sha, device_type, size, batch, metric, value, source, measured_at
FROM utilisation WHERE model_sha = ? AND device_type = ? ORDER BY size, batch, metric`, modelSHA, deviceType)
}
