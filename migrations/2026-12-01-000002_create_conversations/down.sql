DROP INDEX query_log_conversation_idx;
ALTER TABLE query_log DROP COLUMN conversation_id;
DROP TABLE conversations;
