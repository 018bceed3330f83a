ALTER TABLE conversations DROP COLUMN pinned_at, DROP COLUMN archived_at;
