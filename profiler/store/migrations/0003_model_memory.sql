-- The host memory a model needs on a device type, measured when it was
-- profiled: the peak resident memory of an executor that held only it, after
-- its warm-up at every profiled batch. The planner bounds a CPU device's
-- gpu-lets by it.
CREATE TABLE model_memory (
    model_sha   TEXT    NOT NULL CHECK (model_sha <> ''),
    device_type TEXT    NOT NULL CHECK (device_type <> ''),
    resident_mb REAL    NOT NULL CHECK (resident_mb > 0),
    run_id      INTEGER REFERENCES profile_runs (id) ON DELETE SET NULL,
    measured_at INTEGER NOT NULL,
    PRIMARY KEY (model_sha, device_type)
);
