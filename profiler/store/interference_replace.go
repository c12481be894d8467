package store

import (
	"context"
	"database/sql"
	"fmt"
)

// SampleMatch selects interference samples of one device type; an empty
// field matches every value.
type SampleMatch struct {
	DeviceType string // required
	Source     string
	ModelA     string
	ModelB     string
}

// ReplaceInterferenceSamples deletes the samples that match m and adds
// samples in their place, in one transaction: either every old sample is
// gone and every new one stored, or nothing changed. It returns how many
// samples it deleted and the new samples' IDs in order. Each new sample must
// itself match m, so a re-import or a re-measurement never touches other
// samples.
func (s *Store) ReplaceInterferenceSamples(ctx context.Context, m SampleMatch, samples []InterferenceSample) (deleted int64, ids []int64, err error) {
	op := fmt.Sprintf("replace interference samples of %s", m.DeviceType)
	if m.DeviceType == "" {
		return 0, nil, wrap(op, invalid("a sample match needs a device type"))
	}
	for _, x := range samples {
		if err := x.validate(); err != nil {
			return 0, nil, wrap(op, err)
		}
		if !m.matches(x) {
			return 0, nil, wrap(op, invalid("sample %s+%s from %s on %s does not match %+v", x.ModelA, x.ModelB, x.Source, x.DeviceType, m))
		}
	}
	err = s.write(ctx, op, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM interference_samples WHERE device_type = ?
AND (? = '' OR source = ?) AND (? = '' OR model_a = ?) AND (? = '' OR model_b = ?)`,
			m.DeviceType, m.Source, m.Source, m.ModelA, m.ModelA, m.ModelB, m.ModelB)
		if err != nil {
			return err
		}
		if deleted, err = res.RowsAffected(); err != nil {
			return err
		}
		ids, err = s.insertInterference(ctx, tx, samples)
		return err
	})
	if err != nil {
		return 0, nil, err
	}
	return deleted, ids, nil
}

// matches reports whether x is selected by m.
func (m SampleMatch) matches(x InterferenceSample) bool {
	eq := func(want, got string) bool { return want == "" || want == got }
	return x.DeviceType == m.DeviceType && eq(m.Source, x.Source) && eq(m.ModelA, x.ModelA) && eq(m.ModelB, x.ModelB)
}
