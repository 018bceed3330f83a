DROP INDEX query_log_key_created_at_idx;
DROP INDEX query_log_user_created_at_idx;
ALTER TABLE query_log
    DROP COLUMN collection_ids,
    DROP COLUMN key_id,
    DROP COLUMN tokens_estimated,
    DROP COLUMN completion_tokens,
    DROP COLUMN prompt_tokens;
