-- What each turn took (docs/LIMITS.md, "Usage"): the tokens of its chat requests, as
-- the LLM server reported them or as bor estimated them; the API key it was asked with
-- (no reference: usage outlives a revoked key, and the column can name any credential
-- bor issues); the collections of the documents it was given.
ALTER TABLE query_log
    ADD COLUMN prompt_tokens     BIGINT   NOT NULL DEFAULT 0 CHECK (prompt_tokens >= 0),
    ADD COLUMN completion_tokens BIGINT   NOT NULL DEFAULT 0 CHECK (completion_tokens >= 0),
    ADD COLUMN tokens_estimated  BOOLEAN  NOT NULL DEFAULT false,
    ADD COLUMN key_id            UUID,
    ADD COLUMN collection_ids    BIGINT[] NOT NULL DEFAULT '{}';

-- Usage per person and per key over a period (limits seed their counters from it).
CREATE INDEX query_log_user_created_at_idx ON query_log (user_id, created_at);
CREATE INDEX query_log_key_created_at_idx ON query_log (key_id, created_at) WHERE key_id IS NOT NULL;
