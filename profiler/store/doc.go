// Package store is gpuletd's SQLite store: the one place in gpuletd that holds
// SQL. It keeps models, latency profiles L(b,p), profile runs, utilisation,
// interference samples and fitted coefficients, plans, events and device
// types in one database file, behind a typed API.
//
// The database runs in WAL mode with foreign keys on, a busy timeout and
// synchronous=NORMAL. Every write goes through a single writer connection
// (transactions begin IMMEDIATE), every read through a separate pool of
// read-only connections, so concurrent readers and one writer never see
// SQLITE_BUSY inside one process, and two processes sharing the file wait on
// the busy timeout instead of failing. A write lock held past it fails the
// write with ErrBusy, naming the process that holds it, and the store
// cannot be written (Writable) until a write or Recover finds it free.
//
// The schema is versioned: numbered migrations embedded from migrations/ run
// in order, each in its own transaction, when [Open] finds them pending. A
// database written by a newer gpuletd is refused with [ErrSchemaTooNew] and is
// never downgraded.
//
// Adding a migration: never edit a released file in migrations/; add the next
// NNNN_words.sql. Then freeze the previous version: write
// testdata/seed_v<N-1>.sql (a few rows against that schema), run
// `go test ./profiler/store -run TestFrozenSchemas -update` to write
// testdata/schema_v<N-1>.sql, and add an upgradeChecks entry in frozen_test.go
// that checks those rows survive the upgrade.
//
// Unknown values: a float64 field documented as "NaN = unknown" is stored as
// SQL NULL and read back as math.NaN(); zero is a measured zero. Times are
// stored as INTEGER unix nanoseconds and returned in UTC.
package store
