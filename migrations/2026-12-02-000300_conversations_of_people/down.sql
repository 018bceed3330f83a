DROP INDEX query_log_unowned_idx;
DROP INDEX query_log_user_idx;
DROP INDEX conversations_user_updated_at_idx;
CREATE INDEX conversations_updated_at_idx ON conversations (updated_at DESC, id);
ALTER TABLE query_log DROP COLUMN user_id;
ALTER TABLE conversations DROP COLUMN user_id;
