-- Typed state (issue 22): what handlers kept as JSON in the `kv` table
-- becomes one table per concept, and states become CHECK-constrained text.
-- Every kv row is copied, so an upgraded database keeps its pins, dispatch
-- markers, staging keys, fork bindings and published check runs; `kv` is
-- dropped at the end. SQLite cannot add a CHECK to a column: `sweeps` and
-- `jobs` are rebuilt with their rows (job ids and the AUTOINCREMENT
-- sequence are kept).

-- Sweeps: the state is one of four, and the dispatch marker (the
-- `sweep-dispatch-sent` namespace) is a column.
CREATE TABLE sweeps_new (
    sweep_id         TEXT PRIMARY KEY NOT NULL,
    repository       TEXT NOT NULL,
    installation_id  INTEGER,
    pr_number        INTEGER NOT NULL,
    head_sha         TEXT NOT NULL,
    base_sha         TEXT NOT NULL,
    primary_label    TEXT NOT NULL,
    modifiers        TEXT NOT NULL,
    matrix           TEXT NOT NULL,
    token_sha256     TEXT NOT NULL,
    expires_at       INTEGER NOT NULL,
    state            TEXT NOT NULL
        CHECK (state IN ('dispatched', 'running', 'completed', 'cancelled')),
    run_id           INTEGER,
    conclusion       TEXT,
    reason           TEXT,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    -- When GitHub accepted the dispatch request (or its run was found).
    dispatch_sent_at INTEGER
);
INSERT INTO sweeps_new
SELECT s.sweep_id, s.repository, s.installation_id, s.pr_number, s.head_sha,
       s.base_sha, s.primary_label, s.modifiers, s.matrix, s.token_sha256,
       s.expires_at, s.state, s.run_id, s.conclusion, s.reason, s.created_at,
       s.updated_at,
       (SELECT kv.updated_at FROM kv
         WHERE kv.namespace = 'sweep-dispatch-sent' AND kv.key = s.sweep_id)
FROM sweeps s;
DROP TABLE sweeps;
ALTER TABLE sweeps_new RENAME TO sweeps;
CREATE INDEX sweeps_pr ON sweeps (repository, pr_number, created_at);
CREATE INDEX sweeps_state ON sweeps (state);
CREATE INDEX sweeps_run ON sweeps (run_id);

-- Jobs: the state is one of four.
CREATE TABLE jobs_new (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    delivery_id   TEXT REFERENCES deliveries (delivery_id),
    kind          TEXT NOT NULL,
    serial_key    TEXT,
    payload       TEXT NOT NULL,
    state         TEXT NOT NULL CHECK (state IN ('pending', 'running', 'done', 'dead')),
    attempts      INTEGER NOT NULL DEFAULT 0,
    max_attempts  INTEGER NOT NULL,
    run_after     INTEGER NOT NULL,
    lease_token   INTEGER,
    lease_owner   TEXT,
    lease_until   INTEGER,
    last_error    TEXT,
    outcome       TEXT,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    finished_at   INTEGER
);
INSERT INTO jobs_new
SELECT id, delivery_id, kind, serial_key, payload, state, attempts, max_attempts,
       run_after, lease_token, lease_owner, lease_until, last_error, outcome,
       created_at, updated_at, finished_at
FROM jobs;
-- Keep the AUTOINCREMENT sequence: an id once handed out is never reused.
INSERT INTO sqlite_sequence (name, seq)
SELECT 'jobs_new', seq FROM sqlite_sequence
WHERE name = 'jobs' AND NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'jobs_new');
UPDATE sqlite_sequence SET seq = (SELECT seq FROM sqlite_sequence WHERE name = 'jobs')
WHERE name = 'jobs_new' AND EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'jobs');
DROP TABLE jobs;
ALTER TABLE jobs_new RENAME TO jobs;
CREATE INDEX jobs_claim ON jobs (state, run_after, id);
CREATE INDEX jobs_serial ON jobs (serial_key, id);
CREATE INDEX jobs_delivery ON jobs (delivery_id);

