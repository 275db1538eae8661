-- Shadow mode (`docs/shadow.md`): every write sweepgate would have sent to
-- GitHub, with its full body, in the order it would have been sent. A
-- comment or check run it "created" has the virtual id 2^52 + seq; an edit
-- names its `target`. Live mode never writes here, so switching modes
-- needs no migration.
CREATE TABLE shadow_writes (
    seq         BIGSERIAL PRIMARY KEY,
    repository  TEXT,
    pr_number   BIGINT,
    method      TEXT NOT NULL,
    path        TEXT NOT NULL,
    body        TEXT NOT NULL,
    kind        TEXT NOT NULL,
    target      BIGINT,
    at          BIGINT NOT NULL
);
CREATE INDEX shadow_writes_pr ON shadow_writes (repository, pr_number, seq);
