package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// InterferenceSample is one measured co-location of two models on one device:
// model A on a partition of SizeA percent beside model B on SizeB percent.
type InterferenceSample struct {
	ID         int64 // set by the store
	DeviceType string
	// ModelA and ModelB are model file hashes or reference names.
	ModelA, ModelB string
	BatchA, BatchB int
	SizeA, SizeB   int
	// SoloAMS and SoloBMS are the latencies each model has alone on its
	// partition; NaN = unknown (the iGniter table, for one, does not give
	// them beside each co-location).
	SoloAMS, SoloBMS float64
	// ColocAMS and ColocBMS are the latencies measured side by side.
	ColocAMS, ColocBMS float64
	Source             string
	MeasuredAt         time.Time
}

func (x InterferenceSample) validate() error {
	switch {
	case x.DeviceType == "" || x.ModelA == "" || x.ModelB == "" || x.Source == "":
		return invalid("interference sample needs a device type, two models and a source")
	case x.BatchA < 1 || x.BatchB < 1:
		return invalid("interference sample %s+%s: batches %d, %d must be at least 1", x.ModelA, x.ModelB, x.BatchA, x.BatchB)
	case x.SizeA < 1 || x.SizeA > 100 || x.SizeB < 1 || x.SizeB > 100:
		return invalid("interference sample %s+%s: sizes %d, %d must be in 1..100", x.ModelA, x.ModelB, x.SizeA, x.SizeB)
	case !positiveOrNaN(x.SoloAMS) || !positiveOrNaN(x.SoloBMS):
		return invalid("interference sample %s+%s: solo latencies must be positive or NaN", x.ModelA, x.ModelB)
	case !positive(x.ColocAMS) || !positive(x.ColocBMS):
		return invalid("interference sample %s+%s: co-located latencies must be positive", x.ModelA, x.ModelB)
	}
	return nil
}

// AddInterferenceSamples stores samples in one transaction and returns their
// IDs in order.
func (s *Store) AddInterferenceSamples(ctx context.Context, samples []InterferenceSample) ([]int64, error) {
	op := fmt.Sprintf("add %d interference samples", len(samples))
	for _, x := range samples {
		if err := x.validate(); err != nil {
			return nil, wrap(op, err)
		}
	}
	var ids []int64
	err := s.write(ctx, op, func(tx *sql.Tx) (err error) {
		ids, err = s.insertInterference(ctx, tx, samples)
		return err
	})
	if err != nil {
		return nil, err
	}
	return ids, nil
}

// insertInterference inserts samples in tx and returns their IDs in order.
func (s *Store) insertInterference(ctx context.Context, tx *sql.Tx, samples []InterferenceSample) ([]int64, error) {
	st, err := tx.PrepareContext(ctx, `INSERT INTO interference_samples
(device_type, model_a, batch_a, size_a, solo_a_ms, coloc_a_ms, model_b, batch_b, size_b, solo_b_ms, coloc_b_ms, source, measured_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	ids := make([]int64, 0, len(samples))
	for _, x := range samples {
		res, err := st.ExecContext(ctx, x.DeviceType, x.ModelA, x.BatchA, x.SizeA, nullable(x.SoloAMS), x.ColocAMS,
			x.ModelB, x.BatchB, x.SizeB, nullable(x.SoloBMS), x.ColocBMS, x.Source, ns(s.stamp(x.MeasuredAt)))
		if err != nil {
			return nil, err
		}
		id, err := res.LastInsertId()
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// InterferenceSamples returns the samples of the device type in the order
// they were added. No samples is an empty result, not an error.
func (s *Store) InterferenceSamples(ctx context.Context, deviceType string) ([]InterferenceSample, error) {
	return queryAll(ctx, s.reader(), fmt.Sprintf("list interference samples of %s", deviceType), func(r *sql.Rows) (InterferenceSample, error) {
		var x InterferenceSample
		var soloA, soloB sql.NullFloat64
		var at int64
		err := r.Scan(&x.ID, &x.DeviceType, &x.ModelA, &x.BatchA, &x.SizeA, &soloA, &x.ColocAMS,
			&x.ModelB, &x.BatchB, &x.SizeB, &soloB, &x.ColocBMS, &x.Source, &at)
		x.SoloAMS, x.SoloBMS, x.MeasuredAt = orNaN(soloA), orNaN(soloB), fromNS(at)
		return x, err
	}, `SELECT id, device_type, model_a, batch_a, size_a, solo_a_ms, coloc_a_ms, model_b, batch_b, size_b, solo_b_ms, coloc_b_ms, source, measured_at
FROM interference_samples WHERE device_type = ? ORDER BY id`, deviceType)
}
