-- Typed state (issue 22): what handlers kept as JSON in the `kv` table
-- becomes one table per concept, and states become CHECK-constrained text.
-- Every kv row is copied, so an upgraded database keeps its pins, dispatch
-- markers, staging keys, fork bindings and published check runs; `kv` is
-- dropped at the end.

-- A kv value as JSON, or NULL when it is not JSON (never an error).
CREATE FUNCTION pg_temp.sg_jsonb(t TEXT) RETURNS JSONB LANGUAGE plpgsql AS $$
BEGIN
    RETURN t::jsonb;
EXCEPTION WHEN others THEN
    RETURN NULL;
END $$;

-- Sweeps: the state is one of four, and the dispatch marker (the
-- `sweep-dispatch-sent` namespace) is a column.
ALTER TABLE sweeps ADD CONSTRAINT sweeps_state_check
    CHECK (state IN ('dispatched', 'running', 'completed', 'cancelled'));
-- When GitHub accepted the dispatch request (or its run was found).
ALTER TABLE sweeps ADD COLUMN dispatch_sent_at BIGINT;
UPDATE sweeps SET dispatch_sent_at = kv.updated_at
FROM kv WHERE kv.namespace = 'sweep-dispatch-sent' AND kv.key = sweeps.sweep_id;

-- Jobs: the state is one of four.
ALTER TABLE jobs ADD CONSTRAINT jobs_state_check
    CHECK (state IN ('pending', 'running', 'done', 'dead'));

-- The run `/use` (or `/reuse-sweep-run`) pinned per PR: kv `pin`,
-- key `owner/name#N`, value `{"run": …, "by": …, "comment": …}`.
CREATE TABLE pins (
    repository          TEXT NOT NULL,
    pr_number           BIGINT NOT NULL,
    run_id              BIGINT NOT NULL,
    pinned_by           TEXT NOT NULL,
    -- The command's comment: a later command's pin wins.
    command_comment_id  BIGINT,
    updated_at          BIGINT NOT NULL,
    PRIMARY KEY (repository, pr_number)
);
INSERT INTO pins
SELECT split_part(key, '#', 1), split_part(key, '#', 2)::BIGINT,
       (v->>'run')::BIGINT, COALESCE(v->>'by', ''), (v->>'comment')::BIGINT, updated_at
FROM (SELECT key, pg_temp.sg_jsonb(value) AS v, updated_at FROM kv
      WHERE namespace = 'pin') k
WHERE split_part(key, '#', 1) <> '' AND split_part(key, '#', 2) ~ '^[0-9]+$'
  AND jsonb_typeof(v->'run') = 'number';

-- The head a fork PR's sweep is bound to: kv `fork-sweep-bound`, key
-- `owner/name#N`, value the SHA.
CREATE TABLE fork_bindings (
    repository  TEXT NOT NULL,
    pr_number   BIGINT NOT NULL,
    head_sha    TEXT NOT NULL,
    bound_at    BIGINT NOT NULL,
    PRIMARY KEY (repository, pr_number)
);
INSERT INTO fork_bindings
SELECT split_part(key, '#', 1), split_part(key, '#', 2)::BIGINT, value, updated_at
FROM kv
WHERE namespace = 'fork-sweep-bound'
  AND split_part(key, '#', 1) <> '' AND split_part(key, '#', 2) ~ '^[0-9]+$';

-- The verdict check run published per commit (the digest of its content,
-- so a retried job does not publish it again): kv `verdict-check-run`,
-- key `owner/name@sha`.
CREATE TABLE verdict_check_runs (
    repository    TEXT NOT NULL,
    head_sha      TEXT NOT NULL,
    digest        TEXT NOT NULL,
    published_at  BIGINT NOT NULL,
    PRIMARY KEY (repository, head_sha)
);
INSERT INTO verdict_check_runs
SELECT split_part(key, '@', 1), split_part(key, '@', 2), value, updated_at
FROM kv
WHERE namespace = 'verdict-check-run' AND split_part(key, '@', 1) <> '';

-- What a staging callback needs to edit the command's reply: kv
-- `staging-reply`, key the reply's comment id, value
-- `{"command_comment": …, "run": …}`.
CREATE TABLE staging_replies (
    reply_comment_id    BIGINT PRIMARY KEY NOT NULL,
    command_comment_id  BIGINT,
    run_id              BIGINT NOT NULL,
    updated_at          BIGINT NOT NULL
);
INSERT INTO staging_replies
SELECT key::BIGINT, (v->>'command_comment')::BIGINT, (v->>'run')::BIGINT, updated_at
FROM (SELECT key, pg_temp.sg_jsonb(value) AS v, updated_at FROM kv
      WHERE namespace = 'staging-reply') k
WHERE key ~ '^[0-9]+$' AND jsonb_typeof(v->'run') = 'number';

