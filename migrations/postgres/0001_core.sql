-- Deliveries as received (stored before the webhook is acknowledged) and
-- the durable job queue. Times are Unix milliseconds.
CREATE TABLE deliveries (
    delivery_id     TEXT PRIMARY KEY NOT NULL,
    event           TEXT NOT NULL,
    action          TEXT,
    repository      TEXT,
    installation_id BIGINT,
    pr_number       BIGINT,
    outcome         TEXT NOT NULL,          -- queued | ignored
    reason          TEXT,
    body            TEXT NOT NULL,
    received_at     BIGINT NOT NULL
);
CREATE INDEX deliveries_received ON deliveries (received_at);
CREATE INDEX deliveries_pr ON deliveries (repository, pr_number);

CREATE TABLE jobs (
    id            BIGSERIAL PRIMARY KEY,
    delivery_id   TEXT REFERENCES deliveries (delivery_id),
    kind          TEXT NOT NULL,
    serial_key    TEXT,
    payload       TEXT NOT NULL,
    state         TEXT NOT NULL,            -- pending | running | done | dead
    attempts      BIGINT NOT NULL DEFAULT 0,
    max_attempts  BIGINT NOT NULL,
    run_after     BIGINT NOT NULL,
    lease_token   BIGINT,
    lease_owner   TEXT,
    lease_until   BIGINT,
    last_error    TEXT,
    outcome       TEXT,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL,
    finished_at   BIGINT
);
CREATE INDEX jobs_claim ON jobs (state, run_after, id);
CREATE INDEX jobs_serial ON jobs (serial_key, id);
CREATE INDEX jobs_delivery ON jobs (delivery_id);

-- Simple key/value state for handlers (pinned runs, comment ids, ...).
CREATE TABLE kv (
    namespace   TEXT NOT NULL,
    key         TEXT NOT NULL,
    value       TEXT NOT NULL,
    updated_at  BIGINT NOT NULL,
    PRIMARY KEY (namespace, key)
);
