-- One row per chat turn that ended `done` or `stopped` (none for errors).

CREATE TABLE query_log (
    id                BIGSERIAL PRIMARY KEY,
    -- Written once: a retried write of the same turn is ignored.
    turn_id           UUID        NOT NULL UNIQUE,
    created_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
    -- As sent by the client, trimmed.
    question          TEXT        NOT NULL,
    -- The visible answer; partial when the turn was stopped.
    answer            TEXT        NOT NULL,
    path              TEXT        NOT NULL CHECK (path IN ('grounded', 'deflected', 'undecided')),
    status            TEXT        NOT NULL CHECK (status IN ('done', 'stopped')),
    chat_model        TEXT        NOT NULL,
    rounds            INTEGER     NOT NULL CHECK (rounds >= 0),
    tool_calls        INTEGER     NOT NULL CHECK (tool_calls >= 0),
    retries           INTEGER     NOT NULL CHECK (retries >= 0),
    -- Characters of scaffolding removed from the model's replies.
    scaffold_stripped INTEGER     NOT NULL CHECK (scaffold_stripped >= 0),
    recovered         BOOLEAN     NOT NULL,
    -- The chunks given to the model: [{"document_id","title","chunk_id","score"}], best first.
    sources           JSONB       NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(sources) = 'array'),
    -- Milliseconds to the first visible answer text; NULL when there was none.
    first_token_ms    BIGINT      CHECK (first_token_ms >= 0),
    elapsed_ms        BIGINT      NOT NULL CHECK (elapsed_ms >= 0)
);

CREATE INDEX query_log_created_at_idx ON query_log (created_at);
