-- The remaining enum-as-text columns get CHECK constraints (issue 22):
-- `deliveries.outcome` (`DeliveryOutcome` in src/store) and
-- `sweep_jobs.status` (the three statuses the dispatch handler stores).
-- SQLite cannot add a CHECK to a column, so both tables are rebuilt with
-- their rows and indexes. A value older code could not have written is
-- mapped the way the code reads it today (an unknown job status is
-- `queued`; an unknown delivery outcome queued nothing), so the upgrade
-- never stops on a row.

-- `jobs.delivery_id` references `deliveries`, so the table keeps its name
-- throughout (renaming a parent table rewrites its children's foreign
-- keys): the rows go to a copy, the table is dropped and made again, and
-- the rows come back. Dropping it counts a foreign key violation per job;
-- deferred to the commit, re-inserting each delivery clears its jobs' ones.
PRAGMA defer_foreign_keys = ON;

CREATE TABLE deliveries_copy AS SELECT * FROM deliveries;
DROP TABLE deliveries;
CREATE TABLE deliveries (
    delivery_id     TEXT PRIMARY KEY NOT NULL,
    event           TEXT NOT NULL,
    action          TEXT,
    repository      TEXT,
    installation_id INTEGER,
    pr_number       INTEGER,
    outcome         TEXT NOT NULL CHECK (outcome IN ('queued', 'ignored')),
    reason          TEXT,
    body            TEXT NOT NULL,
    received_at     INTEGER NOT NULL
);
INSERT INTO deliveries
SELECT delivery_id, event, action, repository, installation_id, pr_number,
       CASE WHEN outcome IN ('queued', 'ignored') THEN outcome ELSE 'ignored' END,
       reason, body, received_at
FROM deliveries_copy;
DROP TABLE deliveries_copy;
CREATE INDEX deliveries_received ON deliveries (received_at);
CREATE INDEX deliveries_pr ON deliveries (repository, pr_number);

CREATE TABLE sweep_jobs_new (
    sweep_id    TEXT NOT NULL,
    name        TEXT NOT NULL,
    attempt     INTEGER NOT NULL,
    status      TEXT NOT NULL CHECK (status IN ('queued', 'in_progress', 'completed')),
    conclusion  TEXT,
    updated_at  INTEGER NOT NULL,
    PRIMARY KEY (sweep_id, name)
);
INSERT INTO sweep_jobs_new
SELECT sweep_id, name, attempt,
       CASE WHEN status IN ('queued', 'in_progress', 'completed') THEN status ELSE 'queued' END,
       conclusion, updated_at
FROM sweep_jobs;
DROP TABLE sweep_jobs;
ALTER TABLE sweep_jobs_new RENAME TO sweep_jobs;
