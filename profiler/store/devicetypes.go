package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"time"
)

// Partitioning mechanisms of a device type.
const (
	PartitionMPS   = "mps"   // MPS active-thread percentage
	PartitionMIG   = "mig"   // MIG instances
	PartitionCores = "cores" // a share of CPU cores
	PartitionNone  = "none"  // whole device only
)

// DeviceType describes a kind of device that profiles are keyed by: a GPU
// model, the CPU, or a reference profile set imported as an emulated device.
type DeviceType struct {
	Name         string  // e.g. "igniter-v100", "nvidia-a100-sxm4-40gb"
	Source       string  // where its data came from, e.g. "nvml", "shared/data/igniter"
	Partitioning string  // PartitionMPS, PartitionMIG, PartitionCores or PartitionNone
	Sizes        []int   // partition sizes, percent
	MemoryMB     float64 // NaN = unknown
	// CreatedAt and UpdatedAt are set by the store from its clock.
	CreatedAt time.Time
	UpdatedAt time.Time
}

func (d DeviceType) validate() error {
	switch d.Partitioning {
	case PartitionMPS, PartitionMIG, PartitionCores, PartitionNone:
	default:
		return invalid("device type %s: unknown partitioning %q", d.Name, d.Partitioning)
	}
	if d.Name == "" {
		return invalid("device type has no name")
	}
	if len(d.Sizes) == 0 {
		return invalid("device type %s has no partition sizes", d.Name)
	}
	for _, p := range d.Sizes {
		if p < 1 || p > 100 {
			return invalid("device type %s: size %d must be in 1..100", d.Name, p)
		}
	}
	if !math.IsNaN(d.MemoryMB) && !positive(d.MemoryMB) {
		return invalid("device type %s: memory %v MB must be positive or NaN", d.Name, d.MemoryMB)
	}
	return nil
}

// UpsertDeviceType inserts d or updates the stored one of the same name
// (keeping its CreatedAt, setting UpdatedAt to now) and returns it as stored.
func (s *Store) UpsertDeviceType(ctx context.Context, d DeviceType) (DeviceType, error) {
	op := fmt.Sprintf("upsert device type %s", d.Name)
	if err := d.validate(); err != nil {
		return DeviceType{}, wrap(op, err)
	}
	sizes, err := json.Marshal(d.Sizes)
	if err != nil {
		return DeviceType{}, wrap(op, err)
	}
	now := s.stamp(time.Time{})
	var c, u int64
	err = s.write(ctx, op, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `INSERT INTO device_types (name, source, partitioning, sizes, memory_mb, created_at, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (name) DO UPDATE SET source = excluded.source, partitioning = excluded.partitioning,
	sizes = excluded.sizes, memory_mb = excluded.memory_mb, updated_at = excluded.updated_at
RETURNING created_at, updated_at`, d.Name, d.Source, d.Partitioning, string(sizes), nullable(d.MemoryMB), ns(now), ns(now)).Scan(&c, &u)
	})
	if err != nil {
		return DeviceType{}, err
	}
	d.CreatedAt, d.UpdatedAt = fromNS(c), fromNS(u)
	return d, nil
}

const deviceTypeColumns = `name, source, partitioning, sizes, memory_mb, created_at, updated_at`

func scanDeviceType(r interface{ Scan(...any) error }) (DeviceType, error) {
	var d DeviceType
	var sizes string
	var mem sql.NullFloat64
	var c, u int64
	if err := r.Scan(&d.Name, &d.Source, &d.Partitioning, &sizes, &mem, &c, &u); err != nil {
		return DeviceType{}, err
	}
	if err := json.Unmarshal([]byte(sizes), &d.Sizes); err != nil {
		return DeviceType{}, fmt.Errorf("decode sizes of %s: %w", d.Name, err)
	}
	d.MemoryMB, d.CreatedAt, d.UpdatedAt = orNaN(mem), fromNS(c), fromNS(u)
	return d, nil
}

// DeviceType returns the device type name, or ErrNotFound.
func (s *Store) DeviceType(ctx context.Context, name string) (DeviceType, error) {
	d, err := scanDeviceType(s.reader().QueryRowContext(ctx, `SELECT `+deviceTypeColumns+` FROM device_types WHERE name = ?`, name))
	if err != nil {
		return DeviceType{}, wrap(fmt.Sprintf("get device type %s", name), err)
	}
	return d, nil
}

// DeviceTypes returns every device type, ordered by name.
func (s *Store) DeviceTypes(ctx context.Context) ([]DeviceType, error) {
	return queryAll(ctx, s.reader(), "list device types", func(r *sql.Rows) (DeviceType, error) { return scanDeviceType(r) },
		`SELECT `+deviceTypeColumns+` FROM device_types ORDER BY name`)
}
