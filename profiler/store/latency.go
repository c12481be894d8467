package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// LatencyPoint is one measured operating point of a model file on a device
// type: batch Batch on a partition of Size percent.
type LatencyPoint struct {
	// ModelSHA is the model file's sha256 (hex), or for reference profile
	// sets a reference name such as "igniter-v100/resnet50".
	ModelSHA   string
	DeviceType string
	Size       int // partition size, percent of the device, 1..100
	Batch      int
	P50MS      float64 // median latency, must be known
	P99MS      float64 // NaN = unknown
	MeanMS     float64 // NaN = unknown
	Samples    int
	// Complete is false when the run measuring this point stopped before it
	// collected every sample it wanted: the numbers are kept, but the point
	// does not count towards HasCompleteProfile.
	Complete   bool
	RunID      int64 // the profile run that measured it; 0 = none
	MeasuredAt time.Time
}

func (p LatencyPoint) validate() error {
	switch {
	case p.ModelSHA == "" || p.DeviceType == "":
		return invalid("latency point needs a model and a device type")
	case p.Size < 1 || p.Size > 100:
		return invalid("latency point %s on %s: size %d must be in 1..100", p.ModelSHA, p.DeviceType, p.Size)
	case p.Batch < 1:
		return invalid("latency point %s on %s: batch %d must be at least 1", p.ModelSHA, p.DeviceType, p.Batch)
	case !positive(p.P50MS):
		return invalid("latency point %s on %s b=%d p=%d: p50 %v must be positive", p.ModelSHA, p.DeviceType, p.Batch, p.Size, p.P50MS)
	case !positiveOrNaN(p.P99MS) || !positiveOrNaN(p.MeanMS):
		return invalid("latency point %s on %s b=%d p=%d: p99 %v and mean %v must be positive or NaN", p.ModelSHA, p.DeviceType, p.Batch, p.Size, p.P99MS, p.MeanMS)
	case p.Samples < 0:
		return invalid("latency point %s on %s b=%d p=%d: samples %d must not be negative", p.ModelSHA, p.DeviceType, p.Batch, p.Size, p.Samples)
	case p.RunID < 0:
		return invalid("latency point %s on %s b=%d p=%d: run id %d must not be negative", p.ModelSHA, p.DeviceType, p.Batch, p.Size, p.RunID)
	}
	return nil
}

// PutLatency stores points in one transaction: all of them or, on any error,
// none. A point replaces the stored one at the same (model, device type, size,
// batch) unless the stored one is complete and the new one is not, so an
// interrupted re-run never degrades a finished profile.
func (s *Store) PutLatency(ctx context.Context, points []LatencyPoint) error {
	op := fmt.Sprintf("put %d latency points", len(points))
	for _, p := range points {
		if err := p.validate(); err != nil {
			return wrap(op, err)
		}
	}
	return s.write(ctx, op, func(tx *sql.Tx) error {
		st, err := tx.PrepareContext(ctx, `
INSERT INTO latency_profiles (model_sha, device_type, size, batch, p50_ms, p99_ms, mean_ms, samples, complete, measured_at, run_id)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (model_sha, device_type, size, batch) DO UPDATE SET
	p50_ms = excluded.p50_ms, p99_ms = excluded.p99_ms, mean_ms = excluded.mean_ms,
	samples = excluded.samples, complete = excluded.complete,
	measured_at = excluded.measured_at, run_id = excluded.run_id
WHERE excluded.complete >= latency_profiles.complete`)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, p := range points {
			var run any
			if p.RunID != 0 {
				run = p.RunID
			}
			if _, err := st.ExecContext(ctx, p.ModelSHA, p.DeviceType, p.Size, p.Batch, p.P50MS,
				nullable(p.P99MS), nullable(p.MeanMS), p.Samples, boolInt(p.Complete), ns(s.stamp(p.MeasuredAt)), run); err != nil {
				return fmt.Errorf("point b=%d p=%d of %s on %s: %w", p.Batch, p.Size, p.ModelSHA, p.DeviceType, err)
			}
		}
		return nil
	})
}

// Latency returns every stored point of the model on the device type,
// complete or not, ordered by size and batch; ErrNotFound when there is none.
func (s *Store) Latency(ctx context.Context, modelSHA, deviceType string) ([]LatencyPoint, error) {
	op := fmt.Sprintf("get latency of %s on %s", modelSHA, deviceType)
	pts, err := queryAll(ctx, s.reader(), op, scanLatency, `
SELECT model_sha, device_type, size, batch, p50_ms, p99_ms, mean_ms, samples, complete, run_id, measured_at
FROM latency_profiles WHERE model_sha = ? AND device_type = ? ORDER BY size, batch`, modelSHA, deviceType)
	if err != nil {
		return nil, err
	}
	if len(pts) == 0 {
		return nil, wrap(op, sql.ErrNoRows)
	}
	return pts, nil
}

func scanLatency(r *sql.Rows) (LatencyPoint, error) {
	var p LatencyPoint
	var p99, mean sql.NullFloat64
	var run sql.NullInt64
	var at int64
	err := r.Scan(&p.ModelSHA, &p.DeviceType, &p.Size, &p.Batch, &p.P50MS, &p99, &mean, &p.Samples, &p.Complete, &run, &at)
	p.P99MS, p.MeanMS, p.RunID, p.MeasuredAt = orNaN(p99), orNaN(mean), run.Int64, fromNS(at)
	return p, err
}

// HasCompleteProfile reports whether every (size, batch) of the cross product
// of sizes and batches has a complete point for the model on the device type.
// Both lists must be non-empty.
func (s *Store) HasCompleteProfile(ctx context.Context, modelSHA, deviceType string, sizes, batches []int) (bool, error) {
	op := fmt.Sprintf("check profile of %s on %s", modelSHA, deviceType)
	sizes, batches = uniqueInts(sizes), uniqueInts(batches)
	if len(sizes) == 0 || len(batches) == 0 {
		return false, wrap(op, invalid("sizes and batches must not be empty"))
	}
	args := make([]any, 0, 2+len(sizes)+len(batches))
	args = append(args, modelSHA, deviceType)
	for _, v := range sizes {
		args = append(args, v)
	}
	for _, v := range batches {
		args = append(args, v)
	}
	var n int
	err := s.reader().QueryRowContext(ctx, `SELECT COUNT(*) FROM latency_profiles
WHERE model_sha = ? AND device_type = ? AND complete = 1
AND size IN (`+placeholders(len(sizes))+`) AND batch IN (`+placeholders(len(batches))+`)`, args...).Scan(&n)
	if err != nil {
		return false, wrap(op, err)
	}
	return n == len(sizes)*len(batches), nil
}
