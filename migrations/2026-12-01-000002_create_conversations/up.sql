-- Conversations kept by the server: a titled sequence of turns (their query_log rows).

CREATE TABLE conversations (
    id         UUID        PRIMARY KEY,
    -- The first turn's question, shortened, until the conversation is renamed.
    title      TEXT        NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    -- The time of its newest turn.
    updated_at TIMESTAMPTZ NOT NULL
);

-- Listing newest first, and paging by `updated_at`.
CREATE INDEX conversations_updated_at_idx ON conversations (updated_at DESC, id);

-- Rows written before conversations existed keep a NULL conversation.
ALTER TABLE query_log
    ADD COLUMN conversation_id UUID REFERENCES conversations (id) ON DELETE CASCADE;

-- A conversation's turns in order: its history and its page.
CREATE INDEX query_log_conversation_idx ON query_log (conversation_id, created_at)
    WHERE conversation_id IS NOT NULL;
