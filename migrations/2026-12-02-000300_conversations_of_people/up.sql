-- Each person's conversations are their own: a conversation and a turn's row carry the
-- user who asked. Deleting a user deletes their conversations and rows. Rows written
-- before accounts (NULL) are given to the first admin when bor starts.

ALTER TABLE conversations ADD COLUMN user_id UUID REFERENCES users (id) ON DELETE CASCADE;
ALTER TABLE query_log ADD COLUMN user_id UUID REFERENCES users (id) ON DELETE CASCADE;

-- A person's list, newest first.
DROP INDEX conversations_updated_at_idx;
CREATE INDEX conversations_user_updated_at_idx ON conversations (user_id, updated_at DESC, id);
CREATE INDEX query_log_user_idx ON query_log (user_id) WHERE user_id IS NOT NULL;
-- The rows not given to anyone yet, looked for at every start: none once given.
CREATE INDEX query_log_unowned_idx ON query_log (id) WHERE user_id IS NULL;
