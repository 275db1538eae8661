-- The jobs of a dispatched sweep's run, from `workflow_job` and
-- `check_run` events: one row per job name (a re-run attempt replaces the
-- row), so the sweep's progress survives redelivery and reordering.
CREATE TABLE sweep_jobs (
    sweep_id    TEXT NOT NULL,
    name        TEXT NOT NULL,
    attempt     BIGINT NOT NULL,
    status      TEXT NOT NULL,          -- queued | in_progress | completed
    conclusion  TEXT,
    updated_at  BIGINT NOT NULL,
    PRIMARY KEY (sweep_id, name)
);
CREATE INDEX sweeps_run ON sweeps (run_id);
