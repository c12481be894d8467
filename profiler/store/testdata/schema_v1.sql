-- Frozen gpuletd store database at schema version 1: migrations 0001..0001 plus testdata/seed_v1.sql.
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
    measured_at INTEGER NOT NULL,
    PRIMARY KEY (model_sha, device_type, size, batch)
) WITHOUT ROWID;
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
CREATE INDEX models_by_sha256 ON models (sha256);
INSERT INTO "device_types" VALUES('igniter-v100', 'shared/data/igniter/v100-mps-profile.jsonl', 'mps', '[10,20,40,50,60,80,100]', 16384.0, 1735732800000000000, 1735732800000000000);
INSERT INTO "events" VALUES(1, 1735740000000000000, 'reorganize', 'info', 'applied plan 1', '{"plan":"1"}');
INSERT INTO "events" VALUES(2, 1735740060000000000, 'executor_restart', 'warning', 'executor gpu0-40 exited', '{}');
INSERT INTO "interference_coefficients" VALUES(1, 'igniter-v100', 'paper-linear', '["l2_a","dram_a","l2_b","dram_b","const"]', '[0.01,0.002,0.003,0.004,1.0]', 0.91, 0.05, 0.03, 0.08, 0.11, 600, 1735736400000000000);
INSERT INTO "interference_samples" VALUES(1, 'igniter-v100', 'alexnet', 2, 20, NULL, 2.7610640856844304, 'resnet50', 2, 80, NULL, 3.5690385860655733, 'igniter-v100', 1735732800000000000);
INSERT INTO "latency_profiles" VALUES('08ebae3ebd32ea857cabe758f2cf2adab125006960605b5b241366d194e9b947', 'igniter-v100', 20, 1, 2.0732911841155173, NULL, NULL, 0, 1, 1735732800000000000);
INSERT INTO "latency_profiles" VALUES('08ebae3ebd32ea857cabe758f2cf2adab125006960605b5b241366d194e9b947', 'igniter-v100', 20, 2, 2.532432363344048, 2.9, 2.6, 37, 0, 1735732800000000000);
INSERT INTO "latency_profiles" VALUES('08ebae3ebd32ea857cabe758f2cf2adab125006960605b5b241366d194e9b947', 'igniter-v100', 40, 1, 1.3722677952069715, NULL, NULL, 0, 1, 1735732800000000000);
INSERT INTO "models" VALUES('alexnet', 1, '08ebae3ebd32ea857cabe758f2cf2adab125006960605b5b241366d194e9b947', '/var/lib/gpuletd/models/alexnet/1/model.onnx', 10.0, 32, 'onnxruntime_onnx', 1735732800000000000, 1735732800000000000);
INSERT INTO "models" VALUES('resnet50', 2, 'a0fcff33653ceb2e7e772c889f9d88babc3f132db114ba828dcd53968048e7c1', '/var/lib/gpuletd/models/resnet50/2/model.onnx', 95.0, 16, 'onnxruntime_onnx', 1735732800000000000, 1735819200000000000);
INSERT INTO "plans" VALUES(1, 1735740000000000000, 'gpulet-int', 'period', '{"schedulable":true,"gpus":[{"id":0,"gpulets":[{"size":40,"models":[{"name":"alexnet","batch":4,"rate":200,"latency_ms":2.1}]}]}],"unscheduled":{}}', 1);
INSERT INTO "schema_version" VALUES(1, 1735689600000000000, 'base schema');
INSERT INTO "utilisation" VALUES('08ebae3ebd32ea857cabe758f2cf2adab125006960605b5b241366d194e9b947', 'igniter-v100', 20, 1, 'dram', 10.075180111842773, 'igniter-v100', 1735732800000000000);
INSERT INTO "utilisation" VALUES('08ebae3ebd32ea857cabe758f2cf2adab125006960605b5b241366d194e9b947', 'igniter-v100', 20, 1, 'sm', NULL, 'unknown', 1735732800000000000);
COMMIT;
