-- Base schema of the gpuletd store. Times are INTEGER unix nanoseconds (UTC);
-- a NULL measurement means unknown, never zero.

-- Models registered from the model repository.
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
CREATE INDEX models_by_sha256 ON models (sha256);

-- Latency curves L(b,p): one row per (model file, device type, size, batch).
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
    measured_at INTEGER NOT NULL,
    PRIMARY KEY (model_sha, device_type, size, batch)
) WITHOUT ROWID;

-- Solo utilisation of the device at (b,p), one metric per row.
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

-- Measured co-locations of two models on one device.
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
CREATE INDEX interference_samples_by_device ON interference_samples (device_type, id);

-- Fitted interference models; the latest per (device_type, model) is used.
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
CREATE INDEX interference_coefficients_latest ON interference_coefficients (device_type, model, fitted_at, id);

-- Placement plans, as computed.
CREATE TABLE plans (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at  INTEGER NOT NULL,
    algorithm   TEXT    NOT NULL CHECK (algorithm <> ''),
    reason      TEXT    NOT NULL,
    plan        TEXT    NOT NULL CHECK (json_valid(plan)),
    schedulable INTEGER NOT NULL CHECK (schedulable IN (0, 1))
);

-- Events history; ids only grow, so a feed follows it by id.
CREATE TABLE events (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    at       INTEGER NOT NULL,
    kind     TEXT    NOT NULL CHECK (kind <> ''),
    severity TEXT    NOT NULL CHECK (severity IN ('debug', 'info', 'warning', 'error')),
    message  TEXT    NOT NULL,
    attrs    TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(attrs))
);
CREATE INDEX events_by_at ON events (at);

-- Device types: real GPUs, CPUs, and reference sets imported as emulated devices.
CREATE TABLE device_types (
    name         TEXT    PRIMARY KEY CHECK (name <> ''),
    source       TEXT    NOT NULL,
    partitioning TEXT    NOT NULL,
    sizes        TEXT    NOT NULL CHECK (json_valid(sizes)), -- JSON array of percents
    memory_mb    REAL             CHECK (memory_mb > 0),     -- NULL = unknown
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL
);
