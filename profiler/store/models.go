package store

import (
	"context"
	"database/sql"
	"encoding/hex"
	"fmt"
	"time"
)

// ModelRecord is a model registered from the model repository.
type ModelRecord struct {
	Name    string
	Version int
	// SHA256 is the lowercase hex sha256 of the model file; latency profiles
	// are keyed by it, so a changed file is profiled again.
	SHA256       string
	Path         string
	SLOMS        float64
	MaxBatchSize int
	Platform     string // e.g. "onnxruntime_onnx"
	// CreatedAt and UpdatedAt are set by the store from its clock.
	CreatedAt time.Time
	UpdatedAt time.Time
}

func (m ModelRecord) validate() error {
	switch {
	case m.Name == "":
		return invalid("model name is empty")
	case m.Version < 1:
		return invalid("model %s version %d: must be at least 1", m.Name, m.Version)
	case !isSHA256(m.SHA256):
		return invalid("model %s sha256 %q: must be 64 lowercase hex digits", m.Name, m.SHA256)
	case !positive(m.SLOMS):
		return invalid("model %s slo %v ms: must be positive", m.Name, m.SLOMS)
	case m.MaxBatchSize < 0:
		return invalid("model %s max batch size %d: must not be negative", m.Name, m.MaxBatchSize)
	}
	return nil
}

func isSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	b, err := hex.DecodeString(s)
	return err == nil && len(b) == 32 && hex.EncodeToString(b) == s
}

// UpsertModel inserts m, or updates the stored (Name, Version). CreatedAt is
// kept from the first insert and UpdatedAt set to now; the times in m are
// ignored. It returns the record as stored.
func (s *Store) UpsertModel(ctx context.Context, m ModelRecord) (ModelRecord, error) {
	op := fmt.Sprintf("upsert model %s version %d", m.Name, m.Version)
	if err := m.validate(); err != nil {
		return ModelRecord{}, wrap(op, err)
	}
	now := s.stamp(time.Time{})
	var c, u int64
	err := s.write(ctx, op, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `
INSERT INTO models (name, version, sha256, path, slo_ms, max_batch_size, platform, created_at, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (name, version) DO UPDATE SET
	sha256 = excluded.sha256, path = excluded.path, slo_ms = excluded.slo_ms,
	max_batch_size = excluded.max_batch_size, platform = excluded.platform,
	updated_at = excluded.updated_at
RETURNING created_at, updated_at`,
			m.Name, m.Version, m.SHA256, m.Path, m.SLOMS, m.MaxBatchSize, m.Platform, ns(now), ns(now)).Scan(&c, &u)
	})
	if err != nil {
		return ModelRecord{}, err
	}
	m.CreatedAt, m.UpdatedAt = fromNS(c), fromNS(u)
	return m, nil
}

const modelColumns = `name, version, sha256, path, slo_ms, max_batch_size, platform, created_at, updated_at`

func scanModel(sc interface{ Scan(...any) error }) (ModelRecord, error) {
	var m ModelRecord
	var c, u int64
	err := sc.Scan(&m.Name, &m.Version, &m.SHA256, &m.Path, &m.SLOMS, &m.MaxBatchSize, &m.Platform, &c, &u)
	m.CreatedAt, m.UpdatedAt = fromNS(c), fromNS(u)
	return m, err
}

// Model returns the stored model (name, version), or ErrNotFound.
func (s *Store) Model(ctx context.Context, name string, version int) (ModelRecord, error) {
	row := s.reader().QueryRowContext(ctx, `SELECT `+modelColumns+` FROM models WHERE name = ? AND version = ?`, name, version)
	m, err := scanModel(row)
	if err != nil {
		return ModelRecord{}, wrap(fmt.Sprintf("get model %s version %d", name, version), err)
	}
	return m, nil
}

// Models returns every stored model, ordered by name and version.
func (s *Store) Models(ctx context.Context) ([]ModelRecord, error) {
	return queryAll(ctx, s.reader(), "list models", func(r *sql.Rows) (ModelRecord, error) { return scanModel(r) },
		`SELECT `+modelColumns+` FROM models ORDER BY name, version`)
}

// DeleteModel removes the model (name, version), or returns ErrNotFound. Its
// latency profiles stay: they are keyed by the file's hash and may serve
// another version with the same file.
func (s *Store) DeleteModel(ctx context.Context, name string, version int) error {
	return s.write(ctx, fmt.Sprintf("delete model %s version %d", name, version), func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM models WHERE name = ? AND version = ?`, name, version)
		if err != nil {
			return err
		}
		return mustAffect(res)
	})
}

// mustAffect turns a statement that changed no row into sql.ErrNoRows, which
// wrap reports as ErrNotFound.
func mustAffect(res sql.Result) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return sql.ErrNoRows
	}
	return nil
}
