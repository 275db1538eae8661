-- Sweeps sweepgate dispatched (`dispatch` mode): the job matrix it serves to
-- the workflow, the run it started and what became of it.
CREATE TABLE sweeps (
    sweep_id        TEXT PRIMARY KEY NOT NULL,
    repository      TEXT NOT NULL,
    installation_id BIGINT,
    pr_number       BIGINT NOT NULL,
    head_sha        TEXT NOT NULL,
    base_sha        TEXT NOT NULL,
    primary_label   TEXT NOT NULL,
    modifiers       TEXT NOT NULL,          -- comma list
    matrix          TEXT NOT NULL,          -- JSON, grouped by job family
    token_sha256    TEXT NOT NULL,          -- of the matrix URL's token
    expires_at      BIGINT NOT NULL,
    state           TEXT NOT NULL,          -- dispatched | running | completed | cancelled
    run_id          BIGINT,
    conclusion      TEXT,
    reason          TEXT,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);
CREATE INDEX sweeps_pr ON sweeps (repository, pr_number, created_at);
CREATE INDEX sweeps_state ON sweeps (state);
