package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"
)

// PlanRecord is a placement plan as the planner produced it.
type PlanRecord struct {
	ID          int64 // set by the store; grows with every plan
	CreatedAt   time.Time
	Algorithm   string // e.g. "gpulet-int", "sbp", "ideal"
	Reason      string // why it was computed: "period", "rate change", "manual", …
	Plan        json.RawMessage
	Schedulable bool
}

// SavePlan stores p and returns its ID. p.Plan must be valid JSON.
func (s *Store) SavePlan(ctx context.Context, p PlanRecord) (int64, error) {
	const op = "save plan"
	switch {
	case p.Algorithm == "":
		return 0, wrap(op, invalid("plan has no algorithm"))
	case !json.Valid(p.Plan):
		return 0, wrap(op, invalid("plan is not valid JSON"))
	}
	var id int64
	err := s.write(ctx, op, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `INSERT INTO plans (created_at, algorithm, reason, plan, schedulable)
VALUES (?, ?, ?, ?, ?) RETURNING id`, ns(s.stamp(p.CreatedAt)), p.Algorithm, p.Reason, string(p.Plan), boolInt(p.Schedulable)).Scan(&id)
	})
	return id, err
}

const planColumns = `id, created_at, algorithm, reason, plan, schedulable`

func scanPlan(r interface{ Scan(...any) error }) (PlanRecord, error) {
	var p PlanRecord
	var at int64
	var plan string
	err := r.Scan(&p.ID, &at, &p.Algorithm, &p.Reason, &plan, &p.Schedulable)
	p.CreatedAt, p.Plan = fromNS(at), json.RawMessage(plan)
	return p, err
}

// LatestPlan returns the plan saved last, or ErrNotFound.
func (s *Store) LatestPlan(ctx context.Context) (PlanRecord, error) {
	p, err := scanPlan(s.reader().QueryRowContext(ctx, `SELECT `+planColumns+` FROM plans ORDER BY id DESC LIMIT 1`))
	if err != nil {
		return PlanRecord{}, wrap("get latest plan", err)
	}
	return p, nil
}

// Plans returns up to limit plans with an ID below beforeID, newest first;
// beforeID ≤ 0 starts from the newest, so a caller pages back in time by
// passing the last ID it got. limit ≤ 0 means no limit.
func (s *Store) Plans(ctx context.Context, beforeID int64, limit int) ([]PlanRecord, error) {
	if limit <= 0 {
		limit = -1
	}
	return queryAll(ctx, s.reader(), "list plans", func(r *sql.Rows) (PlanRecord, error) { return scanPlan(r) },
		`SELECT `+planColumns+` FROM plans WHERE (? <= 0 OR id < ?) ORDER BY id DESC LIMIT ?`, beforeID, beforeID, limit)
}

// PrunePlans deletes the plans saved before before, except the newest (the
// plan in force), and returns how many it deleted.
func (s *Store) PrunePlans(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := s.write(ctx, "prune plans", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM plans WHERE created_at < ? AND id < (SELECT MAX(id) FROM plans)`, ns(before))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}
