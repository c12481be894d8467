package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"time"
)

// Coefficients is one fit of an interference model on a device type.
type Coefficients struct {
	ID         int64 // set by the store
	DeviceType string
	// Model names the regression, e.g. "paper-linear".
	Model    string
	Features []string
	Values   []float64 // one coefficient per feature, finite
	// Fit statistics; NaN = not computed.
	R2, RMSE float64
	// P50Err, P90Err and P95Err are percentiles of the relative prediction
	// error on held-out samples.
	P50Err, P90Err, P95Err float64
	Samples                int // samples the fit used
	FittedAt               time.Time
}

func (c Coefficients) validate() error {
	switch {
	case c.DeviceType == "" || c.Model == "":
		return invalid("coefficients need a device type and a model name")
	case len(c.Features) == 0 || len(c.Features) != len(c.Values):
		return invalid("coefficients %s on %s: %d features for %d values", c.Model, c.DeviceType, len(c.Features), len(c.Values))
	case c.Samples < 0:
		return invalid("coefficients %s on %s: samples %d must not be negative", c.Model, c.DeviceType, c.Samples)
	}
	for i, v := range c.Values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return invalid("coefficients %s on %s: %s = %v must be finite", c.Model, c.DeviceType, c.Features[i], v)
		}
	}
	for _, v := range []float64{c.R2, c.RMSE, c.P50Err, c.P90Err, c.P95Err} {
		if !finiteOrNaN(v) {
			return invalid("coefficients %s on %s: fit statistic %v must be finite or NaN", c.Model, c.DeviceType, v)
		}
	}
	return nil
}

// SaveCoefficients stores a new fit and returns its ID. Earlier fits are kept
// as history; LatestCoefficients picks the newest.
func (s *Store) SaveCoefficients(ctx context.Context, c Coefficients) (int64, error) {
	op := fmt.Sprintf("save coefficients %s on %s", c.Model, c.DeviceType)
	if err := c.validate(); err != nil {
		return 0, wrap(op, err)
	}
	features, err := json.Marshal(c.Features)
	if err != nil {
		return 0, wrap(op, err)
	}
	values, err := json.Marshal(c.Values)
	if err != nil {
		return 0, wrap(op, err)
	}
	var id int64
	err = s.write(ctx, op, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `INSERT INTO interference_coefficients
(device_type, model, features, coefficients, r2, rmse, p50_err, p90_err, p95_err, samples, fitted_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			c.DeviceType, c.Model, string(features), string(values), nullable(c.R2), nullable(c.RMSE),
			nullable(c.P50Err), nullable(c.P90Err), nullable(c.P95Err), c.Samples, ns(s.stamp(c.FittedAt))).Scan(&id)
	})
	return id, err
}

// LatestCoefficients returns the newest fit (by fit time, then ID) of the
// model on the device type, or ErrNotFound.
func (s *Store) LatestCoefficients(ctx context.Context, deviceType, model string) (Coefficients, error) {
	op := fmt.Sprintf("get latest coefficients %s on %s", model, deviceType)
	var c Coefficients
	var features, values string
	var r2, rmse, p50, p90, p95 sql.NullFloat64
	var at int64
	err := s.reader().QueryRowContext(ctx, `SELECT id, device_type, model, features, coefficients, r2, rmse, p50_err, p90_err, p95_err, samples, fitted_at
FROM interference_coefficients WHERE device_type = ? AND model = ? ORDER BY fitted_at DESC, id DESC LIMIT 1`, deviceType, model).
		Scan(&c.ID, &c.DeviceType, &c.Model, &features, &values, &r2, &rmse, &p50, &p90, &p95, &c.Samples, &at)
	if err != nil {
		return Coefficients{}, wrap(op, err)
	}
	if err := json.Unmarshal([]byte(features), &c.Features); err != nil {
		return Coefficients{}, wrap(op, fmt.Errorf("decode features: %w", err))
	}
	if err := json.Unmarshal([]byte(values), &c.Values); err != nil {
		return Coefficients{}, wrap(op, fmt.Errorf("decode coefficients: %w", err))
	}
	c.R2, c.RMSE, c.P50Err, c.P90Err, c.P95Err = orNaN(r2), orNaN(rmse), orNaN(p50), orNaN(p90), orNaN(p95)
	c.FittedAt = fromNS(at)
	return c, nil
}