-- The run `/use` (or `/reuse-sweep-run`) pinned per PR: kv `pin`,
-- key `owner/name#N`, value `{"run": …, "by": …, "comment": …}`.
CREATE TABLE pins (
    repository          TEXT NOT NULL,
    pr_number           INTEGER NOT NULL,
    run_id              INTEGER NOT NULL,
    pinned_by           TEXT NOT NULL,
    -- The command's comment: a later command's pin wins.
    command_comment_id  INTEGER,
    updated_at          INTEGER NOT NULL,
    PRIMARY KEY (repository, pr_number)
);
INSERT INTO pins
SELECT substr(key, 1, instr(key, '#') - 1),
       CAST(substr(key, instr(key, '#') + 1) AS INTEGER),
       json_extract(value, '$.run'),
       COALESCE(json_extract(value, '$.by'), ''),
       json_extract(value, '$.comment'),
       updated_at
FROM kv
WHERE namespace = 'pin' AND instr(key, '#') > 1 AND json_valid(value)
  AND json_type(value, '$.run') = 'integer';

-- The head a fork PR's sweep is bound to: kv `fork-sweep-bound`, key
-- `owner/name#N`, value the SHA.
CREATE TABLE fork_bindings (
    repository  TEXT NOT NULL,
    pr_number   INTEGER NOT NULL,
    head_sha    TEXT NOT NULL,
    bound_at    INTEGER NOT NULL,
    PRIMARY KEY (repository, pr_number)
);
INSERT INTO fork_bindings
SELECT substr(key, 1, instr(key, '#') - 1),
       CAST(substr(key, instr(key, '#') + 1) AS INTEGER),
       value, updated_at
FROM kv
WHERE namespace = 'fork-sweep-bound' AND instr(key, '#') > 1;

-- The verdict check run published per commit (the digest of its content,
-- so a retried job does not publish it again): kv `verdict-check-run`,
-- key `owner/name@sha`.
CREATE TABLE verdict_check_runs (
    repository    TEXT NOT NULL,
    head_sha      TEXT NOT NULL,
    digest        TEXT NOT NULL,
    published_at  INTEGER NOT NULL,
    PRIMARY KEY (repository, head_sha)
);
INSERT INTO verdict_check_runs
SELECT substr(key, 1, instr(key, '@') - 1), substr(key, instr(key, '@') + 1),
       value, updated_at
FROM kv
WHERE namespace = 'verdict-check-run' AND instr(key, '@') > 1;

-- What a staging callback needs to edit the command's reply: kv
-- `staging-reply`, key the reply's comment id, value
-- `{"command_comment": …, "run": …}`.
CREATE TABLE staging_replies (
    reply_comment_id    INTEGER PRIMARY KEY NOT NULL,
    command_comment_id  INTEGER,
    run_id              INTEGER NOT NULL,
    updated_at          INTEGER NOT NULL
);
INSERT INTO staging_replies
SELECT CAST(key AS INTEGER), json_extract(value, '$.command_comment'),
       json_extract(value, '$.run'), updated_at
FROM kv
WHERE namespace = 'staging-reply' AND json_valid(value)
  AND json_type(value, '$.run') = 'integer' AND key GLOB '[0-9]*';

-- Staging requests sent, once per (run, attempt, reply): kv
-- `staging-sent`, key `run:attempt:reply`.
CREATE TABLE staging_sent (
    run_id            INTEGER NOT NULL,
    attempt           INTEGER NOT NULL,
    reply_comment_id  INTEGER NOT NULL,
    sent_at           INTEGER NOT NULL,
    PRIMARY KEY (run_id, attempt, reply_comment_id)
);
INSERT INTO staging_sent
SELECT CAST(substr(key, 1, instr(key, ':') - 1) AS INTEGER),
       CAST(substr(rest, 1, instr(rest, ':') - 1) AS INTEGER),
       CAST(substr(rest, instr(rest, ':') + 1) AS INTEGER),
       updated_at
FROM (SELECT key, substr(key, instr(key, ':') + 1) AS rest, updated_at
      FROM kv WHERE namespace = 'staging-sent')
WHERE instr(key, ':') > 1 AND instr(rest, ':') > 1;