-- Staging requests sent, once per (run, attempt, reply): kv
-- `staging-sent`, key `run:attempt:reply`.
CREATE TABLE staging_sent (
    run_id            BIGINT NOT NULL,
    attempt           BIGINT NOT NULL,
    reply_comment_id  BIGINT NOT NULL,
    sent_at           BIGINT NOT NULL,
    PRIMARY KEY (run_id, attempt, reply_comment_id)
);
INSERT INTO staging_sent
SELECT split_part(key, ':', 1)::BIGINT, split_part(key, ':', 2)::BIGINT,
       split_part(key, ':', 3)::BIGINT, updated_at
FROM kv
WHERE namespace = 'staging-sent' AND key ~ '^[0-9]+:[0-9]+:[0-9]+$';

-- Verifier runs per actor and PR, for the hourly allowance: kv
-- `verifier-runs`, key `owner/name#N:actor`, value a JSON array of times.
CREATE TABLE verifier_runs (
    repository  TEXT NOT NULL,
    pr_number   BIGINT NOT NULL,
    actor       TEXT NOT NULL,          -- lower-cased login
    at          BIGINT NOT NULL
);
CREATE INDEX verifier_runs_actor ON verifier_runs (repository, pr_number, actor, at);
INSERT INTO verifier_runs
SELECT split_part(key, '#', 1),
       split_part(rest, ':', 1)::BIGINT,
       substr(rest, strpos(rest, ':') + 1),
       t.value::BIGINT
FROM (SELECT key, pg_temp.sg_jsonb(value) AS v,
             substr(key, strpos(key, '#') + 1) AS rest
      FROM kv WHERE namespace = 'verifier-runs') k,
     jsonb_array_elements_text(CASE WHEN jsonb_typeof(k.v) = 'array' THEN k.v ELSE '[]' END) t
WHERE split_part(key, '#', 1) <> '' AND rest ~ '^[0-9]+:.' AND t.value ~ '^[0-9]+$';

-- What authors wrote themselves (`docs/contracts.md` §3): kv `authored`,
-- key `owner/name#N`, value `{"commands": {id: [line, …]}, "signoffs":
-- {url: sha256}}`. A comment's command lines are kept newline-joined (a
-- command line holds no newline); an empty text is a comment whose author
-- removed its commands.
CREATE TABLE authored_commands (
    repository  TEXT NOT NULL,
    pr_number   BIGINT NOT NULL,
    comment_id  BIGINT NOT NULL,
    lines       TEXT NOT NULL,
    updated_at  BIGINT NOT NULL,
    PRIMARY KEY (repository, pr_number, comment_id)
);
INSERT INTO authored_commands
SELECT split_part(k.key, '#', 1), split_part(k.key, '#', 2)::BIGINT, c.key::BIGINT,
       COALESCE((SELECT string_agg(l.value, E'\n' ORDER BY l.n)
                   FROM jsonb_array_elements_text(c.value) WITH ORDINALITY AS l(value, n)), ''),
       k.updated_at
FROM (SELECT key, pg_temp.sg_jsonb(value) AS v, updated_at FROM kv
      WHERE namespace = 'authored') k,
     jsonb_each(CASE WHEN jsonb_typeof(k.v->'commands') = 'object'
                     THEN k.v->'commands' ELSE '{}' END) c
WHERE split_part(k.key, '#', 1) <> '' AND split_part(k.key, '#', 2) ~ '^[0-9]+$'
  AND c.key ~ '^[0-9]+$' AND jsonb_typeof(c.value) = 'array';
CREATE TABLE authored_signoffs (
    repository   TEXT NOT NULL,
    pr_number    BIGINT NOT NULL,
    url          TEXT NOT NULL,
    body_sha256  TEXT NOT NULL,
    updated_at   BIGINT NOT NULL,
    PRIMARY KEY (repository, pr_number, url)
);
INSERT INTO authored_signoffs
SELECT split_part(k.key, '#', 1), split_part(k.key, '#', 2)::BIGINT, s.key, s.value,
       k.updated_at
FROM (SELECT key, pg_temp.sg_jsonb(value) AS v, updated_at FROM kv
      WHERE namespace = 'authored') k,
     jsonb_each_text(CASE WHEN jsonb_typeof(k.v->'signoffs') = 'object'
                          THEN k.v->'signoffs' ELSE '{}' END) s
WHERE split_part(k.key, '#', 1) <> '' AND split_part(k.key, '#', 2) ~ '^[0-9]+$';

-- The last valid repository configuration, kept in force while the file
-- is invalid: kv `repo-config`, key the repository.
CREATE TABLE repo_configs (
    repository  TEXT PRIMARY KEY NOT NULL,
    text        TEXT NOT NULL,
    updated_at  BIGINT NOT NULL
);
INSERT INTO repo_configs
SELECT key, value, updated_at FROM kv WHERE namespace = 'repo-config';

-- Keys made once and shared by every replica (the dashboard's link key):
-- kv `dashboard` / `link-key`.
CREATE TABLE signing_keys (
    name        TEXT PRIMARY KEY NOT NULL,
    key_hex     TEXT NOT NULL,
    created_at  BIGINT NOT NULL
);
INSERT INTO signing_keys
SELECT 'dashboard-link', value, updated_at
FROM kv WHERE namespace = 'dashboard' AND key = 'link-key';

DROP TABLE kv;
