-- Frozen gpuletd store database at schema version 4: migrations 0001..0004 plus testdata/seed_v4.sql.
-- Rewritten only by `go test ./profiler/store -run TestFrozenSchemas -update`; never edit by hand.
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE device_types (
    name         TEXT    PRIMARY KEY CHECK (name <> ''),
    source       TEXT    NOT NULL,
    partitioning TEXT    NOT NULL,
    sizes        TEXT    NOT NULL CHECK (json_valid(sizes)), -- JSON array of percents
    memory_mb    REAL             CHECK (memory_mb > 0),     -- NULL = unknown
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL
);
CREATE TABLE events (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    at       INTEGER NOT NULL,
    kind     TEXT    NOT NULL CHECK (kind <> ''),
    severity TEXT    NOT NULL CHECK (severity IN ('debug', 'info', 'warning', 'error')),
    message  TEXT    NOT NULL,
    attrs    TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(attrs))
);
CREATE TABLE file_digests (
    path     TEXT NOT NULL CHECK (path <> ''),
    platform TEXT NOT NULL,
    entry    TEXT NOT NULL,
    PRIMARY KEY (path, platform)
);
CREATE TABLE interference_coefficients (
    id           INTEGER PRIMARY KEY,
    device_type  TEXT    NOT NULL CHECK (device_type <> ''),
    model        TEXT    NOT NULL CHECK (model <> ''),
    features     TEXT    NOT NULL CHECK (json_valid(features)),     -- JSON array of names
    coefficients TEXT    NOT NULL CHECK (json_valid(coefficients)), -- JSON array of numbers
    r2           REAL,
    rmse         REAL,
    p50_err      REAL,
    p90_err      REAL,
    p95_err      REAL,
    samples      INTEGER NOT NULL CHECK (samples >= 0),
    fitted_at    INTEGER NOT NULL
);
CREATE TABLE interference_samples (
    id          INTEGER PRIMARY KEY,
    device_type TEXT    NOT NULL CHECK (device_type <> ''),
    model_a     TEXT    NOT NULL CHECK (model_a <> ''),
    batch_a     INTEGER NOT NULL CHECK (batch_a >= 1),
    size_a      INTEGER NOT NULL CHECK (size_a BETWEEN 1 AND 100),
    solo_a_ms   REAL             CHECK (solo_a_ms > 0), -- NULL = unknown
    coloc_a_ms  REAL    NOT NULL CHECK (coloc_a_ms > 0),
    model_b     TEXT    NOT NULL CHECK (model_b <> ''),
    batch_b     INTEGER NOT NULL CHECK (batch_b >= 1),
    size_b      INTEGER NOT NULL CHECK (size_b BETWEEN 1 AND 100),
    solo_b_ms   REAL             CHECK (solo_b_ms > 0),
    coloc_b_ms  REAL    NOT NULL CHECK (coloc_b_ms > 0),
    source      TEXT    NOT NULL CHECK (source <> ''),
    measured_at INTEGER NOT NULL
);
CREATE TABLE latency_profiles (
    model_sha   TEXT    NOT NULL CHECK (model_sha <> ''), -- model file sha256, or a reference name
    device_type TEXT    NOT NULL CHECK (device_type <> ''),
    size        INTEGER NOT NULL CHECK (size BETWEEN 1 AND 100), -- partition, percent of the device
    batch       INTEGER NOT NULL CHECK (batch >= 1),
    p50_ms      REAL    NOT NULL CHECK (p50_ms > 0),
    p99_ms      REAL             CHECK (p99_ms > 0),
    mean_ms     REAL             CHECK (mean_ms > 0),
    samples     INTEGER NOT NULL CHECK (samples >= 0),
    complete    INTEGER NOT NULL CHECK (complete IN (0, 1)),
    measured_at INTEGER NOT NULL, run_id INTEGER REFERENCES profile_runs (id) ON DELETE SET NULL,
    PRIMARY KEY (model_sha, device_type, size, batch)
) WITHOUT ROWID;
CREATE TABLE model_memory (
    model_sha   TEXT    NOT NULL CHECK (model_sha <> ''),
    device_type TEXT    NOT NULL CHECK (device_type <> ''),
    resident_mb REAL    NOT NULL CHECK (resident_mb > 0),
    run_id      INTEGER REFERENCES profile_runs (id) ON DELETE SET NULL,
    measured_at INTEGER NOT NULL,
    PRIMARY KEY (model_sha, device_type)
);
CREATE TABLE models (
    name           TEXT    NOT NULL CHECK (name <> ''),
    version        INTEGER NOT NULL CHECK (version >= 1),
    sha256         TEXT    NOT NULL CHECK (length(sha256) = 64), -- hex sha256 of the model file
    path           TEXT    NOT NULL,
    slo_ms         REAL    NOT NULL CHECK (slo_ms > 0),
    max_batch_size INTEGER NOT NULL CHECK (max_batch_size >= 0),
    platform       TEXT    NOT NULL,
    created_at     INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL,
    PRIMARY KEY (name, version)
);
CREATE TABLE plans (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at  INTEGER NOT NULL,
    algorithm   TEXT    NOT NULL CHECK (algorithm <> ''),
    reason      TEXT    NOT NULL,
    plan        TEXT    NOT NULL CHECK (json_valid(plan)),
    schedulable INTEGER NOT NULL CHECK (schedulable IN (0, 1))
);
CREATE TABLE profile_runs (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    model_sha   TEXT    NOT NULL CHECK (model_sha <> ''),
    device_type TEXT    NOT NULL CHECK (device_type <> ''),
    status      TEXT    NOT NULL CHECK (status IN ('running', 'complete', 'incomplete', 'failed')),
    message     TEXT    NOT NULL DEFAULT '',
    started_at  INTEGER NOT NULL,
    finished_at INTEGER -- NULL while running
);
CREATE TABLE schema_version (
	version     INTEGER PRIMARY KEY,
	applied_at  INTEGER NOT NULL, -- unix nanoseconds
	description TEXT    NOT NULL
);
CREATE TABLE utilisation (
    model_sha   TEXT    NOT NULL CHECK (model_sha <> ''),
    device_type TEXT    NOT NULL CHECK (device_type <> ''),
    size        INTEGER NOT NULL CHECK (size BETWEEN 1 AND 100),
    batch       INTEGER NOT NULL CHECK (batch >= 1),
    metric      TEXT    NOT NULL CHECK (metric IN ('sm', 'l2', 'dram')),
    value       REAL             CHECK (value >= 0), -- percent; NULL = unknown
    source      TEXT    NOT NULL CHECK (source <> ''),
    measured_at INTEGER NOT NULL,
    PRIMARY KEY (model_sha, device_type, size, batch, metric)
) WITHOUT ROWID;
CREATE INDEX events_by_at ON events (at);
CREATE INDEX interference_coefficients_latest ON interference_coefficients (device_type, model, fitted_at, id);
CREATE INDEX interference_samples_by_device ON interference_samples (device_type, id);
CREATE INDEX latency_profiles_by_run ON latency_profiles (run_id);
CREATE INDEX models_by_sha256 ON models (sha256);
CREATE INDEX profile_runs_by_model ON profile_runs (model_sha, device_type, id);
CREATE INDEX profile_runs_running ON profile_runs (status) WHERE status = 'running';
INSERT INTO "file_digests" VALUES('/var/lib/gpuletd/models/mlp/1/model.onnx', 'onnxruntime', '{"sha256":"3c5e"}');
INSERT INTO "latency_profiles" VALUES('3c5e7a9b1d3f5a7c9e1b3d5f7a9c1e3b5d7f9a1c3e5b7d9f1a3c5e7b9d1f3a5c', 'cpu', 100, 1, 0.3, 0.4, 0.31, 60, 1, 1735732830000000000, 1);
INSERT INTO "model_memory" VALUES('3c5e7a9b1d3f5a7c9e1b3d5f7a9c1e3b5d7f9a1c3e5b7d9f1a3c5e7b9d1f3a5c', 'cpu', 74.2, 1, 1735732860000000000);
INSERT INTO "models" VALUES('mlp', 1, '3c5e7a9b1d3f5a7c9e1b3d5f7a9c1e3b5d7f9a1c3e5b7d9f1a3c5e7b9d1f3a5c', '/var/lib/gpuletd/models/mlp/1/model.onnx', 5.0, 32, 'onnxruntime_onnx', 1735732800000000000, 1735732800000000000);
INSERT INTO "profile_runs" VALUES(1, '3c5e7a9b1d3f5a7c9e1b3d5f7a9c1e3b5d7f9a1c3e5b7d9f1a3c5e7b9d1f3a5c', 'cpu', 'complete', '4 points', 1735732800000000000, 1735732860000000000);
INSERT INTO "schema_version" VALUES(1, 1735689600000000000, 'base schema');
INSERT INTO "schema_version" VALUES(2, 1735689600000000000, 'profile runs');
INSERT INTO "schema_version" VALUES(3, 1735689600000000000, 'model memory');
INSERT INTO "schema_version" VALUES(4, 1735689600000000000, 'file digests');
COMMIT;
