-- Profile runs, so that a run interrupted midway stays visible, and the run
-- each latency point came from.
CREATE TABLE profile_runs (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    model_sha   TEXT    NOT NULL CHECK (model_sha <> ''),
    device_type TEXT    NOT NULL CHECK (device_type <> ''),
    status      TEXT    NOT NULL CHECK (status IN ('running', 'complete', 'incomplete', 'failed')),
    message     TEXT    NOT NULL DEFAULT '',
    started_at  INTEGER NOT NULL,
    finished_at INTEGER -- NULL while running
);
CREATE INDEX profile_runs_by_model ON profile_runs (model_sha, device_type, id);
CREATE INDEX profile_runs_running ON profile_runs (status) WHERE status = 'running';

ALTER TABLE latency_profiles ADD COLUMN run_id INTEGER REFERENCES profile_runs (id) ON DELETE SET NULL;
CREATE INDEX latency_profiles_by_run ON latency_profiles (run_id);
