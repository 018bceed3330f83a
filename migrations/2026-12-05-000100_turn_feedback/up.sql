-- A person's rating of one of their turns (docs/PROTOCOL.md, "Feedback"): one per
-- turn, changed in place, gone with the turn (its conversation deleted).
CREATE TABLE turn_feedback (
    turn_id    UUID        PRIMARY KEY REFERENCES query_log (turn_id) ON DELETE CASCADE,
    user_id    UUID        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    rating     TEXT        NOT NULL CHECK (rating IN ('up', 'down')),
    reason     TEXT        CHECK (reason IN ('wrong_source', 'missing_source',
                                             'should_not_answer', 'wrong_answer', 'other')),
    comment    TEXT        NOT NULL DEFAULT '',
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX turn_feedback_updated_idx ON turn_feedback (updated_at DESC, turn_id);

-- The instance's evaluation set: for a turn, the passages an admin says should have
-- been found, and their documents (which outlive a new chunking).
CREATE TABLE feedback_expected (
    turn_id      UUID        PRIMARY KEY REFERENCES query_log (turn_id) ON DELETE CASCADE,
    chunk_ids    BIGINT[]    NOT NULL CHECK (array_position(chunk_ids, NULL) IS NULL),
    document_ids BIGINT[]    NOT NULL CHECK (array_position(document_ids, NULL) IS NULL),
    marked_by    UUID        REFERENCES users (id) ON DELETE SET NULL,
    marked_at    TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Each run of the evaluation set, with the settings it ran under.
CREATE TABLE eval_runs (
    id         BIGSERIAL   PRIMARY KEY,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    settings   JSONB       NOT NULL,
    queries    INTEGER     NOT NULL,
    measures   JSONB       NOT NULL
);
