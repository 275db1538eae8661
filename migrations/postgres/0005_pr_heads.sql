-- The head of every pull request as its `opened`, `synchronize` and
-- `reopened` deliveries (or a verifier that found none) recorded it: a
-- comment sign-off covers the last head recorded before the comment
-- (`docs/contracts.md` §3). `pushed_at` is GitHub's time of the change (the
-- payload's `updated_at`), comparable with a comment's `created_at`;
-- `received_at` is when sweepgate received it.
CREATE TABLE pr_heads (
    repository  TEXT NOT NULL,
    pr_number   BIGINT NOT NULL,
    head_sha    TEXT NOT NULL,
    pushed_at   BIGINT NOT NULL,
    received_at BIGINT NOT NULL,
    source      TEXT NOT NULL,          -- the delivery id, or `observed:<sha>`
    PRIMARY KEY (repository, pr_number, source)
);
CREATE INDEX pr_heads_pr ON pr_heads (repository, pr_number, pushed_at);
