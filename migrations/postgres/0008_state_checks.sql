-- The remaining enum-as-text columns get CHECK constraints (issue 22):
-- `deliveries.outcome` (`DeliveryOutcome` in src/store) and
-- `sweep_jobs.status` (the three statuses the dispatch handler stores).
-- A value older code could not have written is first mapped the way the
-- code reads it today (an unknown job status is `queued`; an unknown
-- delivery outcome queued nothing), so adding the constraint never fails.
UPDATE deliveries SET outcome = 'ignored' WHERE outcome NOT IN ('queued', 'ignored');
ALTER TABLE deliveries ADD CONSTRAINT deliveries_outcome_check
    CHECK (outcome IN ('queued', 'ignored'));

UPDATE sweep_jobs SET status = 'queued'
WHERE status NOT IN ('queued', 'in_progress', 'completed');
ALTER TABLE sweep_jobs ADD CONSTRAINT sweep_jobs_status_check
    CHECK (status IN ('queued', 'in_progress', 'completed'));
