-- What the bot did on each pull request (verdicts with their rows, lint
-- findings, commands, sweeps), for the dashboard's PR page. `detail` is JSON.
CREATE TABLE activity (
    id          BIGSERIAL PRIMARY KEY,
    repository  TEXT NOT NULL,
    pr_number   BIGINT NOT NULL,
    head_sha    TEXT,
    kind        TEXT NOT NULL,              -- verdict | lint | command | sweep | config
    summary     TEXT NOT NULL,
    detail      TEXT NOT NULL,
    at          BIGINT NOT NULL
);
CREATE INDEX activity_pr ON activity (repository, pr_number, id);
CREATE INDEX activity_at ON activity (at);