-- Verifier runs per actor and PR, for the hourly allowance: kv
-- `verifier-runs`, key `owner/name#N:actor`, value a JSON array of times.
CREATE TABLE verifier_runs (
    repository  TEXT NOT NULL,
    pr_number   INTEGER NOT NULL,
    actor       TEXT NOT NULL,          -- lower-cased login
    at          INTEGER NOT NULL
);
CREATE INDEX verifier_runs_actor ON verifier_runs (repository, pr_number, actor, at);
INSERT INTO verifier_runs
SELECT substr(k.key, 1, instr(k.key, '#') - 1),
       CAST(substr(k.rest, 1, instr(k.rest, ':') - 1) AS INTEGER),
       substr(k.rest, instr(k.rest, ':') + 1),
       t.value
FROM (SELECT key, value, substr(key, instr(key, '#') + 1) AS rest
      FROM kv WHERE namespace = 'verifier-runs' AND json_valid(value)) k,
     json_each(k.value) t
WHERE instr(k.key, '#') > 1 AND instr(k.rest, ':') > 1 AND t.type = 'integer';

-- What authors wrote themselves (`docs/contracts.md` §3): kv `authored`,
-- key `owner/name#N`, value `{"commands": {id: [line, …]}, "signoffs":
-- {url: sha256}}`. A comment's command lines are kept newline-joined (a
-- command line holds no newline); an empty text is a comment whose author
-- removed its commands.
CREATE TABLE authored_commands (
    repository  TEXT NOT NULL,
    pr_number   INTEGER NOT NULL,
    comment_id  INTEGER NOT NULL,
    lines       TEXT NOT NULL,
    updated_at  INTEGER NOT NULL,
    PRIMARY KEY (repository, pr_number, comment_id)
);
INSERT INTO authored_commands
SELECT substr(k.key, 1, instr(k.key, '#') - 1),
       CAST(substr(k.key, instr(k.key, '#') + 1) AS INTEGER),
       CAST(c.key AS INTEGER),
       COALESCE((SELECT group_concat(l.value, char(10))
                   FROM (SELECT value FROM json_each(c.value) ORDER BY key) l), ''),
       k.updated_at
FROM (SELECT key, value, updated_at FROM kv
      WHERE namespace = 'authored' AND json_valid(value)) k,
     json_each(k.value, '$.commands') c
WHERE instr(k.key, '#') > 1 AND c.type = 'array';
CREATE TABLE authored_signoffs (
    repository   TEXT NOT NULL,
    pr_number    INTEGER NOT NULL,
    url          TEXT NOT NULL,
    body_sha256  TEXT NOT NULL,
    updated_at   INTEGER NOT NULL,
    PRIMARY KEY (repository, pr_number, url)
);
INSERT INTO authored_signoffs
SELECT substr(k.key, 1, instr(k.key, '#') - 1),
       CAST(substr(k.key, instr(k.key, '#') + 1) AS INTEGER),
       s.key, s.value, k.updated_at
FROM (SELECT key, value, updated_at FROM kv
      WHERE namespace = 'authored' AND json_valid(value)) k,
     json_each(k.value, '$.signoffs') s
WHERE instr(k.key, '#') > 1 AND s.type = 'text';

-- The last valid repository configuration, kept in force while the file
-- is invalid: kv `repo-config`, key the repository.
CREATE TABLE repo_configs (
    repository  TEXT PRIMARY KEY NOT NULL,
    text        TEXT NOT NULL,
    updated_at  INTEGER NOT NULL
);
INSERT INTO repo_configs
SELECT key, value, updated_at FROM kv WHERE namespace = 'repo-config';

-- Keys made once and shared by every replica (the dashboard's link key):
-- kv `dashboard` / `link-key`.
CREATE TABLE signing_keys (
    name        TEXT PRIMARY KEY NOT NULL,
    key_hex     TEXT NOT NULL,
    created_at  INTEGER NOT NULL
);
INSERT INTO signing_keys
SELECT 'dashboard-link', value, updated_at
FROM kv WHERE namespace = 'dashboard' AND key = 'link-key';

DROP TABLE kv;
